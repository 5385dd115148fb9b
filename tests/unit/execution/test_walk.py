"""The walk against a table held in a dict: the rounds and requests it asks for are the ones the estimate counts."""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from graphql import OperationDefinitionNode, get_variable_values, parse

from gateway.design.keys import Ids
from gateway.design.model import Collection, Entity, Item, Model
from gateway.execution import queries
from gateway.execution.cost import Budget, Planner
from gateway.execution.selection import Scope
from gateway.execution.walk import ItemKey, Walk
from gateway.surface.toolkit import graphql_schema
from schema import GRAPH, MODEL

SCHEMA = graphql_schema(GRAPH.schema)
BUDGET = Budget()


@dataclass(frozen=True)
class Member:
    ids: dict[str, str]
    item: Item


@dataclass(frozen=True)
class Page:
    members: list[Member]


@dataclass
class Table:
    """A ``Source`` answering from a dict of items and pages, writing down each request by round."""

    model: Model
    items: dict[ItemKey, Item] = field(default_factory=dict)
    pages: dict[tuple[str, tuple[tuple[str, str], ...]], list[Ids]] = field(default_factory=dict)
    rounds: list[list[tuple[str, ...]]] = field(default_factory=list)
    recognised: list[str] = field(default_factory=list)
    """The entity of each item the walk asked the ids of."""
    _read: dict[ItemKey, Item | None] = field(default_factory=dict)

    def put(self, entity: Entity, ids: Ids, **attributes: Any) -> None:
        item = self.model.item(entity, ids, attributes)
        self.items[self._key(item)] = item

    def collect(self, collection: Collection, parent_ids: Ids, *members: Ids) -> None:
        self.pages[(collection.name, tuple(sorted(parent_ids.items())))] = list(members)

    def _key(self, item: Item) -> ItemKey:
        table = self.model.index(None)
        return item[table.pk], item[table.sk]

    def cached(self, key: ItemKey) -> tuple[bool, Item | None]:
        return key in self._read, self._read.get(key)

    def permits_item(self, entity: Entity, ids: Ids) -> bool:
        return True

    def permits_query(self, collection: Collection, ids: Ids) -> bool:
        return True

    def visible(self, entity: Entity, item: Item) -> bool:
        return True

    def ids_of(self, entity: Entity, item: Item) -> Ids | None:
        self.recognised.append(entity.name)
        return self.model.ids_of(entity, item)

    async def read(self, keys: list[tuple[ItemKey, Entity, Ids]]) -> None:
        self.rounds[-1].append(("BatchGetItem", *sorted(entity.name for _, entity, _ in keys)))
        for given, entity, ids in keys:
            key = self._key(self.model.item(entity, dict(ids), {}))
            assert given == key, (given, key)
            self._read[key] = self.items.get(key)

    async def page(self, collection: Collection, parent_ids: Ids, window: queries.Window) -> Page:
        self.rounds[-1].append(("Query", collection.name))
        return self._page(collection, parent_ids, window.size)

    async def parent_and_page(self, entity: Entity, ids: Ids, collection: Collection, window: queries.Window) -> Page:
        self.rounds[-1].append(("Query", entity.name, collection.name))
        key = self._key(self.model.item(entity, dict(ids), {}))
        self._read[key] = self.items.get(key)
        return self._page(collection, ids, window.size)

    def _page(self, collection: Collection, parent_ids: Ids, size: int) -> Page:
        members = self.pages.get((collection.name, tuple(sorted(parent_ids.items()))), [])[:size]
        page = Page(
            [Member(dict(ids), self.items[self._key(self.model.item(collection.member, ids, {}))]) for ids in members]
        )
        for member in page.members:
            self._read[self._key(member.item)] = member.item
        return page

    async def gather(self, work: list[Coroutine[Any, Any, None]]) -> None:
        self.rounds.append([])
        for one in work:
            await one


def _student_with_two_courses() -> Table:
    table = Table(MODEL)
    student, course, enrollment = (MODEL.entity(name) for name in ("Student", "Course", "Enrollment"))
    assert student is not None and course is not None and enrollment is not None
    table.put(student, {"studentId": "s1"}, name="Ada")
    for course_id in ("c1", "c2"):
        table.put(course, {"courseId": course_id}, title=course_id.upper())
        table.put(enrollment, {"studentId": "s1", "courseId": course_id})
    courses = next(c for c in MODEL.collections if c.name == "Student.courses")
    table.collect(
        courses, {"studentId": "s1"}, {"studentId": "s1", "courseId": "c1"}, {"studentId": "s1", "courseId": "c2"}
    )
    return table


QUERY = '{ student(studentId: "s1") { name courses(first: 2) { nodes { grade course { title } } } } }'


async def _walked(table: Table, query: str) -> Walk:
    document = parse(query)
    operation = document.definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    variables = get_variable_values(SCHEMA, operation.variable_definitions or (), {})
    assert not isinstance(variables, list)
    walk = Walk(
        table,
        Scope(SCHEMA, {}, variables),
        default_page_size=BUDGET.default_page_size,
        max_page_size=BUDGET.max_page_size,
    )
    assert SCHEMA.query_type is not None
    walk.roots(SCHEMA.query_type, [operation.selection_set])
    await walk.run()
    return walk


async def test_a_student_with_a_page_of_courses_is_one_query_and_the_courses_one_batch_in_the_next_round() -> None:
    table = _student_with_two_courses()
    await _walked(table, QUERY)
    assert [sorted(requests) for requests in table.rounds] == [
        [("Query", "Student", "Student.courses")],
        [("BatchGetItem", "Course", "Course")],
    ]


async def test_the_walk_recognises_only_the_items_whose_selection_starts_a_read() -> None:
    table = _student_with_two_courses()
    await _walked(table, QUERY)
    # The student's courses start from its ids; the courses select nothing that starts a read.
    assert table.recognised == ["Student"]
    table = _student_with_two_courses()
    courses_with_students = (
        '{ student(studentId: "s1") { courses(first: 2) { nodes { title students(first: 1) { nodes { name } } } } } }'
    )
    await _walked(table, courses_with_students)
    assert sorted(table.recognised) == ["Course", "Course", "Student"]


async def test_what_the_walk_asks_of_a_full_table_is_what_the_estimate_counts() -> None:
    table = _student_with_two_courses()
    walk = await _walked(table, QUERY)
    estimate = Planner(SCHEMA, MODEL, BUDGET).check(parse(QUERY), None, None, enforce=False)
    assert estimate is not None
    asked = [request for requests in table.rounds for request in requests]
    assert (estimate.calls, estimate.rounds) == (len(asked), len(table.rounds))
    assert [(p.operation, p.round) for p in estimate.requests] == [(p.operation, p.round) for p in walk.planned]


async def test_nothing_is_asked_under_a_student_that_is_not_there() -> None:
    table = Table(MODEL)
    await _walked(table, '{ student(studentId: "nobody") { name } }')
    assert table.rounds == [[("BatchGetItem", "Student")]]
