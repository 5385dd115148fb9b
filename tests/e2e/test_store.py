"""The store against the real engine: batching limits, unprocessed keys, 1 MB pages, errors, and no Scan."""

from __future__ import annotations

import ast
import uuid
from typing import Any

import boto3
import pytest

from gateway.config import Settings
from gateway.design.model import Entity, Index, KeyShape, Model
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.store import QueryRequest, Store
from gateway.errors import GatewayError, Unavailable
from schema.model import MODEL
from tests.support.contract import BIG_NOTES, PROJECTS, STUDENTS, project_id, student_id
from tests.support.paths import ROOT


def settings(endpoint: str, table: str) -> Settings:
    return Settings(endpoint_url=endpoint, table=table)


async def test_batch_get_dedupes_and_chunks_more_than_100_keys(endpoint: str, contract_table: str) -> None:
    keys = [{"PK": f"STU#{student_id(n)}", "SK": "PROFILE"} for n in range(1, STUDENTS + 1)]
    asked = keys + keys[:40] + [{"PK": "STU#missing", "SK": "PROFILE"}]
    ledger = Ledger()
    async with Store.open(settings(endpoint, contract_table), MODEL) as store:
        items = (await store.batch_get(asked, ledger)).items
    assert sorted(item["PK"] for item in items) == sorted(key["PK"] for key in keys)
    assert ledger.summary()["operations"] == {"BatchGetItem": 2}
    assert ledger.rounds == 1


async def test_unprocessed_keys_are_retried_until_every_item_is_read(endpoint: str, fresh_table: str) -> None:
    # BatchGetItem answers at most 16 MB: 60 items of 380 KB leave keys unprocessed on the first call.
    resource: Any = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with resource.Table(fresh_table).batch_writer() as batch:
        for n in range(60):
            batch.put_item(Item={"PK": f"STU#s{n}", "SK": "PROFILE", "name": f"S{n}", "cv": "c" * 380_000})
    ledger = Ledger()
    async with Store.open(settings(endpoint, fresh_table), MODEL) as store:
        result = await store.batch_get([{"PK": f"STU#s{n}", "SK": "PROFILE"} for n in range(60)], ledger)
    items = result.items
    assert sorted(item["name"] for item in items) == sorted(f"S{n}" for n in range(60))
    retries = ledger.summary()["operations"]["BatchGetItem"] - 1
    assert retries >= 1
    assert ledger.rounds == result.round == 1 + retries


async def test_a_query_over_1_mb_is_followed_until_the_page_is_full(endpoint: str, contract_table: str) -> None:
    request = QueryRequest(
        partition=("PK", "WS#ws-big"), sort=("SK", "begins_with", "PROJ#"), ascending=False, limit=25
    )
    ledger = Ledger()
    async with Store.open(settings(endpoint, contract_table), MODEL) as store:
        result = await store.query(request, ledger)
    assert 25 * BIG_NOTES > 1_000_000
    assert [item["SK"] for item in result.items] == [
        f"PROJ#{project_id(n)}" for n in range(PROJECTS, PROJECTS - 25, -1)
    ]
    assert ledger.summary()["operations"] == {"Query": 2}
    assert result.last_key == {"PK": "WS#ws-big", "SK": f"PROJ#{project_id(PROJECTS - 24)}"}


async def test_a_missing_table_is_unavailable_and_fails_the_health_check(endpoint: str) -> None:
    ledger = Ledger()
    async with Store.open(settings(endpoint, "no-such-table"), MODEL) as store:
        assert await store.ping() is False
        try:
            await store.query(QueryRequest(partition=("PK", "WS#x")), ledger)
        except Unavailable as error:
            assert error.extensions == {"code": "UNAVAILABLE"}
        else:
            raise AssertionError("a query on a missing table must fail")
    assert ledger.summary()["operations"] == {"Query": 1}  # a call that failed was still made


async def test_an_unreachable_endpoint_is_unavailable() -> None:
    async with Store.open(settings("http://127.0.0.1:9", "t"), MODEL) as store:
        assert await store.ping() is False


