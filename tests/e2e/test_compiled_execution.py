"""Compiled execution answers what graphql-core's interpretation answers, byte for byte, errors and paths included.

Each design is served twice over one table: compiled (the default) and with ``compiled_execution`` off. Generated
operations (aliases, nested named fragments, inline fragments on interfaces, ``__typename``, ``@include``/``@skip``
by variables, pages, global ids good, missing, malformed and of items that do not decode) go to both, and the
JSON of ``{data, errors}`` must be the same text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import boto3
import graphql.execution.executor as graphql_executor
import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    get_named_type,
    is_leaf_type,
    is_required_argument,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strawberry.schema import schema_converter
from strawberry.types.field import StrawberryField

import gateway.surface.compiled as compiled_module
from gateway.design import global_ids
from gateway.design.declaration import Declaration
from gateway.surface.extensions import GatewaySchema
from gateway.surface.graph import build
from gateway.surface.toolkit import graphql_schema
from schema.business import BUSINESS
from schema.demo import DEMO
from schema.giant import GIANT
from schema.library import LIBRARY
from schema.orders import ORDERS
from tests.support.gateway import Gateway
from tests.support.live import PROJECTS, listening, put_project, put_workspace, socket

DESIGNS = {"demo": DEMO, "orders": ORDERS, "library": LIBRARY, "business": BUSINESS, "giant": GIANT}


@dataclass
class Twin:
    """One design's table served compiled and interpreted, with the global ids of its items."""

    compiled: Gateway
    interpreted: Gateway
    schema: GraphQLSchema
    ids: list[str]
    broken: list[str] = field(default_factory=list)
    """Global ids of items rewritten with plain boto3 so that their attributes are of the wrong types."""

    def both(self, query: str, variables: dict[str, Any] | None = None) -> tuple[str, str]:
        """The compiled gateway's answer and the interpreted one's. The compiled one is asked twice: first through
        strawberry's per-request machinery, then as a kept document's query answered without it
        (``gateway/surface/kept.py``); the two must be the same text."""
        first = _answer(self.compiled, query, variables)
        kept = _answer(self.compiled, query, variables)
        assert kept == first, query
        return kept, _answer(self.interpreted, query, variables)


def _answer(gateway: Gateway, query: str, variables: dict[str, Any] | None) -> str:
    response = gateway.http.post("/graphql", json={"query": query, "variables": variables or {}})
    body = response.json()
    answer = {key: body[key] for key in ("data", "errors") if key in body}
    # A masked error quotes its request's own id: the one thing two runs of a request cannot share.
    return re.sub(r'"requestId": "[^"]*"', '"requestId": "-"', json.dumps(answer))


@pytest.fixture(scope="module")
def twins(
    served: Callable[..., Gateway], gateway_factory: Callable[..., Gateway], endpoint: str
) -> Iterator[dict[str, Twin]]:
    with ExitStack() as stack:
        made = {}
        for name, declaration in DESIGNS.items():
            compiled = served(declaration, seeded=True)
            interpreted = stack.enter_context(
                gateway_factory(compiled.table, declaration=declaration, compiled_execution=False)
            )
            schema = graphql_schema(build(declaration).schema)
            made[name] = Twin(compiled, interpreted, schema, _ids(declaration))
            made[name].broken = _break(endpoint, compiled.table, declaration)
        yield made


def _items(declaration: Declaration) -> list[dict[str, Any]]:
    assert declaration.seed is not None
    return list(declaration.seed())


def _ids(declaration: Declaration) -> list[str]:
    """The global ids of the seed's items, in order (at most 40, of every entity)."""
    model = declaration.model
    out: list[str] = []
    for item in _items(declaration):
        recognised = model.recognise(item)
        if recognised is not None and not recognised[0].internal:
            out.append(global_ids.encode(*recognised))
    by_entity: dict[str, list[str]] = {}
    for one in out:
        by_entity.setdefault(global_ids.decode(model, one, "id")[0].name, []).append(one)
    return [one for ids in by_entity.values() for one in ids[:8]]


