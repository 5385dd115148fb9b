"""Fast reads decode exactly what botocore plus TypeDeserializer would, and leave errors and retries alone."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any

import boto3
import orjson
import pytest
from aiobotocore.awsrequest import AioAWSResponse
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.compat import HTTPHeaders
from botocore.exceptions import ClientError
from botocore.parsers import create_parser
from botocore.serialize import create_serializer
from botocore.session import Session
from hypothesis import given
from hypothesis import strategies as st

from gateway.dynamo.wire import decode_item, install_fast_reads

_PARTITION = "WIRE#1"
_serializer = TypeSerializer()
_deserializer = TypeDeserializer()
_dynamodb = Session().get_service_model("dynamodb")


def _typed(value: Any) -> Any:
    """``value`` with every leaf tagged by its type, so ``Decimal("1") == 1 == True`` cannot pass as equal."""
    if isinstance(value, dict):
        return {name: _typed(member) for name, member in value.items()}
    if isinstance(value, list):
        return [_typed(member) for member in value]
    if isinstance(value, set):
        return ("set", sorted(_typed(member) for member in value))
    if isinstance(value, Decimal):
        # str keeps the exponent: Decimal("1.0") and Decimal("1.00") are equal but not the same value read.
        return ("Decimal", str(value))
    if isinstance(value, Binary):
        return ("Binary", repr(value))
    return (type(value).__name__, value)


def _stock_decode(body: bytes) -> dict[str, Any]:
    """The item the stock client returns for a GetItem ``body``: botocore's parser, then TypeDeserializer."""
    shape = _dynamodb.operation_model("GetItem").output_shape
    assert shape is not None
    parsed = create_parser("json").parse({"status_code": 200, "headers": {}, "body": body}, shape)
    return _deserialized(parsed["Item"])


def _deserialized(item: dict[str, Any]) -> dict[str, Any]:
    return {name: _deserializer.deserialize(av) for name, av in item.items()}


