"""An item a request reads is recognised (its keys parsed into an entity and ids) once, whoever asks about it: the
page that read it, the look-ahead walk, and the object built from it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from gateway.design.model import Entity, Model
from schema.model import MODEL
from tests.support.contract import course_id, student_id
from tests.support.gateway import Gateway, accounted

TABLE = MODEL.index(None)


class Recognitions:
    """The items the real ``Model.recognise`` was asked about, kept so that their identities stay theirs."""

    def __init__(self) -> None:
        self.items: list[Mapping[str, Any]] = []

    def by_key(self) -> Counter[tuple[str, str]]:
        """How many times an item with each table key was recognised: more than once where it was read again."""
        return Counter((item[TABLE.pk], item[TABLE.sk]) for item in self.items)

    def most_of_one_item(self) -> int:
        """The most times one item, as read, was recognised."""
        return max(Counter(map(id, self.items)).values())


@pytest.fixture
def recognised(monkeypatch: pytest.MonkeyPatch) -> Recognitions:
    """A spy around the real ``Model.recognise``."""
    seen = Recognitions()
    recognise = Model.recognise

    def counted(self: Model, item: Mapping[str, Any], partial: bool = False) -> tuple[Entity, dict[str, str]] | None:
        seen.items.append(item)
        return recognise(self, item, partial)

    monkeypatch.setattr(Model, "recognise", counted)
    return seen


def _answer(gateway: Gateway, recognised: Recognitions, query: str) -> tuple[Any, tuple[int, int]]:
    """The data of ``query``, and its (calls, rounds); what it recognised is in ``recognised`` afterwards."""
    recognised.items.clear()
    body = gateway.query(query)
    assert "errors" not in body, body["errors"]
    calls, rounds, _ = accounted(body)
    return body["data"], (calls, rounds)


def test_each_item_of_a_many_to_many_page_is_recognised_once(gateway: Gateway, recognised: Recognitions) -> None:
    # The roster's edges (read by the inverted index) and their students (read by BatchGetItem), as in #6.
    query = (
        f'{{ course(courseId: "{course_id(1)}") {{ title '
        "students(first: 20) { edges { grade node { name } } } } }"
    )
    data, cost = _answer(gateway, recognised, query)
    students = [edge["node"]["name"] for edge in data["course"]["students"]["edges"]]
    assert len(students) == 20 and all(students)
    assert cost == (3, 2)  # GetItem ∥ Query, then one BatchGetItem
    keys = recognised.by_key()
    assert keys[(f"CRS#{course_id(1)}", "METADATA")] == 1
    assert [keys[(f"STU#{student_id(n)}", "PROFILE")] for n in range(1, 21)] == [1] * 20
    enrolments = [key for key in keys if key[1].startswith("ENROLL#")]
    assert len(enrolments) >= 20
    assert set(keys.values()) == {1}, keys


def test_an_item_whose_relations_the_walk_starts_is_recognised_once(gateway: Gateway, recognised: Recognitions) -> None:
    # The walk needs each course's ids to start its students' page: it recognises the course, and the object built
    # from the course is given what the walk found.
    query = (
        f'{{ student(studentId: "{student_id(1)}") {{ name courses(first: 3, order: ASCENDING) '
        "{ nodes { courseId title students(first: 2) { nodes { studentId name } } } } } }"
    )
    data, cost = _answer(gateway, recognised, query)
    keys = recognised.by_key()
    courses = data["student"]["courses"]["nodes"]
    assert len(courses) == 3 and all(course["students"]["nodes"] for course in courses)
    assert sum(len(course["students"]["nodes"]) for course in courses) > 3
    # The student ∥ its enrolments (read ascending, its profile does not head them); its courses ∥ their 3 rosters;
    # the students not read yet.
    assert cost == (7, 3)
    for course in courses:
        assert keys[(f"CRS#{course['courseId']}", "METADATA")] == 1
        for student in course["students"]["nodes"]:
            assert keys[(f"STU#{student['studentId']}", "PROFILE")] == 1
    # An enrolment is read twice (with the student's courses, and in its course's roster): once recognised each time.
    assert recognised.most_of_one_item() == 1, keys