def _break(endpoint: str, table: str, declaration: Declaration) -> list[str]:
    """Rewrite one item of each of two entities with every plain attribute of the wrong type, as another tool
    might; their global ids."""
    model = declaration.model
    resource = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )
    done: dict[str, str] = {}
    for item in _items(declaration):
        recognised = model.recognise(item)
        if recognised is None or recognised[0].internal or recognised[0].name in done or len(done) == 2:
            continue
        entity, ids = recognised
        bad = {
            name: (Decimal(7) if isinstance(value, str) else "seven")
            for name, value in item.items()
            if name in entity.attributes
        }
        resource.Table(table).put_item(Item={**item, **bad})
        done[entity.name] = global_ids.encode(entity, ids)
    return list(done.values())


# --- generated operations -------------------------------------------------------------------------------------


class _Writer:
    """Builds one operation from draws: the selection, the named fragments it spreads, the variables it declares."""

    def __init__(self, draw: Callable[..., Any], schema: GraphQLSchema) -> None:
        self.draw = draw
        self.schema = schema
        self.fragments: list[str] = []
        self.counter = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def directive(self) -> str:
        return self.draw(
            st.sampled_from(
                ["", "", "", " @include(if: $yes)", " @skip(if: $yes)", " @include(if: $no)", " @skip(if: false)"]
            )
        )

    def selection(self, type_: Any, depth: int, abstract: bool = False) -> str:
        """A selection set on ``type_``; under an abstract parent every field is aliased, so that fields of the same
        name and other types on two possible types never overlap."""
        if isinstance(type_, GraphQLInterfaceType | GraphQLUnionType):
            return self.abstract(type_, depth)
        assert isinstance(type_, GraphQLObjectType)
        usable = [
            (name, one)
            for name, one in type_.fields.items()
            if not any(is_required_argument(argument) for argument in one.args.values())
            and (depth > 0 or is_leaf_type(get_named_type(one.type)))
        ]
        if not usable:
            return "__typename"
        chosen = self.draw(st.lists(st.sampled_from(usable), min_size=1, max_size=4, unique_by=lambda one: one[0]))
        parts = []
        if self.draw(st.booleans()):
            parts.append("__typename")
        for name, one in chosen:
            parts.append(self.field(name, one, depth, abstract))
        body = " ".join(parts)
        if self.draw(st.integers(0, 3)) == 0:
            fragment = self.name("F")
            self.fragments.append(f"fragment {fragment} on {type_.name} {{ {body} }}")
            return f"...{fragment}{self.directive()}"
        if self.draw(st.integers(0, 4)) == 0:
            return f"... {self.directive()} {{ {body} }}"
        return body

    def field(self, name: str, one: Any, depth: int, abstract: bool) -> str:
        named = get_named_type(one.type)
        arguments = []
        if "first" in one.args:
            first = self.draw(st.sampled_from([None, 0, 1, 2, 5]))
            if first is not None:
                arguments.append(f"first: {first}")
            elif "last" in one.args and self.draw(st.booleans()):
                arguments.append("last: 2")
        if "order" in one.args and self.draw(st.booleans()):
            order = get_named_type(one.args["order"].type)
            if isinstance(order, GraphQLEnumType):
                arguments.append(f"order: {self.draw(st.sampled_from(sorted(order.values)))}")
        composite = not is_leaf_type(named)
        alias = abstract or composite or self.draw(st.integers(0, 3)) == 0
        text = (self.name("a") + ": " if alias else "") + name
        if arguments:
            text += "(" + ", ".join(arguments) + ")"
        text += self.directive()
        if composite:
            text += " { " + self.selection(named, depth - 1) + " }"
        return text

    def abstract(self, type_: GraphQLInterfaceType | GraphQLUnionType, depth: int) -> str:
        possible = sorted(self.schema.get_possible_types(type_), key=lambda one: one.name)
        chosen = self.draw(st.lists(st.sampled_from(possible), min_size=1, max_size=3, unique_by=lambda one: one.name))
        parts = ["__typename"]
        if isinstance(type_, GraphQLInterfaceType) and "id" in type_.fields:
            parts.append(self.name("a") + ": id")
        for one in chosen:
            parts.append(f"... on {one.name}{self.directive()} {{ {self.selection(one, depth, abstract=True)} }}")
        return " ".join(parts)


