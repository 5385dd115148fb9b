"""What the schema promises clients, checked by introspection and on the wire: defaults, enums, the Date scalar."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from graphql import introspection_from_schema

from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, Entity, Index, KeyShape, Model
from gateway.surface.graph import build, fragment_matcher, possible_types
from schema import SCHEMA
from schema.orders import ORDERS
from tests.support.gateway import Gateway

EVENT = Entity(
    "Event",
    {None: KeyShape.of("EVENT#{eventId}", "EVENT")},
    {
        "on": Attribute("DATE", "The day it happens."),
        "kind": Attribute("S", "What it is.", enum={"talk": "One speaker.", "workshop": "Hands on."}, default="talk"),
    },
    description="A test entity with a date and an enum.",
)
EVENTS = Declaration(Model(table="events", indexes=(Index(None, "PK", "SK"),), entities=(EVENT,)))


def _introspect(schema: Any) -> dict[str, Any]:
    # What a client's introspection query answers (graphql-core's own query, run without the gateway's extensions).
    types: list[dict[str, Any]] = introspection_from_schema(schema._schema)["__schema"]["types"]
    return {one["name"]: one for one in types}


def _type_name(ref: dict[str, Any]) -> str:
    """A type reference as SDL writes it."""
    if ref["kind"] == "NON_NULL":
        return _type_name(ref["ofType"]) + "!"
    if ref["kind"] == "LIST":
        return "[" + _type_name(ref["ofType"]) + "]"
    name: str = ref["name"]
    return name


def _field(types: dict[str, Any], type_name: str, field: str) -> dict[str, Any]:
    found: dict[str, Any] = next(one for one in types[type_name]["fields"] if one["name"] == field)
    return found


TYPES = _introspect(SCHEMA)
CONNECTIONS = [
    ("Workspace", "projects"),
    ("Organization", "users"),
    ("User", "tickets"),
    ("Student", "courses"),
    ("Course", "students"),
]


# --- descriptions -------------------------------------------------------------------------------------------------


def _undocumented(types: dict[str, Any]) -> list[str]:
    """Every type, field, argument, input field and enum value the schema serves without a description."""
    out: list[str] = []
    for name, one in types.items():
        if name.startswith("__"):
            continue
        out += [] if one["description"] else [name]
        for field in one["fields"] or []:
            out += [] if field["description"] else [f"{name}.{field['name']}"]
            out += [f"{name}.{field['name']}({arg['name']})" for arg in field["args"] if not arg["description"]]
        out += [f"{name}.{field['name']}" for field in one["inputFields"] or [] if not field["description"]]
        out += [f"{name}.{value['name']}" for value in one["enumValues"] or [] if not value["description"]]
    return out


@pytest.mark.parametrize("declaration", ["demo", "orders", "events"])
def test_every_element_of_the_schema_is_described(declaration: str) -> None:
    schema = {"demo": SCHEMA, "orders": build(ORDERS).schema, "events": build(EVENTS).schema}[declaration]
    assert _undocumented(_introspect(schema)) == []


# --- possible types -----------------------------------------------------------------------------------------------


def test_possible_types_are_what_introspection_says() -> None:
    expected = {
        name: sorted(one["name"] for one in found["possibleTypes"])
        for name, found in TYPES.items()
        if found["kind"] in ("INTERFACE", "UNION")
    }
    assert possible_types(SCHEMA) == expected
    assert possible_types(SCHEMA)["MutationError"] == ["ConflictError", "NotFoundError", "ValidationFailedError"]
    assert "Workspace" in possible_types(SCHEMA)["Node"]
    assert "Deleted" in possible_types(SCHEMA)["DeleteResult"]


def test_the_fragment_matcher_file_is_apollos_format() -> None:
    text = fragment_matcher(build(ORDERS).schema)
    assert text.endswith("\n")
    assert json.loads(text) == {"possibleTypes": possible_types(build(ORDERS).schema)}
    assert json.loads(text)["possibleTypes"]["Node"] == ["Order", "OrderItem"]


# --- nullability and defaults -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("owner", "field"), CONNECTIONS)
def test_the_default_page_size_is_in_the_schema(owner: str, field: str) -> None:
    arguments = {one["name"]: one for one in _field(TYPES, owner, field)["args"]}
    assert arguments["first"]["defaultValue"] == "20"
    assert _type_name(arguments["first"]["type"]) == "Int"


def test_the_schema_shows_the_page_size_it_is_built_with() -> None:
    types = _introspect(build(ORDERS, default_page_size=7).schema)
    assert {one["name"]: one for one in _field(types, "Order", "items")["args"]}["first"]["defaultValue"] == "7"
    with pytest.raises(ValueError, match="default_page_size"):
        build(ORDERS, default_page_size=0)


@pytest.mark.parametrize(("owner", "field"), CONNECTIONS)
def test_list_items_are_non_null_where_the_model_guarantees_them(owner: str, field: str) -> None:
    connection = _type_name(_field(TYPES, owner, field)["type"]).rstrip("!")
    edge = connection.removesuffix("Connection") + "Edge"
    assert _type_name(_field(TYPES, connection, "edges")["type"]) == f"[{edge}!]!"
    nodes = _type_name(_field(TYPES, connection, "nodes")["type"])
    node = _type_name(_field(TYPES, edge, "node")["type"])
    # An edge of a many-to-many relation may point at an item that no longer exists: its node is nullable.
    assert nodes == f"[{node}]!"
    if owner in ("Student", "Course"):
        assert not node.endswith("!")
    else:
        assert node.endswith("!")


# --- enums --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "field", "enum", "values"),
    [
        ("Project", "status", "ProjectStatus", ["active", "paused", "archived"]),
        ("Ticket", "status", "TicketStatus", ["open", "closed"]),
    ],
)
def test_closed_value_sets_are_enums_with_described_values(
    owner: str, field: str, enum: str, values: list[str]
) -> None:
    assert _type_name(_field(TYPES, owner, field)["type"]) == enum
    declared = TYPES[enum]
    assert declared["kind"] == "ENUM"
    assert declared["description"]
    assert [one["name"] for one in declared["enumValues"]] == values
    assert all(one["description"] for one in declared["enumValues"])


def test_the_ticket_status_defaults_to_open_in_the_create_input() -> None:
    status = next(one for one in TYPES["CreateTicketInput"]["inputFields"] if one["name"] == "status")
    assert (_type_name(status["type"]), status["defaultValue"]) == ("TicketStatus", "open")


def test_the_order_status_is_an_enum() -> None:
    types = _introspect(build(ORDERS).schema)
    assert _type_name(_field(types, "Order", "status")["type"]) == "OrderStatus"
    assert [one["name"] for one in types["OrderStatus"]["enumValues"]] == ["pending", "paid", "shipped"]


def test_enrolment_dates_are_dates() -> None:
    assert TYPES["Date"]["kind"] == "SCALAR"
    assert TYPES["Date"]["description"]
    for owner in ("Enrollment", "StudentCoursesEdge", "CourseStudentsEdge"):
        assert _type_name(_field(TYPES, owner, "enrolledOn")["type"]) == "Date"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (lambda: Attribute("INT", enum=("a",)), "stored as S"),
        (lambda: Attribute("S", enum=("in-progress", "in_progress")), "both served as 'in_progress'"),
        (lambda: Attribute("S", enum=("a",), enum_names={"a": "no-name"}), "cannot be a GraphQL enum value"),
        (lambda: Attribute("S", enum=("a",), enum_names={"b": "B"}), "not a value of the enum"),
        (lambda: Attribute("S", enum=("null",)), "cannot be a GraphQL enum value"),
        (lambda: Attribute("S", enum=("a", "a")), "distinct"),
        (lambda: Attribute("S", enum=("a", "b"), default="c"), "default"),
    ],
)
def test_an_enum_that_graphql_cannot_serve_is_refused_when_declared(spec: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        spec()


# --- on the wire --------------------------------------------------------------------------------------------------


@pytest.fixture
def events(gateway_factory: Callable[..., Gateway], fresh_table: str) -> Iterator[Gateway]:
    with gateway_factory(fresh_table, declaration=EVENTS) as running:
        yield running


CREATE = "mutation($input: CreateEventInput!) { createEvent(input: $input) { ... on Event { on kind } } }"


def test_a_date_and_an_enum_are_stored_as_text_and_served_as_written(
    events: Gateway, dynamodb: Any, fresh_table: str
) -> None:
    body = events.query(CREATE, {"input": {"eventId": "e1", "on": "2026-09-01", "kind": "workshop"}})
    assert body["data"] == {"createEvent": {"on": "2026-09-01", "kind": "workshop"}}
    item = dynamodb.get_item(TableName=fresh_table, Key={"PK": {"S": "EVENT#e1"}, "SK": {"S": "EVENT"}})["Item"]
    assert (item["on"], item["kind"]) == ({"S": "2026-09-01"}, {"S": "workshop"})
    literal = events.query(
        'mutation { createEvent(input: {eventId: "e2", on: "2024-02-29"}) { ... on Event { on kind } } }'
    )
    assert literal["data"] == {"createEvent": {"on": "2024-02-29", "kind": "talk"}}
    read = events.query('{ event(eventId: "e1") { on kind } }')
    assert read["data"] == {"event": {"on": "2026-09-01", "kind": "workshop"}}


@pytest.mark.parametrize("bad", ["2026-02-30", "2026-9-01", "20260901", "2026-09-01T00:00:00", "", "tomorrow"])
def test_a_bad_date_is_refused_before_any_request(events: Gateway, bad: str) -> None:
    sent = events.http.post("/graphql", json={"query": CREATE, "variables": {"input": {"eventId": "e", "on": bad}}})
    error = sent.json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error
    assert "YYYY-MM-DD" in error["message"]
    literal = 'mutation { createEvent(input: {eventId: "e", on: "' + bad + '"}) { __typename } }'
    error = events.http.post("/graphql", json={"query": literal}).json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error
    assert sum(events.sent.values()) == 0


def test_a_value_outside_the_enum_is_refused(events: Gateway) -> None:
    variables = {"input": {"eventId": "e", "kind": "party"}}
    error = events.http.post("/graphql", json={"query": CREATE, "variables": variables}).json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error


def test_stored_values_outside_the_declaration_are_errors_at_their_fields(
    events: Gateway, dynamodb: Any, fresh_table: str
) -> None:
    # Written by another tool: a date in another format and a kind the declaration does not know. They were served
    # as null; a null the table contradicts is a wrong answer, so each is a DATA_MISMATCH at its field.
    item = {"PK": {"S": "EVENT#x"}, "SK": {"S": "EVENT"}, "on": {"S": "01/09/2026"}, "kind": {"S": "party"}}
    dynamodb.put_item(TableName=fresh_table, Item=item)
    body = events.query('{ event(eventId: "x") { eventId on kind } }')
    assert body["data"] == {"event": {"eventId": "x", "on": None, "kind": None}}
    assert [(error["path"], error["extensions"]["code"], error["message"]) for error in body["errors"]] == [
        (["event", "on"], "DATA_MISMATCH", "Event.on holds text '01/09/2026' where DATE is declared"),
        (["event", "kind"], "DATA_MISMATCH", body["errors"][1]["message"]),
    ]
    assert body["errors"][1]["message"].startswith("Event.kind holds 'party', which is not one of its declared values")


def test_the_contract_data_serves_enrolment_dates(gateway: Gateway) -> None:
    body = gateway.query('{ student(studentId: "stu-0001") { courses(first: 1) { edges { enrolledOn } } } }')
    assert body["data"]["student"]["courses"]["edges"] == [{"enrolledOn": "2026-09-01"}]


def test_page_info_tells_where_a_page_starts(gateway: Gateway) -> None:
    page = (
        "projects(first: 2{}) {{ edges {{ cursor }} pageInfo {{ hasPreviousPage hasNextPage startCursor endCursor }} }}"
    )
    first = gateway.query('{ workspace(workspaceId: "ws-main") { ' + page.format("") + " } }")
    projects = first["data"]["workspace"]["projects"]
    cursors = [edge["cursor"] for edge in projects["edges"]]
    assert projects["pageInfo"] == {
        "hasPreviousPage": False,
        "hasNextPage": True,
        "startCursor": cursors[0],
        "endCursor": cursors[1],
    }
    after = f', after: "{cursors[1]}"'
    second = gateway.query('{ workspace(workspaceId: "ws-main") { ' + page.format(after) + " } }")
    info = second["data"]["workspace"]["projects"]["pageInfo"]
    assert (info["hasPreviousPage"], info["hasNextPage"]) == (True, True)
    assert info["startCursor"] == second["data"]["workspace"]["projects"]["edges"][0]["cursor"]
    empty = gateway.query('{ workspace(workspaceId: "ws-empty") { ' + page.format("") + " } }")
    assert empty["data"]["workspace"]["projects"]["pageInfo"] == {
        "hasPreviousPage": False,
        "hasNextPage": False,
        "startCursor": None,
        "endCursor": None,
    }
