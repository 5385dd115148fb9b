"""Client CPU per DynamoDB request against a DynamoDB Local: stock decoding vs fast reads, aioboto3 vs the lean plane.

Two tables of figures from one run, each measured interleaved: a 100-item Query through the stock client plus
TypeDeserializer vs the same client with ``install_fast_reads``; and GetItem, BatchGetItem of 5 and of 100 keys and
a 100-item Query sent by the gateway's aioboto3 client (configured as ``Store.open`` configures it, fast reads on) vs
by ``gateway.dynamo.dataplane``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from decimal import Decimal
from functools import partial
from typing import Any

from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore import xform_name
from botocore.parsers import create_parser

from gateway.config import Settings
from gateway.dynamo.store import Store
from gateway.dynamo.wire import install_fast_reads
from schema.model import MODEL

_PARTITION = "WS#bench"
_ITEMS = 100
_ROUNDS = 10
_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

Call = Callable[[], Awaitable[object]]


def _project(n: int) -> dict[str, Any]:
    return {
        "PK": _PARTITION,
        "SK": f"PROJ#2026-{n:04d}",
        "title": f"Project number {n} for the quarterly roadmap",
        "status": ("ACTIVE", "PAUSED", "DONE")[n % 3],
        "createdBy": f"user{n % 17}",
        "createdAt": f"2026-01-{n % 28 + 1:02d}T10:{n % 60:02d}:00Z",
        "seats": n,
        "budget": Decimal(f"{n * 1000}.50"),
        "archived": n % 5 == 0,
        "meta": {"owner": f"owner{n}", "tags": ["web", "mobile"], "score": Decimal("3.75")},
    }


def _deserialized(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{name: _deserializer.deserialize(av) for name, av in item.items()} for item in items]


async def _fill(client: Any, table: str) -> None:
    await client.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    for n in range(_ITEMS):
        item = {name: _serializer.serialize(value) for name, value in _project(n).items()}
        await client.put_item(TableName=table, Item=item)


async def _measure(pairs: dict[str, tuple[Call, Call]], calls: int) -> dict[str, list[float]]:
    """CPU and wall ms per call for each (stock, fast) pair: [stock CPU, fast CPU, stock wall, fast wall]."""
    totals = {label: [0.0, 0.0, 0.0, 0.0] for label in pairs}
    # Interleaved rounds, so drift in the machine's load hits both clients alike.
    for _ in range(_ROUNDS):
        for label, pair in pairs.items():
            for side, call in enumerate(pair):
                # Process CPU time: the engine's own work, in another process, is left out.
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(calls // _ROUNDS):
                    await call()
                totals[label][side] += (time.process_time() - cpu) * 1e3 / calls
                totals[label][side + 2] += (time.perf_counter() - wall) * 1e3 / calls
    return totals


async def _data_planes(endpoint: str, table: str, calls: int) -> dict[str, list[float]]:
    """The same three requests through the store's aioboto3 client and through its data plane, checked equal."""
    async with Store.open(Settings(endpoint_url=endpoint, table=table), MODEL) as store:
        client, plane = store._client, store._plane
        assert plane is not None
        keys = [{"PK": {"S": _PARTITION}, "SK": {"S": _project(n)["SK"]}} for n in range(_ITEMS)]
        query = {
            "TableName": table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": _PARTITION}},
        }
        requests: dict[str, tuple[str, str, dict[str, Any]]] = {
            "GetItem": ("GetItem", "Item", {"TableName": table, "Key": keys[0]}),
            "BatchGetItem, 5 keys": ("BatchGetItem", "Responses", {"RequestItems": {table: {"Keys": keys[:5]}}}),
            f"BatchGetItem, {_ITEMS} keys": ("BatchGetItem", "Responses", {"RequestItems": {table: {"Keys": keys}}}),
            f"Query, {_ITEMS} items": ("Query", "Items", query),
        }
        pairs: dict[str, tuple[Call, Call]] = {}
        for label, (operation, field, params) in requests.items():
            params = {**params, "ReturnConsumedCapacity": "TOTAL"}
            stock_call = partial(getattr(client, xform_name(operation)), **params)
            lean_call = partial(plane.call, operation, params)
            stock_answer, lean_answer = await stock_call(), await lean_call()
            assert _comparable(stock_answer[field]) == _comparable(lean_answer[field]), label
            pairs[label] = (stock_call, lean_call)
        return await _measure(pairs, calls)