@st.composite
def operations(draw: Callable[..., Any], twin: Twin) -> tuple[str, dict[str, Any]]:
    writer = _Writer(draw, twin.schema)
    node = twin.schema.get_type("Node")
    pool = [*twin.ids, *twin.broken, "bm90OmFuOmlk", "not an id"]
    roots = []
    variables: dict[str, Any] = {"yes": draw(st.booleans()), "no": draw(st.booleans())}
    for _ in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            alias = writer.name("n")
            roots.append(f"{alias}: node(id: $id){writer.directive()} {{ {writer.abstract(node, 2)} }}")  # type: ignore[arg-type]
            variables["id"] = draw(st.sampled_from(pool))
        else:
            ids = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5))
            listed = ", ".join(json.dumps(one) for one in ids)
            roots.append(f"{writer.name('m')}: nodes(ids: [{listed}]) {{ {writer.abstract(node, 2)} }}")  # type: ignore[arg-type]
    declared = "$yes: Boolean!, $no: Boolean!" + (", $id: ID!" if "id" in variables else "")
    query = f"query Q({declared}) {{ {' '.join(roots)} }} " + " ".join(writer.fragments)
    return query, variables


@pytest.mark.parametrize("design", list(DESIGNS))
def test_generated_operations_answer_the_same_compiled_and_interpreted(twins: dict[str, Twin], design: str) -> None:
    twin = twins[design]
    seen = {"data": 0, "errors": 0}

    @settings(
        max_examples=30,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        query, variables = data.draw(operations(twin))
        compiled, interpreted = twin.both(query, variables)
        assert compiled == interpreted, query
        answer = json.loads(compiled)
        seen["data"] += answer.get("data") is not None
        seen["errors"] += "errors" in answer

    check()
    # The draws reach both answers with data and answers with errors, so the comparison is not of refusals only.
    assert seen["data"] > 10 and seen["errors"] > 0, seen


# --- each feature by name ---------------------------------------------------------------------------------------

WORKSPACE = "V29ya3NwYWNlI3dzLTE"  # the global id of Workspace ws-1
FEATURES = {
    "aliases": '{ a: workspace(workspaceId: "ws-1") { b: displayName c: displayName workspaceId } }',
    "nested_named_fragments": """{ workspace(workspaceId: "ws-1") { ...W } }
        fragment W on Workspace { ...Named projects(first: 2) { nodes { ...P } } }
        fragment Named on Workspace { displayName }  fragment P on Project { title ...Named2 }
        fragment Named2 on Project { projectId }""",
    "inline_fragments_on_an_interface_and_typename": f"""{{ nodes(ids: ["{WORKSPACE}", "V29ya3NwYWNlI25vbmU"]) {{
        __typename id ... on Workspace {{ displayName }} ... on Project {{ title status }} }} }}""",
    "enums_and_nulls": """{ workspace(workspaceId: "ws-1") { region
        projects(first: 5) { nodes { status createdBy } } } }""",
    "connections_with_edges_cursors_and_page_info": """{ workspace(workspaceId: "ws-1") {
        projects(first: 3, order: ASCENDING) { totalCount edges { cursor node { id projectId } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor readLimitReached } } } }""",
    "global_ids_good_missing_and_malformed": f"""{{ good: node(id: "{WORKSPACE}") {{ id __typename }}
        missing: node(id: "V29ya3NwYWNlI25vbmU") {{ id }} }}""",
    "a_bad_id_argument_errors_at_its_field": f"""{{ a: node(id: "{WORKSPACE}") {{ id }}
        b: node(id: "not an id") {{ id }} }}""",
}


@pytest.mark.parametrize("feature", list(FEATURES))
def test_each_feature_answers_as_graphql_core_does(twins: dict[str, Twin], feature: str) -> None:
    compiled, interpreted = twins["demo"].both(FEATURES[feature])
    assert compiled == interpreted
    assert json.loads(compiled)["data"] is not None


def test_include_and_skip_follow_each_request_variables(twins: dict[str, Twin]) -> None:
    """One document, one plan per combination of its flags: each request gets the fields its values keep."""
    query = """query($a: Boolean!, $b: Boolean!) { workspace(workspaceId: "ws-1") {
        displayName @include(if: $a) region @skip(if: $b) ... @include(if: $b) { workspaceId } } }"""
    answers = set()
    for a in (True, False):
        for b in (True, False):
            compiled, interpreted = twins["demo"].both(query, {"a": a, "b": b})
            assert compiled == interpreted
            answers.add(compiled)
    assert len(answers) == 4


def test_shapes_and_dates_answer_as_graphql_core_does(twins: dict[str, Twin]) -> None:
    query = """query($id: ID!) { patron(patronId: $id) { name addresses { label street city state zip }
        card { number expires interests } } }"""
    compiled, interpreted = twins["library"].both(query, {"id": "ada"})
    assert compiled == interpreted
    assert json.loads(compiled)["data"]["patron"]["card"]["expires"]


def test_an_error_in_the_middle_of_a_list_propagates_its_null_as_graphql_core_does(
    twins: dict[str, Twin], endpoint: str
) -> None:
    """A project another tool wrote with a status the declaration does not know fails to serve: the error stands
    at its path and its null goes up to the nearest nullable field, the same either way."""
    table = twins["demo"].compiled.table
    resource = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )
    resource.Table(table).put_item(
        Item={"PK": "WS#ws-9", "SK": "PROJ#2026-0002", "title": "Odd", "status": "NOPE", "createdBy": "x"}
    )
    resource.Table(table).put_item(Item={"PK": "WS#ws-9", "SK": "PROJ#2026-0001", "title": "Fine", "status": "ACTIVE"})
    query = """{ workspace: projects(workspaceId: "ws-9") { nodes { title status } }
        edges: projects(workspaceId: "ws-9") { edges { cursor node { title status } } }
        one: project(workspaceId: "ws-9", projectId: "2026-0002") { title status } }"""
    compiled, interpreted = twins["demo"].both(query)
    assert compiled == interpreted
    assert "errors" in json.loads(compiled), compiled


