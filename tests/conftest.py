"""The suite runs against one real DynamoDB Local, started here for the session and stopped at the end."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack
from typing import Any

import boto3
import pytest
from hypothesis import settings

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.dynamo.store import table_definition
from gateway.server.local import DynamoDBLocal
from gateway.writes.building import with_counters
from schema.model import MODEL
from tests.support.contract import create_table, load_contract_data
from tests.support.gateway import Gateway

# In CI every property test draws the same examples run after run, so a red run is a change's doing, never the
# draw's; on a developer's machine they explore anew each time, which is where they find new bugs.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


_COMPILED = "TABLEGRAPH_COMPILED_EXECUTION"


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


@pytest.fixture(scope="session")
def gateway_factory(endpoint: str) -> Callable[..., Gateway]:
    def make(table: str, schema: Any = None, declaration: Declaration | None = None, **settings: Any) -> Gateway:
        """A gateway on ``table`` serving ``declaration`` (the demo by default); ``schema`` swaps in another
        GraphQL schema over the same declaration.

        Authentication is open unless the test configures it: the suite's other concerns run as an admin. The
        check of a sample at start-up is off unless the test turns it on: its Scan would be among the calls that
        tests count and the faults they inject.
        """
        options = {
            "endpoint_url": endpoint,
            "cursor_secret": "test-secret",
            "auth_open": True,
            "check_sample": 0,
            **settings,
        }
        # CI runs the files that answer queries once more with TABLEGRAPH_COMPILED_EXECUTION=0 (.ci/run).
        compiled = {key: os.environ[key] for key in [_COMPILED] if key in os.environ}
        settings_ = Settings.from_env(compiled, table=table, **options)
        return Gateway(settings_, declaration=declaration, schema=schema)

    return make


@pytest.fixture(scope="session")
def gateway(gateway_factory: Callable[..., Gateway], contract_table: str) -> Iterator[Gateway]:
    with gateway_factory(contract_table) as running:
        yield running


@pytest.fixture(scope="module")
def served(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[Callable[..., Gateway]]:
    """Serve a declaration (the demo by default) on an empty table of its key design, made for the test module:
    ``served(BUSINESS, seeded=True, max_calls=50)``; settings go to the gateway, ``endpoint_url`` included. The
    gateways stop and the tables are deleted when the module ends."""
    with ExitStack() as stack:

        def serve(declaration: Declaration | None = None, *, seeded: bool = False, **settings: Any) -> Gateway:
            name = f"served-{uuid.uuid4().hex[:8]}"
            model = MODEL if declaration is None else declaration.model
            dynamodb.create_table(TableName=name, **table_definition(model))
            stack.callback(dynamodb.delete_table, TableName=name)
            if seeded:
                assert declaration is not None and declaration.seed is not None, "only a declaration's seed is loaded"
                _load(endpoint, name, with_counters(declaration.writes, declaration.seed()))
            return stack.enter_context(gateway_factory(name, declaration=declaration, **settings))

        yield serve


def _load(endpoint: str, table: str, items: Iterable[Mapping[str, Any]]) -> None:
    """Write ``items`` as ``tablegraph seed`` does, with boto3's batch writer."""
    resource = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )
    with resource.Table(table).batch_writer() as batch:
        for item in items:
            batch.put_item(Item=item)