def _comparable(found: Any) -> Any:
    """Items in one order: BatchGetItem answers in any."""
    if isinstance(found, dict) and all(isinstance(items, list) for items in found.values()):
        return {table: sorted(items, key=lambda item: str(item["SK"])) for table, items in found.items()}
    return found


async def main(endpoint: str, calls: int) -> None:
    table = f"wire-bench-{uuid.uuid4().hex[:8]}"
    session = get_session()
    options: dict[str, Any] = {
        "endpoint_url": endpoint,
        "region_name": "us-east-1",
        "aws_access_key_id": "bench",
        "aws_secret_access_key": "bench",
        "config": AioConfig(retries={"mode": "standard"}),
    }
    async with (
        session.create_client("dynamodb", **options) as stock,
        session.create_client("dynamodb", **options) as fast,
    ):
        install_fast_reads(fast)
        await _fill(stock, table)
        request: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": _PARTITION}},
        }
        # One raw response kept aside, to time decoding alone on identical bytes.
        captured: list[dict[str, Any]] = []
        stock.meta.events.register(
            "before-parse.dynamodb.Query", lambda response_dict, **_: captured.append(dict(response_dict))
        )
        expected = _deserialized((await stock.query(**request))["Items"])
        stock.meta.events.unregister("before-parse.dynamodb.Query")
        shape = stock.meta.service_model.operation_model("Query").output_shape
        assert shape is not None
        parser = create_parser("json")

        async def stock_query() -> object:
            return _deserialized((await stock.query(**request))["Items"])

        async def fast_query() -> object:
            return (await fast.query(**request))["Items"]

        async def stock_decode() -> object:
            return _deserialized(parser.parse(dict(captured[0]), shape)["Items"])

        async def fast_decode() -> object:
            response_dict: dict[str, Any] = dict(captured[0])
            customized: dict[str, Any] = {}
            await fast.meta.events.emit(
                "before-parse.dynamodb.Query", response_dict=response_dict, customized_response_dict=customized
            )
            parsed = parser.parse(response_dict, shape)
            parsed.update(customized)
            return parsed["Items"]

        try:
            assert len(expected) == _ITEMS
            assert await fast_query() == await fast_decode() == await stock_decode() == expected
            totals = await _measure(
                {
                    "Query, end to end": (stock_query, fast_query),
                    "decoding one captured response": (stock_decode, fast_decode),
                },
                calls,
            )
            planes = await _data_planes(endpoint, table, calls)
        finally:
            await stock.delete_table(TableName=table)

    print(f"{_ITEMS} items of 10 attributes per response, {calls} calls per cell, ms per call\n")
    print("| measure | stock + TypeDeserializer | install_fast_reads | stock / fast |")
    print("|---|---:|---:|---:|")
    for label, (stock_cpu, fast_cpu, stock_wall, fast_wall) in totals.items():
        print(f"| {label}, CPU | {stock_cpu:.2f} | {fast_cpu:.2f} | {stock_cpu / fast_cpu:.1f}x |")
        if label.startswith("Query"):
            print(f"| {label}, wall | {stock_wall:.2f} | {fast_wall:.2f} | {stock_wall / fast_wall:.1f}x |")

    print("\nClient CPU per request, ms: the gateway's aioboto3 client (fast reads) vs the lean data plane\n")
    print("| request | aioboto3 CPU | lean CPU | aioboto3 / lean | aioboto3 wall | lean wall |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, (stock_cpu, lean_cpu, stock_wall, lean_wall) in planes.items():
        print(
            f"| {label} | {stock_cpu:.3f} | {lean_cpu:.3f} | {stock_cpu / lean_cpu:.1f}x "
            f"| {stock_wall:.3f} | {lean_wall:.3f} |"
        )


# From the repository root: python -m benchmarks.wire_bench [--endpoint URL] [--calls N]
if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", default=os.environ.get("TABLEGRAPH_TEST_ENDPOINT", "http://127.0.0.1:8123"))
    parser.add_argument("--calls", type=int, default=500)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.endpoint, arguments.calls))
