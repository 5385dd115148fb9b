"""One front door: the same hostile input gets the same code over HTTP, server-sent events and WebSocket."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gateway.server.documents import sha256
from tests.support.gateway import Gateway
from tests.support.live import put_workspace

LIMIT = 65_536
CREATE = 'mutation($t: String!) { createProject(input: {workspaceId: "ws-1", title: $t}) { __typename } }'
READ = '{ workspace(workspaceId: "ws-1") { displayName } }'


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# name, the body as JSON text, the code every transport answers with, and whether the front door refuses it (before
# an event stream starts) rather than GraphQL (parsing, validation, variables: the stream's one event).
CORPUS: list[tuple[str, str, str, bool]] = [
    ("variables are a list", json.dumps({"query": READ, "variables": [1]}), "BAD_REQUEST", True),
    ("the query is a number", json.dumps({"query": 5}), "BAD_REQUEST", True),
    ("operationName is a number", json.dumps({"query": READ, "operationName": 5}), "BAD_REQUEST", True),
    ("no query", json.dumps({"variables": {}}), "BAD_REQUEST", True),
    (
        "a lone surrogate in a variable",
        json.dumps({"query": CREATE, "variables": {"t": "lone \ud800"}}),
        "BAD_USER_INPUT",
        True,
    ),
    ("a lone surrogate in the query", json.dumps({"query": "{ __typename } # \udc00"}), "BAD_USER_INPUT", True),
    (
        "variables nested 200 deep",
        '{"query": "{ __typename }", "variables": {"v": ' + _nested(200) + "}}",
        "BAD_USER_INPUT",
        True,
    ),
    ("a variable of the wrong type", json.dumps({"query": CREATE, "variables": {"t": 5}}), "BAD_USER_INPUT", False),
    ("5,001 tokens", json.dumps({"query": "{ " + "__typename " * 5000 + "}"}), "GRAPHQL_PARSE_FAILED", False),
    ("a syntax error", json.dumps({"query": "{ workspace("}), "GRAPHQL_PARSE_FAILED", False),
    ("an unknown field", json.dumps({"query": "{ nothing }"}), "GRAPHQL_VALIDATION_FAILED", False),
    (
        "a bad persisted query hash",
        json.dumps({"query": READ, "extensions": {"persistedQuery": 1}}),
        "BAD_USER_INPUT",
        True,
    ),
    ("over the size limit", json.dumps({"query": READ, "variables": {"v": "x" * LIMIT}}), "PAYLOAD_TOO_LARGE", True),
]
# A WebSocket has no status: what an HTTP request refuses with a status of its own closes the socket with the
# protocol's code, since the message could not be read as an operation.
CLOSES = {"PAYLOAD_TOO_LARGE": 4413}


@pytest.fixture(scope="module")
def table(dynamodb: Any) -> Iterator[str]:
    from tests.support.contract import create_table

    name = "frontdoor-corpus"
    create_table(dynamodb, name)
    put_workspace(dynamodb, name, "ws-1")
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def door(gateway_factory: Callable[..., Gateway], table: str) -> Iterator[Gateway]:
    with gateway_factory(table, max_body_bytes=LIMIT) as gateway:
        yield gateway


def over_http(gateway: Gateway, body: str) -> tuple[int, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/graphql-response+json"}
    response = gateway.http.post("/graphql", content=body, headers=headers)
    return response.status_code, response.json()["errors"][0]["extensions"]["code"]


def over_sse(gateway: Gateway, body: str, method: str = "POST") -> tuple[int, str]:
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if method == "GET":
        response = gateway.http.get("/graphql", params=json.loads(body), headers=headers)
    else:
        response = gateway.http.post("/graphql", content=body, headers=headers)
    if response.headers["content-type"].startswith("text/event-stream"):
        data = next(line for line in response.text.splitlines() if line.startswith("data: {"))
        return response.status_code, json.loads(data.removeprefix("data: "))["errors"][0]["extensions"]["code"]
    return response.status_code, response.json()["errors"][0]["extensions"]["code"]


async def over_websocket(gateway: Gateway, *frames: str | bytes, init: bool = True) -> str | int:
    """The code of the first answer to ``frames``: an error's ``extensions.code``, or the close code."""
    url = gateway.url.replace("http://", "ws://") + "/graphql"
    async with connect(url, subprotocols=["graphql-transport-ws"], max_size=None) as ws:  # type: ignore[list-item]
        try:
            if init:
                await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
                assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "connection_ack"}
            for frame in frames:
                await ws.send(frame)
            message = json.loads(await asyncio.wait_for(ws.recv(), 20))
        except ConnectionClosed as closed:
            assert closed.rcvd is not None, "closed without a close frame"
            return closed.rcvd.code
    errors = message["payload"] if message["type"] == "error" else message["payload"]["errors"]
    code: str = errors[0]["extensions"]["code"]
    return code


def subscribe(body: str) -> str:
    return '{"id": "1", "type": "subscribe", "payload": ' + body + "}"


