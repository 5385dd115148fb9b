"""The suite runs against one real DynamoDB Local, started here for the session and stopped at the end."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import boto3
import httpx
import pytest
import uvicorn

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.dynamo.store import Store
from gateway.server.app import ACCOUNTING_HEADER, create_app
from gateway.server.local import DynamoDBLocal
from tests.contract import create_table, load_contract_data


@pytest.fixture(scope="session")
def endpoint() -> Iterator[str]:
    """A DynamoDB Local for the whole run; TABLEGRAPH_TEST_ENDPOINT reuses one already running."""
    given = os.environ.get("TABLEGRAPH_TEST_ENDPOINT")
    if given:
        yield given
        return
    with DynamoDBLocal() as engine:
        yield engine.endpoint_url


@pytest.fixture(scope="session")
def dynamodb(endpoint: str) -> Any:
    """A plain boto3 client, for setting up and checking data independently of the gateway's code."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


@pytest.fixture(scope="session")
def contract_table(dynamodb: Any) -> Iterator[str]:
    """The contract data set, written with plain boto3 to the key shapes of DESIGN.md; read-only for tests."""
    name = f"contract-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    load_contract_data(dynamodb, name)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture
def fresh_table(dynamodb: Any) -> Iterator[str]:
    name = f"t-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    yield name
    dynamodb.delete_table(TableName=name)


class Gateway:
    """A real gateway served by uvicorn on 127.0.0.1, with every DynamoDB request it sends counted on the wire."""

    def __init__(self, settings: Settings, **app_options: Any) -> None:
        self.app = create_app(settings, **app_options)
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
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


@pytest.fixture(scope="session")
def gateway_factory(endpoint: str) -> Callable[..., Gateway]:
    def make(table: str, schema: Any = None, declaration: Declaration | None = None, **settings: Any) -> Gateway:
        """A gateway on ``table`` serving ``declaration`` (the demo by default); ``schema`` swaps in another
        GraphQL schema over the same declaration.

        Authentication is open unless the test configures it: the suite's other concerns run as an admin.
        """
        options = {"cursor_secret": "test-secret", "auth_open": True, **settings}
        settings_ = Settings(endpoint_url=endpoint, table=table, **options)
        return Gateway(settings_, declaration=declaration, schema=schema)

    return make


@pytest.fixture(scope="session")
def gateway(gateway_factory: Callable[..., Gateway], contract_table: str) -> Iterator[Gateway]:
    with gateway_factory(contract_table) as running:
        yield running
