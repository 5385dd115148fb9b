"""A table that contradicts its declaration where a request reads is a DATA_MISMATCH error at the field, never a null
or a short page: with the item's key, a metric and a log line with the request id, the rest of the answer served.

The items are written with plain boto3 in the demo design's key shapes (and the online shop's), each case asked
with compiled execution on and off, and once over the WebSocket transport.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from gateway import Collection, Declaration, Entity, Index, KeyShape, Model
from gateway.dynamo.store import table_definition
from gateway.server.app import ACCOUNTING_HEADER
from schema.model import MODEL
from schema.online_shop import SHOP
from tests.support.gateway import Gateway, fill
from tests.support.live import listening, socket

ITEMS: list[dict[str, Any]] = [
    {"PK": "WS#w1", "SK": "META", "displayName": "One", "seatLimit": 5},
    {"PK": "WS#w1", "SK": "PROJ#2026-0001", "title": "first", "status": "active"},
    {"PK": "WS#w1", "SK": "PROJ#2026-0002", "title": "second", "status": "ACTIVE"},  # the design writes `active`
    {"PK": "WS#w1", "SK": "PROJ#2026-0002#draft", "title": "of a shape no entity has"},
    {"PK": "WS#w2", "SK": "META", "displayName": "Two", "seatLimit": "ten"},  # text where INT is declared
    {"PK": "ORG#acme", "SK": "METADATA#acme", "name": "Acme"},
    {"PK": "ORG#acme", "SK": "USER#ann", "GSI1PK": "ORG#acme#USER#ann", "GSI1SK": "USER#ann", "name": "Ann"},
    # At bob's table key, an item whose index key names another user: it reads as no user.
    {"PK": "ORG#acme", "SK": "USER#bob", "GSI1PK": "ORG#acme#USER#bob", "GSI1SK": "USER#robert", "name": "Bob"},
    {"PK": "ORG#acme", "SK": "USER#cat", "GSI1PK": "ORG#acme#USER#cat", "GSI1SK": "USER#cat", "name": "Cat"},
    {"PK": "ORG#solo", "SK": "METADATA#solo", "name": "Solo"},
    {"PK": "ORG#solo", "SK": "USER#dan", "GSI1PK": "ORG#solo#USER#dan", "GSI1SK": "USER#dan", "name": "Dan"},
]
BOB = {"PK": "ORG#acme", "SK": "USER#bob"}

SHELF = Entity("Shelf", {None: KeyShape.of("SHELF#{shelfId}", "INFO")}, {"name": "S"}, discriminator=("kind", "shelf"))
BOOK = Entity(
    "Book", {None: KeyShape.of("SHELF#{shelfId}", "ITEM#{bookId}")}, {"title": "S"}, discriminator=("kind", "book")
)
SHELVES = Declaration(
    Model("shelves", (Index(None, "PK", "SK"),), (SHELF, BOOK), (Collection("Shelf.books", SHELF, BOOK),))
)


@pytest.fixture(scope="module")
def table(dynamodb: Any, endpoint: str) -> Iterator[str]:
    name = f"mismatch-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, **table_definition(MODEL))
    fill(endpoint, name, ITEMS)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module", params=["compiled", "interpreted"])
def mode(request: pytest.FixtureRequest) -> str:
    """How the demo gateway executes queries: from compiled plans, or interpreted by graphql-core."""
    mode: str = request.param
    return mode


@pytest.fixture(scope="module")
def demo(mode: str, table: str, gateway_factory: Callable[..., Gateway]) -> Iterator[Gateway]:
    with gateway_factory(table, compiled_execution=mode == "compiled") as running:
        yield running


def ask(gateway: Gateway, query: str) -> tuple[dict[str, Any], str]:
    """The response to ``query`` over HTTP, sent twice: the first request of a document is executed by its plan
    through strawberry, the next ones by the kept path (or both interpreted, compilation off), and both must
    answer alike. The second's response, and the request id the gateway gave it."""
    answers = []
    for _ in range(2):
        response = gateway.http.post("/graphql", json={"query": query}, headers={ACCOUNTING_HEADER: "1"})
        assert response.status_code == 200, response.text
        answers.append((response.json(), response.headers["x-request-id"]))
    (first, _), (second, request_id) = answers
    assert {"data": first["data"], "errors": first.get("errors")} == {
        "data": second["data"],
        "errors": second.get("errors"),
    }
    return second, request_id