@pytest.mark.parametrize(("name", "body", "code", "at_door"), CORPUS, ids=[case[0] for case in CORPUS])
async def test_hostile_input_gets_the_same_code_over_every_transport(
    door: Gateway, name: str, body: str, code: str, at_door: bool
) -> None:
    http_status, http_code = over_http(door, body)
    sse_status, sse_code = over_sse(door, body)
    ws_code = await over_websocket(door, subscribe(body))
    assert (http_code, sse_code, ws_code) == (code, code, CLOSES.get(code, code))
    assert http_status == (413 if code == "PAYLOAD_TOO_LARGE" else 400)
    assert sse_status == (http_status if at_door else 200)


async def test_frames_outside_the_protocol_close_with_its_codes(door: Gateway) -> None:
    read = subscribe(json.dumps({"query": READ}))
    assert await over_websocket(door, b"\x00binary") == 4400
    assert await over_websocket(door, "not json") == 4400
    assert await over_websocket(door, "[1, 2]") == 4400
    assert await over_websocket(door, subscribe('{"variables": {"v": ' + _nested(30_000) + "}}")) == 4400
    assert await over_websocket(door, read, init=False) == 4401
    assert await over_websocket(door, '{"type": 5}') == 4400
    # The socket still serves after all that.
    assert door.http.get("/healthz").status_code == 200


def test_variables_nested_past_the_parser_are_bad_json_not_a_crash(door: Gateway) -> None:
    body = '{"query": "{ __typename }", "variables": {"v": ' + _nested(30_000) + "}}"
    assert over_http(door, body) == (400, "BAD_REQUEST")
    assert over_sse(door, body) == (400, "BAD_REQUEST")


def test_no_get_of_any_kind_runs_a_mutation(door: Gateway, dynamodb: Any, table: str) -> None:
    body = json.dumps(
        {"query": 'mutation { createProject(input: {workspaceId: "ws-1", title: "via GET"}) { __typename } }'}
    )
    plain = door.http.get("/graphql", params=json.loads(body))
    assert (plain.status_code, plain.json()["errors"][0]["extensions"]["code"]) == (405, "METHOD_NOT_ALLOWED")
    assert over_sse(door, body, "GET") == (405, "METHOD_NOT_ALLOWED")
    projects = dynamodb.query(
        TableName=table,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :proj)",
        ExpressionAttributeValues={":pk": {"S": "WS#ws-1"}, ":proj": {"S": "PROJ#"}},
    )
    assert projects["Count"] == 0
    # A query over an SSE GET still runs.
    assert door.http.get("/graphql", params={"query": READ}, headers={"Accept": "text/event-stream"}).status_code == 200


@pytest.fixture(scope="module")
def strict(
    gateway_factory: Callable[..., Gateway], table: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gateway]:
    manifest = tmp_path_factory.mktemp("manifest") / "documents.json"
    manifest.write_text(json.dumps({sha256(READ): READ}))
    with gateway_factory(table, persisted_queries="strict", persisted_documents=Path(manifest)) as gateway:
        yield gateway


@pytest.mark.parametrize("query", [CREATE, "{ __typename }"])
async def test_strict_persisted_documents_hold_on_every_transport(strict: Gateway, query: str) -> None:
    body = json.dumps({"query": query, "variables": {"t": "unregistered"}})
    http_status, http_code = over_http(strict, body)
    sse_status, sse_code = over_sse(strict, body)
    ws_code = await over_websocket(strict, subscribe(body))
    assert (http_code, sse_code, ws_code) == ("PERSISTED_QUERY_REQUIRED",) * 3
    assert http_status == sse_status == 400


async def test_a_registered_document_runs_on_every_transport(strict: Gateway) -> None:
    body = json.dumps({"query": READ})
    answer = strict.http.post("/graphql", content=body, headers={"Content-Type": "application/json"})
    assert answer.json() == {"data": {"workspace": {"displayName": "Space ws-1"}}}
    async with httpx.AsyncClient(base_url=strict.url, timeout=20) as http:
        events = await http.post(
            "/graphql", content=body, headers={"Content-Type": "application/json", "Accept": "text/event-stream"}
        )
    assert '"displayName":"Space ws-1"' in events.text


@pytest.fixture(scope="module")
def closed(gateway_factory: Callable[..., Gateway], table: str) -> Iterator[Gateway]:
    with gateway_factory(table, introspection="off", max_depth=3) as gateway:
        yield gateway


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("{ __schema { types { name } } }", "GRAPHQL_VALIDATION_FAILED"),
        ('{ workspace(workspaceId: "ws-1") { projects { nodes { workspace { displayName } } } } }', "COST_LIMIT"),
    ],
    ids=["introspection off", "too deep"],
)
async def test_document_rules_and_limits_hold_on_every_transport(closed: Gateway, query: str, code: str) -> None:
    body = json.dumps({"query": query})
    (_, http_code), (_, sse_code) = over_http(closed, body), over_sse(closed, body)
    ws_code = await over_websocket(closed, subscribe(body))
    assert (http_code, sse_code, ws_code) == (code, code, code)