async def test_create_table_is_idempotent_and_matches_the_design(endpoint: str, dynamodb: Any) -> None:
    table = f"created-{uuid.uuid4().hex[:8]}"
    async with Store.open(settings(endpoint, table), MODEL) as store:
        assert await store.create_table() is True
        assert await store.create_table() is False
    description = dynamodb.describe_table(TableName=table)["Table"]
    time_to_live = dynamodb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
    dynamodb.delete_table(TableName=table)
    assert time_to_live == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}
    assert description["KeySchema"] == [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ]
    (gsi,) = description["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "GSI1"
    assert gsi["KeySchema"] == [
        {"AttributeName": "GSI1PK", "KeyType": "HASH"},
        {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
    ]
    assert gsi["Projection"] == {"ProjectionType": "ALL"}
    assert description["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_the_store_scans_only_for_the_offline_recount_and_init_and_never_calls_partiql() -> None:
    gateway = ROOT / "gateway"
    modules = {path.relative_to(gateway).as_posix(): ast.parse(path.read_text()) for path in gateway.rglob("*.py")}

    def names(node: ast.AST) -> set[str]:
        """Client methods and operation names: the store sends an operation by either."""
        found: set[str] = set()
        for child in ast.walk(node):
            if isinstance(child, ast.Attribute):
                found.add(child.attr)
            elif isinstance(child, ast.Constant) and isinstance(child.value, str):
                found.add(child.value)
        return found

    partiql = {"execute_statement", "batch_execute_statement", "execute_transaction"}
    partiql |= {"ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction"}
    assert not [path for path, tree in modules.items() if names(tree) & partiql]
    scanning = {
        (path, function.name)
        for path, tree in modules.items()
        for function in ast.walk(tree)
        if isinstance(function, ast.AsyncFunctionDef | ast.FunctionDef) and names(function) & {"scan", "Scan"}
    }
    assert scanning == {("dynamo/store.py", "scan_pages"), ("dynamo/sampling.py", "sample_table")}
    users = {path for path, tree in modules.items() if "scan_pages" in names(tree) or "scan_pages" in ast.dump(tree)}
    assert users == {"dynamo/store.py", "writes/recount.py", "writes/check.py"}
    # `tablegraph init --from-table` drafts a declaration from a bounded sample, `check` checks one, and `serve`
    # checks one once at start-up on a client of its own: no request reads it.
    samplers = {path for path, tree in modules.items() if "sample_table" in ast.dump(tree)}
    assert samplers == {"dynamo/sampling.py", "server/cli.py", "server/checkup.py"}


async def test_create_table_refuses_a_table_whose_index_has_other_keys(endpoint: str, dynamodb: Any) -> None:
    table = f"other-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=table,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("PK", "SK", "GSI1PK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "GSI1",
                "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    await _create_table_refused(endpoint, dynamodb, table, MODEL, "another key schema")


async def test_create_table_refuses_a_table_whose_keys_have_other_types(endpoint: str, dynamodb: Any) -> None:
    table = f"other-{uuid.uuid4().hex[:8]}"
    reading = Entity("Reading", {None: KeyShape.of("DEVICE#{deviceId}", "{ts}")}, {"celsius": "N"})
    series = Model(table, (Index(None, "PK", "SK", sk_type="N"),), (reading,))
    dynamodb.create_table(
        TableName=table,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("PK", "SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    )
    await _create_table_refused(endpoint, dynamodb, table, series, "keys of other types: SK is S, declared N")


async def _create_table_refused(endpoint: str, dynamodb: Any, table: str, model: Model, refusal: str) -> None:
    """``create_table`` of ``model`` on ``table``, which exists, is refused with ``refusal``; the table is dropped."""
    try:
        async with Store.open(settings(endpoint, table), model) as store:
            with pytest.raises(GatewayError, match=refusal):
                await store.create_table()
    finally:
        dynamodb.delete_table(TableName=table)