def _wire(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` as it travels on the wire, blobs base64-encoded by botocore's own serializer."""
    request = create_serializer("json").serialize_to_request(
        {"TableName": "t", "Item": {name: _serializer.serialize(value) for name, value in item.items()}},
        _dynamodb.operation_model("PutItem"),
    )
    wire: dict[str, Any] = orjson.loads(request["body"])["Item"]
    return wire


@st.composite
def _decimals(draw: st.DrawFn) -> Decimal:
    """Numbers DynamoDB accepts: up to 38 significant digits, magnitudes from 1E-130 to under 1E+126."""
    coefficient = draw(st.integers(min_value=0, max_value=10**38 - 1))
    digits = len(str(coefficient))
    exponent = draw(st.integers(min_value=-130, max_value=125 - digits + 1))
    sign = draw(st.sampled_from(["", "-"]))
    return Decimal(f"{sign}{coefficient}E{exponent}")


_texts = st.text(st.characters(codec="utf-8"), max_size=12)
_numbers = st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1) | _decimals()
_scalars = (
    _texts
    | _numbers
    | st.binary(max_size=12)
    | st.booleans()
    | st.none()
    | st.sets(_texts, min_size=1, max_size=4)
    | st.sets(_numbers, min_size=1, max_size=4)
    | st.sets(st.binary(max_size=8), min_size=1, max_size=4)
)
_values = st.recursive(
    _scalars,
    lambda members: st.lists(members, max_size=4) | st.dictionaries(_texts, members, max_size=4),
    max_leaves=16,
)
_items = st.dictionaries(st.text(st.characters(codec="utf-8"), min_size=1, max_size=8), _values, max_size=8)


@given(_items)
def test_decode_item_matches_botocore_and_type_deserializer(item: dict[str, Any]) -> None:
    body = orjson.dumps({"Item": _wire(item)})
    assert _typed(decode_item(orjson.loads(body)["Item"])) == _typed(_stock_decode(body))


def _item(n: int) -> dict[str, Any]:
    return {
        "PK": _PARTITION,
        "SK": f"ITEM#{n:02d}",
        "title": f"tïtle {n} ✓",
        "empty": "",
        "count": n,
        "big": 2**70 + n,
        "price": Decimal("-12.3400"),
        "tiny": Decimal("1E-130"),
        "flag": n % 2 == 0,
        "nothing": None,
        "blob": Binary(bytes([n, 0, 255])),
        "tags": {"a", "b"},
        "scores": {Decimal(1), Decimal("2.5")},
        "blobs": {b"x", b"\x00"},
        "meta": {"nested": {"list": [n, "two", None, [True, b"\x01"]]}},
    }


@pytest.fixture(scope="module")
def table(endpoint: str) -> Iterator[str]:
    name = f"wire-{uuid.uuid4().hex[:8]}"
    client = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    client.get_waiter("table_exists").wait(TableName=name)
    for n in range(5):
        client.put_item(TableName=name, Item={key: _serializer.serialize(value) for key, value in _item(n).items()})
    yield name
    client.delete_table(TableName=name)
    client.close()


@asynccontextmanager
async def _client(endpoint: str, *, fast: bool) -> AsyncIterator[Any]:
    async with get_session().create_client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=AioConfig(retries={"mode": "standard"}),
    ) as client:
        if fast:
            install_fast_reads(client)
        yield client


@pytest.fixture
async def stock(endpoint: str) -> AsyncIterator[Any]:
    async with _client(endpoint, fast=False) as client:
        yield client


@pytest.fixture
async def fast(endpoint: str) -> AsyncIterator[Any]:
    async with _client(endpoint, fast=True) as client:
        yield client


def _without_metadata(response: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in response.items() if key != "ResponseMetadata"}


def _query(table: str, **extra: Any) -> dict[str, Any]:
    return {
        "TableName": table,
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": {":pk": {"S": _PARTITION}},
        "ReturnConsumedCapacity": "TOTAL",
        **extra,
    }


async def test_query_pages_return_the_stock_items_already_decoded(table: str, stock: Any, fast: Any) -> None:
    expected = await stock.query(**_query(table, Limit=3))
    got = await fast.query(**_query(table, Limit=3))

    expected["Items"] = [_deserialized(item) for item in expected["Items"]]
    assert _typed(_without_metadata(got)) == _typed(_without_metadata(expected))
    assert got["LastEvaluatedKey"] == {"PK": {"S": _PARTITION}, "SK": {"S": "ITEM#02"}}
    assert got["ResponseMetadata"].keys() == expected["ResponseMetadata"].keys()

    rest = await fast.query(**_query(table, ExclusiveStartKey=got["LastEvaluatedKey"]))
    assert [item["SK"] for item in rest["Items"]] == ["ITEM#03", "ITEM#04"]
    assert "LastEvaluatedKey" not in rest


async def test_get_item_returns_the_stock_item_already_decoded(table: str, stock: Any, fast: Any) -> None:
    key = {"PK": {"S": _PARTITION}, "SK": {"S": "ITEM#01"}}
    expected = await stock.get_item(TableName=table, Key=key, ReturnConsumedCapacity="TOTAL")
    got = await fast.get_item(TableName=table, Key=key, ReturnConsumedCapacity="TOTAL")

    assert _typed(got["Item"]) == _typed(_deserialized(expected["Item"]))
    assert got["Item"] == _item(1)
    assert got["ConsumedCapacity"] == expected["ConsumedCapacity"]


async def test_get_item_of_a_missing_key_has_no_item(table: str, fast: Any) -> None:
    got = await fast.get_item(TableName=table, Key={"PK": {"S": _PARTITION}, "SK": {"S": "ITEM#99"}})

    assert "Item" not in got
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200


async def test_batch_get_item_returns_the_stock_responses_already_decoded(table: str, stock: Any, fast: Any) -> None:
    keys = [{"PK": {"S": _PARTITION}, "SK": {"S": f"ITEM#{n:02d}"}} for n in (4, 0, 99, 2)]
    request = {"RequestItems": {table: {"Keys": keys}}, "ReturnConsumedCapacity": "TOTAL"}
    expected = await stock.batch_get_item(**request)
    got = await fast.batch_get_item(**request)

    def by_sort_key(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(items, key=lambda item: str(item["SK"]))

    expected_items = by_sort_key([_deserialized(item) for item in expected["Responses"][table]])
    assert _typed(by_sort_key(got["Responses"][table])) == _typed(expected_items)
    assert [item["SK"] for item in by_sort_key(got["Responses"][table])] == ["ITEM#00", "ITEM#02", "ITEM#04"]
    assert got["UnprocessedKeys"] == expected["UnprocessedKeys"] == {}
    assert got["ConsumedCapacity"] == expected["ConsumedCapacity"]


@pytest.mark.parametrize(
    ("request_table", "condition", "code"),
    [
        ("missing", "PK = :pk", "ResourceNotFoundException"),
        (None, "PK = :pk AND", "ValidationException"),
    ],
)
async def test_request_errors_raise_the_stock_client_error(
    table: str, stock: Any, fast: Any, request_table: str | None, condition: str, code: str
) -> None:
    request = _query(request_table or table, KeyConditionExpression=condition)
    with pytest.raises(ClientError) as expected:
        await stock.query(**request)
    with pytest.raises(ClientError) as got:
        await fast.query(**request)

    assert got.value.response["Error"] == expected.value.response["Error"]
    assert got.value.response["Error"]["Code"] == code


class _Body:
    def __init__(self, content: bytes) -> None:
        self._content = content

    async def read(self) -> bytes:
        return self._content


async def test_a_throttled_query_is_retried_and_then_decoded(table: str, fast: Any) -> None:
    throttles = [b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Slow down"}']

    def throttle_once(request: Any, **_: Any) -> AioAWSResponse | None:
        if not throttles:
            return None
        return AioAWSResponse(request.url, 400, HTTPHeaders(), _Body(throttles.pop()))

    fast.meta.events.register("before-send.dynamodb.Query", throttle_once)
    got = await fast.query(**_query(table))

    assert got["ResponseMetadata"]["RetryAttempts"] == 1
    assert [item["SK"] for item in got["Items"]] == [f"ITEM#{n:02d}" for n in range(5)]
    assert isinstance(got["Items"][0]["count"], Decimal)