def executions(gateway: Gateway) -> dict[str, float]:
    """``tablegraph_graphql_executions_total`` by mode."""
    text = gateway.http.get("/metrics").text
    found = re.findall(r'^tablegraph_graphql_executions_total\{mode="(\w+)"\} ([0-9.e+]+)$', text, re.MULTILINE)
    return {mode: float(value) for mode, value in found}


def counted(gateway: Gateway, entity: str) -> float:
    """``tablegraph_data_mismatches_total`` for ``entity``, as /metrics serves it."""
    metric = f'tablegraph_data_mismatches_total{{entity="{entity}"}} '
    for line in gateway.http.get("/metrics").text.splitlines():
        if line.startswith(metric):
            return float(line.removeprefix(metric))
    return 0.0


def logged(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The mismatch log lines, as JSON."""
    return [json.loads(record.getMessage()) for record in caplog.records if record.name == "tablegraph.mismatch"]


def test_an_item_at_a_users_key_that_reads_as_no_user_is_an_error_not_a_null(
    demo: Gateway, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "tablegraph.mismatch")
    before, executed = counted(demo, "User"), executions(demo)
    body, request_id = ask(
        demo,
        '{ user(orgName: "acme", username: "bob") { name } ann: user(orgName: "acme", username: "ann") { name } }',
    )
    assert body["data"] == {"user": None, "ann": {"name": "Ann"}}
    assert body["errors"] == [
        {
            "message": "the item at PK='ORG#acme' SK='USER#bob' is not the User its key names: its keys in GSI1"
            " (GSI1PK='ORG#acme#USER#bob', GSI1SK='USER#robert') do not agree with its table key",
            "locations": [{"line": 1, "column": 3}],
            "path": ["user"],
            "extensions": {"code": "DATA_MISMATCH", "entity": "User", "key": BOB},
        }
    ]
    assert counted(demo, "User") == before + 2
    now = executions(demo)
    assert {name: now[name] - executed.get(name, 0) for name in now if now[name] != executed.get(name)} == {mode: 2}
    assert logged(caplog)[-1:] == [
        {
            "requestId": request_id,
            "path": ["user"],
            "entity": "User",
            "attribute": None,
            "key": BOB,
            "message": body["errors"][0]["message"],
        }
    ]


def test_a_page_with_a_member_that_reads_as_no_member_is_an_error_not_a_short_page(demo: Gateway) -> None:
    before = counted(demo, "User")
    body, _ = ask(
        demo,
        '{ organization(orgName: "acme") { name users { nodes { username } } }'
        ' solo: organization(orgName: "solo") { name users { nodes { username name } } } }',
    )
    # The page's connection is non-null: the error nulls the organization, as GraphQL propagates it; the page is
    # never served without bob as if he were not there.
    assert body["data"] == {
        "organization": None,
        "solo": {"name": "Solo", "users": {"nodes": [{"username": "dan", "name": "Dan"}]}},
    }
    [error] = body["errors"]
    assert error["path"] == ["organization", "users"]
    assert error["extensions"] == {"code": "DATA_MISMATCH", "entity": "User", "key": BOB}
    assert counted(demo, "User") == before + 2


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "interpreted"])
def test_a_parent_read_in_its_pages_query_that_reads_as_no_parent_is_an_error(
    dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway], compiled: bool
) -> None:
    items = [
        {"PK": "SHELF#s1", "SK": "INFO", "kind": "Shelf", "name": "Top"},  # the design writes `shelf`
        {"PK": "SHELF#s1", "SK": "ITEM#b1", "kind": "book", "title": "Emma"},
        {"PK": "SHELF#s2", "SK": "INFO", "kind": "shelf", "name": "Bottom"},
        {"PK": "SHELF#s2", "SK": "ITEM#b2", "kind": "book", "title": "Ulysses"},
    ]
    with _served(dynamodb, endpoint, gateway_factory, SHELVES, items, compiled_execution=compiled) as shelves:
        body, _ = ask(
            shelves,
            '{ shelf(shelfId: "s1") { name books { nodes { title } } }'
            ' bottom: shelf(shelfId: "s2") { name books { nodes { title } } } }',
        )
    assert body["data"] == {"shelf": None, "bottom": {"name": "Bottom", "books": {"nodes": [{"title": "Ulysses"}]}}}
    [error] = body["errors"]
    assert (error["path"], error["extensions"]) == (
        ["shelf"],
        {"code": "DATA_MISMATCH", "entity": "Shelf", "key": {"PK": "SHELF#s1", "SK": "INFO"}},
    )
    assert error["message"].endswith("its kind holds 'Shelf' where the declaration has 'shelf'")
    # Each shelf and its books in one Query, the parent read in its page's Query.
    assert body["extensions"]["dynamodb"]["operations"] == {"Query": 2}


def test_an_enum_value_outside_the_declared_set_is_an_error_at_its_field(demo: Gateway) -> None:
    before = counted(demo, "Project")
    body, _ = ask(
        demo,
        '{ workspace(workspaceId: "w1") { displayName projects { nodes { projectId title status } } }'
        ' project(workspaceId: "w1", projectId: "2026-0002") { title status } }',
    )
    assert body["data"] == {
        "workspace": {
            "displayName": "One",
            "projects": {
                "nodes": [
                    {"projectId": "2026-0002", "title": "second", "status": None},
                    {"projectId": "2026-0001", "title": "first", "status": "active"},
                ]
            },
        },
        "project": {"title": "second", "status": None},
    }
    key = {"PK": "WS#w1", "SK": "PROJ#2026-0002"}
    expected = {"code": "DATA_MISMATCH", "entity": "Project", "attribute": "status", "key": key}
    assert [(error["path"], error["extensions"]) for error in body["errors"]] == [
        (["workspace", "projects", "nodes", 0, "status"], expected),
        (["project", "status"], expected),
    ]
    assert body["errors"][0]["message"] == (
        "Project.status holds 'ACTIVE', which is not one of its declared values ['active', 'archived', 'paused']"
    )
    assert counted(demo, "Project") == before + 4


def test_text_where_an_int_is_declared_is_an_error_at_its_field(demo: Gateway) -> None:
    before = counted(demo, "Workspace")
    body, _ = ask(demo, '{ workspace(workspaceId: "w2") { displayName seatLimit } }')
    assert body["data"] == {"workspace": {"displayName": "Two", "seatLimit": None}}
    assert body["errors"] == [
        {
            "message": "Workspace.seatLimit holds text 'ten' where INT is declared",
            "locations": [{"line": 1, "column": 46}],
            "path": ["workspace", "seatLimit"],
            "extensions": {
                "code": "DATA_MISMATCH",
                "entity": "Workspace",
                "attribute": "seatLimit",
                "key": {"PK": "WS#w2", "SK": "META"},
            },
        }
    ]
    assert counted(demo, "Workspace") == before + 2


def test_an_absent_attribute_and_an_item_of_a_shape_never_declared_are_still_no_error(demo: Gateway) -> None:
    body, _ = ask(
        demo,
        '{ project(workspaceId: "w1", projectId: "2026-0001") { createdBy }'
        ' workspace(workspaceId: "w1") { projects { nodes { projectId } } } }',
    )
    assert "errors" not in body
    assert body["data"] == {
        "project": {"createdBy": None},
        "workspace": {"projects": {"nodes": [{"projectId": "2026-0002"}, {"projectId": "2026-0001"}]}},
    }


def test_a_mismatch_over_the_websocket_transport_carries_the_same_error(demo: Gateway) -> None:
    before = counted(demo, "User")

    async def over_the_socket() -> dict[str, Any]:
        async with socket(demo) as client:
            await client.subscribe('{ user(orgName: "acme", username: "bob") { name } }')
            message = await client.receive()
            assert (await client.receive())["type"] == "complete"
            return message

    message = asyncio.run(over_the_socket())
    assert message["type"] == "next"
    assert message["payload"]["data"] == {"user": None}
    [error] = message["payload"]["errors"]
    assert (error["path"], error["extensions"]) == (
        ["user"],
        {"code": "DATA_MISMATCH", "entity": "User", "key": BOB},
    )
    for _ in range(100):  # counted as the operation ends, just after its result is sent
        if counted(demo, "User") == before + 1:
            break
        asyncio.run(asyncio.sleep(0.02))
    assert counted(demo, "User") == before + 1


def test_a_mismatch_over_server_sent_events_carries_the_same_error(demo: Gateway) -> None:
    query = '{ user(orgName: "acme", username: "bob") { name } }'
    response = demo.http.post("/graphql", json={"query": query}, headers={"Accept": "text/event-stream"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    data = next(line for line in response.text.splitlines() if line.startswith("data: {"))
    payload = json.loads(data.removeprefix("data: "))
    assert payload["data"] == {"user": None}
    [error] = payload["errors"]
    assert (error["path"], error["extensions"]) == (
        ["user"],
        {"code": "DATA_MISMATCH", "entity": "User", "key": BOB},
    )


async def test_a_subscription_event_carries_the_mismatch_and_counts_it(
    dynamodb: Any, fresh_table: str, gateway_factory: Callable[..., Gateway]
) -> None:
    query = "subscription($ws: ID!) { workspaceProjectsChanged(workspaceId: $ws) { kind node { projectId status } } }"
    project = {"PK": {"S": "WS#ws-1"}, "SK": {"S": "PROJ#p-1"}, "title": {"S": "First"}, "status": {"S": "ACTIVE"}}
    with gateway_factory(fresh_table) as streaming:
        before = counted(streaming, "Project")
        async with socket(streaming) as client:
            await client.subscribe(query, ws="ws-1")
            await listening(streaming)
            dynamodb.put_item(TableName=fresh_table, Item=project)
            message = await client.receive()
        after = counted(streaming, "Project")
    assert message["payload"]["data"] == {
        "workspaceProjectsChanged": {"kind": "CREATED", "node": {"projectId": "p-1", "status": None}}
    }
    [error] = message["payload"]["errors"]
    assert (error["path"], error["extensions"]) == (
        ["workspaceProjectsChanged", "node", "status"],
        {
            "code": "DATA_MISMATCH",
            "entity": "Project",
            "attribute": "status",
            "key": {"PK": "WS#ws-1", "SK": "PROJ#p-1"},
        },
    )
    assert after == before + 1


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "interpreted"])
def test_a_discriminator_in_the_wrong_case_is_an_error_at_the_entitys_key_and_by_a_lookup(
    dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway], compiled: bool
) -> None:
    invoice = {"Amount": 10, "GSI2-PK": "c#ann", "GSI2-SK": "i#2020-01-01"}
    items = [
        {"PK": "c#ann", "SK": "c#ann", "EntityType": "customer", "Name": "Ann"},
        {"PK": "c#bea", "SK": "c#bea", "EntityType": "Customer", "Name": "Bea"},
        {"PK": "o#o1", "SK": "i#i1", "GSI1-PK": "i#i1", "GSI1-SK": "i#i1", "EntityType": "invoice", **invoice},
        {"PK": "o#o2", "SK": "i#i2", "GSI1-PK": "i#i2", "GSI1-SK": "i#i2", "EntityType": "Invoice", **invoice},
    ]
    with _served(dynamodb, endpoint, gateway_factory, SHOP, items, compiled_execution=compiled) as shop:
        body, _ = ask(
            shop,
            '{ ann: customer(customerId: "ann") { name } customer(customerId: "bea") { name }'
            ' i1: invoiceById(invoiceId: "i1") { amount } invoiceById(invoiceId: "i2") { amount } }',
        )
    assert body["data"] == {"ann": {"name": "Ann"}, "customer": None, "i1": {"amount": 10}, "invoiceById": None}
    assert [(error["path"], error["extensions"]) for error in body["errors"]] == [
        (["customer"], {"code": "DATA_MISMATCH", "entity": "Customer", "key": {"PK": "c#bea", "SK": "c#bea"}}),
        # Found by a lookup on GSI1, at the invoice's index key.
        (["invoiceById"], {"code": "DATA_MISMATCH", "entity": "Invoice", "key": {"PK": "o#o2", "SK": "i#i2"}}),
    ]
    assert body["errors"][0]["message"].endswith("its EntityType holds 'Customer' where the declaration has 'customer'")


@contextmanager
def _served(
    dynamodb: Any,
    endpoint: str,
    gateway_factory: Callable[..., Gateway],
    declaration: Declaration,
    items: list[dict[str, Any]],
    **settings: Any,
) -> Iterator[Gateway]:
    """A gateway serving ``declaration`` over a table of its own, holding ``items`` written with plain boto3."""
    name = f"mismatch-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, **table_definition(declaration.model))
    try:
        fill(endpoint, name, items)
        with gateway_factory(name, declaration=declaration, **settings) as running:
            yield running
    finally:
        dynamodb.delete_table(TableName=name)
