"""A real gateway served by uvicorn for a test, with every DynamoDB request it sends counted on the wire."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import boto3
import httpx
import uvicorn

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.dynamo.store import Store, table_definition
from gateway.server.app import ACCOUNTING_HEADER, create_app
from gateway.server.serving import WebSocketProtocol, websocket_options


class Gateway:
    """A real gateway served by uvicorn on 127.0.0.1, with every DynamoDB request it sends counted on the wire."""

    def __init__(self, settings: Settings, **app_options: Any) -> None:
        self.app = create_app(settings, **app_options)
        self.table = settings.table
        self.server = uvicorn.Server(
            uvicorn.Config(
                self.app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", **websocket_options(settings)
            )
        )
        self.sent: Counter[str] = Counter()
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Gateway:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the gateway did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.http = httpx.Client(base_url=self.url, timeout=30)
        store: Store = self.app.state.store
        store.on_send(self._count)
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()
        self.server.should_exit = True
        self._thread.join(timeout=10)

    def websockets(self) -> int:
        """The WebSocket connections the server holds open, whether or not their application has finished."""
        return sum(
            isinstance(connection, WebSocketProtocol) for connection in list(self.server.server_state.connections)
        )

    def running(self) -> int:
        """The requests and connections whose application is still running."""
        return len(list(self.server.server_state.tasks))

    def _count(self, operation: str, headers: Mapping[str, str], body: bytes) -> None:
        self.sent[operation] += 1

    def query(self, query: str, variables: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
        """POST a GraphQL request with accounting on; the response JSON, checked against the wire count."""
        self.sent.clear()
        response = self.http.post(
            "/graphql",
            json={"query": query, "variables": variables or {}},
            headers={ACCOUNTING_HEADER: "1", **headers},
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        accounted = body["extensions"]["dynamodb"]
        assert accounted["operations"] == dict(self.sent), "the accounting disagrees with the requests sent"
        return body


def accounted(body: dict[str, Any]) -> tuple[int, int, dict[str, int]]:
    """The DynamoDB calls, rounds and operations a response's accounting reports."""
    dynamodb = body["extensions"]["dynamodb"]
    return dynamodb["calls"], dynamodb["rounds"], dynamodb["operations"]


def answered(gateway: Gateway, query: str) -> tuple[Any, tuple[int, int]]:
    """The data of a query that must not fail, and its (calls, rounds) on the wire."""
    body = gateway.query(query)
    assert "errors" not in body, body["errors"]
    calls, rounds, _ = accounted(body)
    return body["data"], (calls, rounds)


def explained(gateway: Gateway, query: str) -> tuple[int, int]:
    """The (calls, rounds) the gateway plans for ``query``, asked without executing it."""
    response = gateway.http.post("/graphql", json={"query": query}, headers={"X-Tablegraph-Explain": "1"})
    planned = response.json()["extensions"]["explain"]
    return planned["calls"], planned["rounds"]


def fill(endpoint: str, table: str, items: Iterable[Mapping[str, Any]]) -> None:
    """Write ``items`` into ``table`` with plain boto3, as another tool keeps the table (never the gateway's code)."""
    resource: Any = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )
    with resource.Table(table).batch_writer() as batch:
        for item in items:
            batch.put_item(Item=dict(item))


def serve_design(
    dynamodb: Any,
    endpoint: str,
    gateway_factory: Callable[..., Gateway],
    declaration: Declaration,
    items: Iterable[Mapping[str, Any]],
) -> Iterator[tuple[Gateway, str]]:
    """A gateway serving ``declaration`` on a table of its own, created as the declaration defines it and filled
    with ``items`` by plain boto3; the table, dropped afterwards."""
    name = f"real-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, **table_definition(declaration.model))
    fill(endpoint, name, items)
    with gateway_factory(name, declaration=declaration) as running:
        yield running, name
    dynamodb.delete_table(TableName=name)


def assert_pattern(gateway: Gateway, query: str, expected: Any, cost: tuple[int, int]) -> None:
    """An access pattern answers ``expected`` at ``cost`` (calls, rounds) on the wire, and explain plans that cost."""
    data, spent = answered(gateway, query)
    assert data == expected
    assert spent == cost
    assert explained(gateway, query) == cost