def _executions(gateway: Gateway) -> dict[str, float]:
    text = gateway.http.get("/metrics").text
    found = re.findall(r'^tablegraph_graphql_executions_total\{mode="(\w+)"\} ([0-9.e+]+)$', text, re.MULTILINE)
    return {mode: float(value) for mode, value in found}


def _moved(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {mode: after[mode] - before.get(mode, 0.0) for mode in after if after[mode] != before.get(mode, 0.0)}


def test_metrics_count_operations_executed_compiled_and_interpreted(twins: dict[str, Twin]) -> None:
    demo = twins["demo"]
    query = '{ workspace(workspaceId: "ws-1") { displayName } }'
    before = _executions(demo.compiled)
    demo.compiled.http.post("/graphql", json={"query": query})
    demo.compiled.http.post("/graphql", json={"query": query})
    assert _moved(before, after := _executions(demo.compiled)) == {"compiled": 2.0}
    # Introspection is left to graphql-core, as is every operation with compilation off.
    demo.compiled.http.post("/graphql", json={"query": "{ __schema { queryType { name } } }"})
    assert _moved(after, after_introspection := _executions(demo.compiled)) == {"interpreted": 1.0}
    demo.interpreted.http.post("/graphql", json={"query": query})
    assert _moved(after_introspection, _executions(demo.interpreted)) == {"interpreted": 1.0}


def test_a_document_is_compiled_by_its_first_request_only(
    twins: dict[str, Twin], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spy around graphql-core's collection of subfields: the compiled gateway collects a document's nested
    selections for its first request and never again; interpreted, every request collects them anew."""
    collected = {"count": 0}
    real = graphql_executor.collect_subfields

    def spy(*args: Any, **kwargs: Any) -> Any:
        collected["count"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(graphql_executor, "collect_subfields", spy)
    query = '{ workspace(workspaceId: "ws-2") { displayName projects(first: 4) { nodes { title } } } }'
    counts = {}
    for name, gateway in (("compiled", twins["demo"].compiled), ("interpreted", twins["demo"].interpreted)):
        for request in ("first", "second"):
            collected["count"] = 0
            body = gateway.http.post("/graphql", json={"query": query}).json()
            assert body["data"]["workspace"]["projects"]["nodes"]
            counts[name, request] = collected["count"]
    assert counts["compiled", "first"] == counts["interpreted", "first"] > 0
    assert counts["compiled", "second"] == 0
    assert counts["interpreted", "second"] == counts["interpreted", "first"]


def test_objects_lists_leaves_and_plain_resolvers_take_no_per_object_wrapping_compiled(
    twins: dict[str, Twin], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spies around graphql-core's object completion, strawberry's read of a field (``get_result``) and its
    argument conversion (``get_arguments``): compiled, none of them runs per object — objects and lists are
    completed by the plan, leaves read their attribute, a resolver without arguments (a project's workspace) and a
    nested connection's (which reads its arguments from the operation) are called directly — so their counts do
    not grow with the page; interpreted, each grows with it. A nested connection's page size in a variable is
    coerced once per request, not once per object (a spy around the compiled executor's ``get_argument_values``).
    The answers are the same both ways."""
    counts = {"objects": 0, "reads": 0, "conversions": 0, "arguments": 0}
    _spy(monkeypatch, graphql_executor.Executor, "complete_object_value", counts, "objects")
    _spy(monkeypatch, StrawberryField, "get_result", counts, "reads")
    _spy(monkeypatch, schema_converter, "get_arguments", counts, "conversions")
    _spy(monkeypatch, compiled_module, "get_argument_values", counts, "arguments")
    query = (
        'query($n: Int!, $one: Int!) { workspace(workspaceId: "ws-2") { displayName projects(first: $n) '
        "{ nodes { title status workspace { displayName projects(first: $one) { nodes { title } } } } "
        "pageInfo { hasNextPage } } } }"
    )
    seen: dict[tuple[str, int], dict[str, int]] = {}
    answers: dict[tuple[str, int], str] = {}
    for name, gateway in (("compiled", twins["demo"].compiled), ("interpreted", twins["demo"].interpreted)):
        for page in (2, 4):
            _answer(gateway, query, {"n": page, "one": 1})  # the document's first request compiles it
            counts.update(objects=0, reads=0, conversions=0, arguments=0)
            answers[name, page] = _answer(gateway, query, {"n": page, "one": 1})
            seen[name, page] = dict(counts)
    for page in (2, 4):
        assert answers["compiled", page] == answers["interpreted", page]
        assert len(json.loads(answers["compiled", page])["data"]["workspace"]["projects"]["nodes"]) == page
    assert seen["compiled", 2] == seen["compiled", 4]
    assert seen["compiled", 4]["objects"] == 0
    assert seen["compiled", 4]["arguments"] > 0
    for kind in ("objects", "reads", "conversions"):
        assert seen["interpreted", 4][kind] > seen["interpreted", 2][kind] > seen["compiled", 2][kind], kind


def test_objects_and_lists_read_as_attributes_go_straight_to_their_fields_compiled(
    twins: dict[str, Twin], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's ``edges``, each edge's ``node`` and ``nodes`` are attributes holding objects, or (a course's students,
    through their enrolments) a resolver of the edge alone: compiled, each object goes straight to its fields, so
    neither the executor's completion (``complete_value``) nor a resolve info is made per object, and their counts
    do not grow with the page. No object's global id is encoded when none is
    selected (a spy around ``global_ids.encode``). The answers are graphql-core's."""
    counts = {"completions": 0, "infos": 0, "ids": 0}
    _spy(monkeypatch, compiled_module.CompiledExecutor, "complete_value", counts, "completions")
    _spy(monkeypatch, compiled_module.CompiledExecutor, "build_resolve_info", counts, "infos")
    _spy(monkeypatch, global_ids, "encode", counts, "ids")
    query = (
        'query($n: Int!) { workspace(workspaceId: "ws-2") { projects(first: $n) '
        "{ edges { cursor node { title status } } nodes { title } pageInfo { hasNextPage } } } "
        'course(courseId: "crs-001") { students(first: $n) { edges { cursor grade node { studentId name } } } } }'
    )
    seen: dict[int, dict[str, int]] = {}
    for page in (2, 3):
        _answer(twins["demo"].compiled, query, {"n": page})  # the document's first request compiles it
        counts.update(completions=0, infos=0, ids=0)
        compiled = _answer(twins["demo"].compiled, query, {"n": page})
        seen[page] = dict(counts)
        assert compiled == _answer(twins["demo"].interpreted, query, {"n": page})
        assert len(json.loads(compiled)["data"]["workspace"]["projects"]["edges"]) == page
        assert len(json.loads(compiled)["data"]["course"]["students"]["edges"]) == page
    assert seen[2] == seen[3], seen
    assert seen[3]["ids"] == 0


def test_objects_behind_an_interface_are_completed_by_the_plan(
    twins: dict[str, Twin], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``nodes(ids:)`` answers objects through the ``Node`` interface: compiled, each is completed from the plan
    once its type is resolved (graphql-core's ``complete_object_value`` never runs); interpreted, once per object.
    The answers are the same."""
    demo = twins["demo"]
    listed = json.loads(
        _answer(demo.compiled, '{ workspace(workspaceId: "ws-2") { projects(first: 4) { nodes { id } } } }', None)
    )
    ids = [one["id"] for one in listed["data"]["workspace"]["projects"]["nodes"]]
    assert len(ids) == 4
    counts = {"objects": 0}
    _spy(monkeypatch, graphql_executor.Executor, "complete_object_value", counts, "objects")
    query = "query($ids: [ID!]!) { nodes(ids: $ids) { id __typename ... on Project { title status } } }"
    answers, seen = {}, {}
    for name, gateway in (("compiled", demo.compiled), ("interpreted", demo.interpreted)):
        _answer(gateway, query, {"ids": ids})
        counts["objects"] = 0
        answers[name] = _answer(gateway, query, {"ids": ids})
        seen[name] = counts["objects"]
    assert answers["compiled"] == answers["interpreted"]
    assert [one["id"] for one in json.loads(answers["compiled"])["data"]["nodes"]] == ids
    assert seen == {"compiled": 0, "interpreted": 4}


def _spy(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, counts: dict[str, int], key: str) -> None:
    real = getattr(owner, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        counts[key] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)


@pytest.mark.parametrize("compiled", [True, False])
async def test_subscription_events_run_from_the_compiled_plan(
    gateway_factory: Callable[..., Gateway],
    fresh_table: str,
    dynamodb: Any,
    monkeypatch: pytest.MonkeyPatch,
    compiled: bool,
) -> None:
    """Each event is the subscription's selection executed over the changed item: compiled, the first event
    collects its nested selections and the ones after it reuse the plan; interpreted, every event collects them."""
    collected: list[int] = []
    real = graphql_executor.collect_subfields

    def spy(*args: Any, **kwargs: Any) -> Any:
        collected.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(graphql_executor, "collect_subfields", spy)
    with gateway_factory(fresh_table, compiled_execution=compiled) as streaming:
        put_workspace(dynamodb, fresh_table, "ws-1")
        async with socket(streaming) as client:
            await client.subscribe(PROJECTS, ws="ws-1")
            await listening(streaming)
            counts = []
            events = []
            for title in ("First", "Second", "Third"):
                start = len(collected)
                put_project(dynamodb, fresh_table, "ws-1", "p-1", title)
                events.append(await client.event())
                counts.append(len(collected) - start)
    assert [(event["kind"], event["node"]["title"]) for event in events] == [
        ("CREATED", "First"),
        ("UPDATED", "Second"),
        ("UPDATED", "Third"),
    ]
    assert {event["node"]["workspace"]["displayName"] for event in events} == {"Space ws-1"}
    assert counts[0] > 0, counts
    assert counts[1:] == ([0, 0] if compiled else [counts[0], counts[0]]), counts


# --- kept documents' queries, answered without strawberry's per-request machinery ---------------------------------

_KEPT = (
    "query Workspace($id: ID!, $n: Int!) { workspace(workspaceId: $id) { displayName "
    "projects(first: $n) { nodes { title status } pageInfo { hasNextPage } } } } "
    "query Other { __typename }"
)
_DEEP = (
    'query Deep($n: Int!) { workspace(workspaceId: "ws-2") { projects(first: $n) { nodes { workspace { '
    "projects(first: $n) { nodes { workspace { projects(first: $n) { nodes { title } } } } } } } } } }"
)
_GOOD = {"id": "ws-2", "n": 3}


@dataclass(frozen=True)
class _Sent:
    """One request as a client sends it, and whether a kept document's query takes the path without strawberry."""

    body: dict[str, Any]
    kept: bool
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "POST"

    def to(self, gateway: Gateway) -> tuple[int, str, Any]:
        """Status, media type and body (parsed: the order in which DynamoDB's calls were counted may differ)."""
        headers = {"accept": "application/graphql-response+json", **self.headers}
        if self.method == "GET":
            params = {key: json.dumps(value) if key == "variables" else value for key, value in self.body.items()}
            response = gateway.http.get("/graphql", params=params, headers=headers)
        else:
            response = gateway.http.post("/graphql", json=self.body, headers=headers)
        text = re.sub(r'"requestId":"[^"]*"', '"requestId":"-"', response.text)
        return response.status_code, response.headers["content-type"], json.loads(text)


_KEPT_CASES = {
    "answered": _Sent({"query": _KEPT, "operationName": "Workspace", "variables": _GOOD}, kept=True),
    "with its DynamoDB calls": _Sent(
        {"query": _KEPT, "operationName": "Workspace", "variables": _GOOD},
        kept=True,
        headers={"x-tablegraph-accounting": "1"},
    ),
    "over GET": _Sent({"query": _KEPT, "operationName": "Workspace", "variables": _GOOD}, kept=True, method="GET"),
    "over the budget": _Sent({"query": _DEEP, "variables": {"n": 100}}, kept=True),
    "variables that do not coerce": _Sent(
        {"query": _KEPT, "operationName": "Workspace", "variables": {"id": "ws-2", "n": "three"}}, kept=True
    ),
    "a variable missing": _Sent({"query": _KEPT, "operationName": "Workspace", "variables": {"id": "ws-2"}}, kept=True),
    "refused, to a client of application/json": _Sent(
        {"query": _KEPT, "operationName": "Workspace", "variables": {"id": "ws-2"}},
        kept=True,
        headers={"accept": "application/json"},
    ),
    "explained": _Sent(
        {"query": _KEPT, "operationName": "Workspace", "variables": _GOOD},
        kept=False,
        headers={"x-tablegraph-explain": "1"},
    ),
    "no operation named": _Sent({"query": _KEPT, "variables": _GOOD}, kept=False),
    "an unknown operation name": _Sent({"query": _KEPT, "operationName": "Nope", "variables": _GOOD}, kept=False),
    "a mutation over GET": _Sent(
        {"query": 'mutation { createWorkspace(input: {workspaceId: "x", displayName: "x"}) { __typename } }'},
        kept=False,
        method="GET",
    ),
}


@pytest.mark.parametrize("case", list(_KEPT_CASES))
def test_a_kept_documents_query_answers_as_strawberrys_path_does(
    twins: dict[str, Twin], monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """A query of a kept document is answered without strawberry's per-request machinery: no call of strawberry's
    ``Schema.execute`` (spied) for the document's second request. Status, media type and body (extensions, errors
    and their codes included) are those of its first request, which went through strawberry's extensions, and
    those of the interpreted gateway, which always does. Requests that path does not answer (explained, an
    operation strawberry must name or refuse, a mutation) still go through strawberry's."""
    sent = _KEPT_CASES[case]
    demo = twins["demo"]
    executed = {"count": 0}
    real = GatewaySchema.execute

    async def spy(self: GatewaySchema, *args: Any, **kwargs: Any) -> Any:
        executed["count"] += 1
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(GatewaySchema, "execute", spy)
    first = sent.to(demo.compiled)
    executed["count"] = 0
    second = sent.to(demo.compiled)
    assert executed["count"] == (0 if sent.kept else 1)
    assert second == first
    assert second == sent.to(demo.interpreted)
    if case == "answered":
        assert len(second[2]["data"]["workspace"]["projects"]["nodes"]) == 3
    if case == "with its DynamoDB calls":
        assert second[2]["extensions"]["dynamodb"]["calls"] == 2
    if case == "over the budget":
        assert second[2]["errors"][0]["extensions"]["code"] == "COST_LIMIT"
        assert second[0] == 400
    if "variable" in case or "refused" in case:
        assert second[2]["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
        assert second[0] == (200 if "application/json" in case else 400)
