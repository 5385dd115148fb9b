"""The lean data plane answers as the stock aioboto3 client does, signs as botocore signs and retries as it retries."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar
from unittest import mock

import aioboto3
import pytest
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import ReadOnlyCredentials
from botocore.exceptions import ClientError
from botocore.retries.standard import ExponentialBackoff, RetryContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.config import Settings
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.dataplane import DataPlane, Signer, _backoff
from gateway.dynamo.requests import Refused, Target, WriteOp
from gateway.dynamo.store import Store
from schema.model import MODEL
from tests.contract import create_table
from tests.faults import FaultProxy, Rule
from tests.test_wire import _typed

T = TypeVar("T")
_texts = st.text(st.characters(codec="utf-8"), max_size=12)
_names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
"""Attribute names and map keys are never empty."""


@st.composite
def _numbers(draw: st.DrawFn) -> Decimal:
    """Numbers of up to 38 digits from 1E-130 on, that stay 38 digits written out: DynamoDB Local answers
    1E+38 as 100000000000000000000000000000000000000, which TypeDeserializer refuses (a decoder matter, not the
    data plane's; tests/test_wire.py covers every number DynamoDB accepts)."""
    coefficient = draw(st.integers(min_value=0, max_value=10**38 - 1))
    exponent = draw(st.integers(min_value=-130, max_value=38 - len(str(coefficient))))
    return Decimal(f"{draw(st.sampled_from(['', '-']))}{coefficient}E{exponent}")


_scalars = (
    _texts
    | _numbers()
    | st.binary(max_size=12)
    | st.booleans()
    | st.none()
    | st.sets(_texts, min_size=1, max_size=4)
    | st.sets(_numbers(), min_size=1, max_size=4)
    | st.sets(st.binary(max_size=8), min_size=1, max_size=4)
)
_values = st.recursive(
    _scalars,
    lambda members: st.lists(members, max_size=4) | st.dictionaries(_names, members, max_size=4),
    max_leaves=12,
)
_items = st.dictionaries(_names, _values, max_size=6)
_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def _wire(item: dict[str, Any]) -> dict[str, Any]:
    return {name: _serializer.serialize(value) for name, value in item.items()}


def _decoded(raw: dict[str, Any]) -> dict[str, Any]:
    return {name: _deserializer.deserialize(value) for name, value in raw.items()}


@dataclass
class Pair:
    """A data plane and a stock aioboto3 client (botocore's parser, then TypeDeserializer) on one table."""

    loop: asyncio.AbstractEventLoop
    lean: DataPlane
    stock: Any
    table: str

    def run(self, work: Awaitable[T]) -> T:
        return self.loop.run_until_complete(work)

    def both(self, operation: str, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The answers of the data plane and of the stock client to the same request."""
        lean = self.run(self.lean.call(operation, params))
        stock = self.run(getattr(self.stock, _method(operation))(**params))
        return lean, stock

    def errors(self, operation: str, params: dict[str, Any]) -> tuple[ClientError, ClientError]:
        """The errors the data plane and the stock client raise for the same request."""
        raised: list[ClientError] = []
        for send in (self.lean.call(operation, params), getattr(self.stock, _method(operation))(**params)):
            with pytest.raises(ClientError) as caught:
                self.run(send)
            raised.append(caught.value)
        return raised[0], raised[1]


def _method(operation: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in operation).lstrip("_")


async def _open(stack: AsyncExitStack, endpoint: str, table: str) -> tuple[DataPlane, Any]:
    store = await stack.enter_async_context(Store.open(Settings(endpoint_url=endpoint, table=table), MODEL))
    assert store._plane is not None
    stock = await stack.enter_async_context(
        aioboto3.Session().client(
            "dynamodb",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )
    )
    return store._plane, stock


@pytest.fixture(scope="module")
def table(dynamodb: Any) -> Iterator[str]:
    name = f"plane-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def pair(endpoint: str, table: str) -> Iterator[Pair]:
    loop = asyncio.new_event_loop()
    stack = AsyncExitStack()
    try:
        lean, stock = loop.run_until_complete(_open(stack, endpoint, table))
        yield Pair(loop, lean, stock, table)
    finally:
        loop.run_until_complete(stack.aclose())
        loop.close()


def _answer(response: dict[str, Any], *items: str) -> dict[str, Any]:
    """What the store reads of an answer: ResponseMetadata is the transport's, not DynamoDB's."""
    return {name: value for name, value in response.items() if name not in ("ResponseMetadata", *items)}


# --- every request the gateway sends, with every kind of attribute value ------------------------------------------


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item=_items, other=_items)
def test_every_request_answers_as_the_stock_client_does(
    pair: Pair, item: dict[str, Any], other: dict[str, Any]
) -> None:
    pk = f"PLANE#{uuid.uuid4().hex}"
    first = {**item, "PK": pk, "SK": "A#1"}
    second = {**other, "PK": pk, "SK": "A#2"}
    table = pair.table
    keys = [{"PK": {"S": pk}, "SK": {"S": sk}} for sk in ("A#1", "A#2", "A#3")]

    written = pair.run(
        pair.lean.call("PutItem", {"TableName": table, "Item": _wire(first), "ReturnConsumedCapacity": "TOTAL"})
    )
    assert written["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    put = {"TableName": table, "Item": _wire(second), "ReturnValues": "ALL_OLD"}
    pair.run(pair.lean.call("PutItem", put))
    lean, stock = pair.both("PutItem", put)
    assert _typed(lean["Attributes"]) == _typed(_decoded(stock["Attributes"]))
    assert lean["Attributes"] == second

    get = {"TableName": table, "Key": keys[0], "ConsistentRead": True, "ReturnConsumedCapacity": "TOTAL"}
    lean, stock = pair.both("GetItem", get)
    assert _typed(lean["Item"]) == _typed(_decoded(stock["Item"]))
    assert lean["Item"] == first
    assert _answer(lean, "Item") == _answer(stock, "Item")

    query = {
        "TableName": table,
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :sk)",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":sk": {"S": "A#"}},
        "Limit": 1,
        "ConsistentRead": True,
        "ReturnConsumedCapacity": "TOTAL",
    }
    lean, stock = pair.both("Query", query)
    assert _typed(lean["Items"]) == _typed([_decoded(raw) for raw in stock["Items"]])
    assert lean["Items"] == [first]
    assert _answer(lean, "Items") == _answer(stock, "Items")
    assert lean["LastEvaluatedKey"] == keys[0]

    batch = {"RequestItems": {table: {"Keys": keys, "ConsistentRead": True}}, "ReturnConsumedCapacity": "TOTAL"}
    lean, stock = pair.both("BatchGetItem", batch)
    by_sort = sorted(lean["Responses"][table], key=lambda found: str(found["SK"]))
    stock_items = sorted((_decoded(raw) for raw in stock["Responses"][table]), key=lambda found: str(found["SK"]))
    assert _typed(by_sort) == _typed(stock_items)
    assert by_sort == [first, second]
    assert _answer(lean, "Responses") == _answer(stock, "Responses")

    update = {
        "TableName": table,
        "Key": keys[1],
        "UpdateExpression": "SET #v = :v",
        "ExpressionAttributeNames": {"#v": "value"},
        "ExpressionAttributeValues": {":v": _serializer.serialize(item)},
        "ReturnValues": "ALL_NEW",
        "ReturnConsumedCapacity": "TOTAL",
    }
    lean, stock = pair.both("UpdateItem", update)
    assert _typed(lean["Attributes"]) == _typed(_decoded(stock["Attributes"]))
    assert lean["Attributes"] == {**second, "value": item}
    assert _answer(lean, "Attributes") == _answer(stock, "Attributes")

    transaction = {
        "TransactItems": [
            {"Put": {"TableName": table, "Item": _wire({**first, "SK": "A#3"})}},
            {"ConditionCheck": {"TableName": table, "Key": keys[0], "ConditionExpression": "attribute_exists(PK)"}},
        ],
        "ReturnConsumedCapacity": "TOTAL",
    }
    lean, stock = pair.both("TransactWriteItems", transaction)
    assert _answer(lean) == _answer(stock)

    writes = {"RequestItems": {table: [{"DeleteRequest": {"Key": keys[2]}}]}}
    lean, stock = pair.both("BatchWriteItem", writes)
    assert _answer(lean) == _answer(stock) == {"UnprocessedItems": {}}

    delete = {"TableName": table, "Key": keys[0], "ReturnValues": "ALL_OLD"}
    lean = pair.run(pair.lean.call("DeleteItem", delete))
    assert lean["Attributes"] == first
    stock = pair.run(pair.stock.delete_item(**delete))
    assert "Attributes" not in stock


def _refused(error: ClientError) -> dict[str, Any]:
    """Everything of a refusal that the store or a log reads."""
    response: Any = error.response
    return {
        "error": response["Error"],
        "status": response["ResponseMetadata"]["HTTPStatusCode"],
        "attempts": response["ResponseMetadata"]["RetryAttempts"],
        "item": response.get("Item"),
        "reasons": response.get("CancellationReasons"),
        "text": str(error),
    }


def test_refusals_and_errors_are_the_stock_clients(pair: Pair) -> None:
    pk = f"PLANE#{uuid.uuid4().hex}"
    stored = {"PK": pk, "SK": "A", "blob": b"\x00\xff", "n": 5, "tags": {"x"}}
    key = {"PK": {"S": pk}, "SK": {"S": "A"}}
    pair.run(pair.stock.put_item(TableName=pair.table, Item=_wire(stored)))
    cases = {
        "a refused condition, with the item": (
            "PutItem",
            {
                "TableName": pair.table,
                "Item": _wire(stored),
                "ConditionExpression": "attribute_not_exists(PK)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            },
        ),
        "a cancelled transaction, with its reasons": (
            "TransactWriteItems",
            {
                "TransactItems": [
                    {"Put": {"TableName": pair.table, "Item": _wire({**stored, "SK": "B"})}},
                    {
                        "Update": {
                            "TableName": pair.table,
                            "Key": key,
                            "UpdateExpression": "SET n = n + :one",
                            "ConditionExpression": "n = :zero",
                            "ExpressionAttributeValues": {":one": {"N": "1"}, ":zero": {"N": "0"}},
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                        }
                    },
                ],
                "ClientRequestToken": uuid.uuid4().hex,
            },
        ),
        "a missing table": (
            "Query",
            {
                "TableName": "no-such-table",
                "KeyConditionExpression": "PK = :p",
                "ExpressionAttributeValues": {":p": {"S": "x"}},
            },
        ),
        "an invalid request": ("GetItem", {"TableName": pair.table, "Key": {"PK": {"S": pk}}}),
    }
    codes = []
    for operation, params in cases.values():
        lean, stock = pair.errors(operation, params)
        assert _refused(lean) == _refused(stock)
        codes.append(lean.response["Error"]["Code"])
    assert codes == [
        "ConditionalCheckFailedException",
        "TransactionCanceledException",
        "ResourceNotFoundException",
        "ValidationException",
    ]


def test_unprocessed_keys_come_back_as_the_stock_client_returns_them(pair: Pair, dynamodb: Any) -> None:
    # BatchGetItem answers at most 16 MB: 60 items of 380 KB leave keys unprocessed.
    pk = f"PLANE#{uuid.uuid4().hex}"
    for n in range(60):
        dynamodb.put_item(TableName=pair.table, Item=_wire({"PK": pk, "SK": f"S#{n:02d}", "cv": "c" * 380_000}))
    keys = [{"PK": {"S": pk}, "SK": {"S": f"S#{n:02d}"}} for n in range(60)]
    lean, stock = pair.both("BatchGetItem", {"RequestItems": {pair.table: {"Keys": keys}}})
    assert lean["UnprocessedKeys"] == stock["UnprocessedKeys"]
    unprocessed = lean["UnprocessedKeys"][pair.table]["Keys"]
    assert unprocessed and len(lean["Responses"][pair.table]) + len(unprocessed) == 60
    assert {item["SK"] for item in lean["Responses"][pair.table]} == {
        item["SK"]["S"] for item in stock["Responses"][pair.table]
    }
    # The store asks again for what was left unprocessed, on either path, until it has every item.
    for plane in PLANES:
        sent, found = pair.run(
            _batch_get(pair.lean.url, pair.table, plane, [{"PK": pk, "SK": f"S#{n:02d}"} for n in range(60)])
        )
        assert found == 60
        assert len(sent) >= 2 and set(sent) == {"BatchGetItem"}


async def _batch_get(endpoint: str, table: str, plane: str, keys: list[dict[str, str]]) -> tuple[list[str], int]:
    """The requests ``Store.batch_get`` sends for ``keys``, and the number of items it returns."""
    sent: list[str] = []
    async with Store.open(Settings(endpoint_url=endpoint, table=table, data_plane=plane), MODEL) as store:
        store.on_send(lambda operation, headers, body: sent.append(operation))
        result = await store.batch_get(keys, Ledger())
    return sent, len(result.items)


# --- SigV4 -------------------------------------------------------------------------------------------------------

_header_names = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"), min_size=1, max_size=12
).filter(
    lambda name: (
        name.lower()
        not in {"host", "authorization", "x-amz-date", "x-amz-security-token", "content-type", "x-amz-target"}
    )
)
_header_values = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)
_keys = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40)
_times = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda moment: moment.replace(microsecond=0, tzinfo=UTC)
)


@settings(max_examples=100, deadline=None)
@given(
    body=st.binary(max_size=300),
    extra=st.dictionaries(
        _header_names | st.sampled_from(["User-Agent", "Expect", "X-Amzn-Trace-Id", "Transfer-Encoding"]),
        _header_values,
        max_size=4,
    ),
    now=_times,
    access=_keys,
    secret=_keys,
    token=st.none() | _keys,
    region=st.sampled_from(["us-east-1", "eu-west-3", "ap-southeast-2"]),
    url=st.sampled_from(["https://dynamodb.us-east-1.amazonaws.com", "http://127.0.0.1:8000", "http://[::1]:80/"]),
)
def test_signatures_are_botocores(
    body: bytes,
    extra: dict[str, str],
    now: datetime,
    access: str,
    secret: str,
    token: str | None,
    region: str,
    url: str,
) -> None:
    unique = {name.lower(): (name, value) for name, value in extra.items()}
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem"}
    headers.update(unique.values())
    credentials = ReadOnlyCredentials(access, secret, token)
    ours = Signer(url, region).sign(credentials, dict(headers), body, now)
    request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    with mock.patch("botocore.auth.get_current_datetime", return_value=now.replace(tzinfo=None)):
        SigV4Auth(credentials, "dynamodb", region).add_auth(request)
    assert ours["Authorization"] == request.headers["Authorization"]
    assert ours["X-Amz-Date"] == request.headers["X-Amz-Date"]
    assert ours.get("X-Amz-Security-Token") == request.headers.get("X-Amz-Security-Token")


def test_the_signing_key_is_derived_once_a_day_and_again_for_new_credentials() -> None:
    signer = Signer("https://dynamodb.eu-west-3.amazonaws.com", "eu-west-3")
    evening = datetime(2026, 11, 23, 23, 59, 59, tzinfo=UTC)
    credentials = ReadOnlyCredentials("AKID", "secret", None)
    signed = []
    for moment in (evening - timedelta(hours=23), evening, evening + timedelta(seconds=1)):
        signer.sign(credentials, {"X-Amz-Target": "DynamoDB_20120810.GetItem"}, b"{}", moment)
        signed.append(signer.signing_key("secret", moment.strftime("%Y%m%d")))
    assert signed[0] is signed[1]
    assert signed[2] != signed[1]
    rotated = signer.signing_key("rotated", "20261124")
    assert rotated != signed[2]
    assert signer.signing_key("rotated", "20261124") is rotated


async def test_temporary_credentials_are_sent_with_their_session_token(endpoint: str, table: str) -> None:
    sent: list[dict[str, str]] = []
    session = aioboto3.Session(aws_access_key_id="ASIA", aws_secret_access_key="s", aws_session_token="the-token")
    async with session.client("dynamodb", endpoint_url=endpoint, region_name="eu-west-3") as client:
        plane = await DataPlane.open(client, table)
        assert plane is not None
        try:
            plane.hooks.sending.append(lambda operation, headers, body: sent.append(dict(headers)))
            await plane.call("GetItem", {"TableName": table, "Key": {"PK": {"S": "x"}, "SK": {"S": "y"}}})
        finally:
            await plane.close()
    (headers,) = sent
    assert headers["X-Amz-Security-Token"] == "the-token"
    assert "/eu-west-3/dynamodb/aws4_request" in headers["Authorization"]
    assert "x-amz-security-token" in headers["Authorization"].split("SignedHeaders=")[1]


async def test_aws_endpoints_resolve_as_the_client_resolves_them() -> None:
    session = aioboto3.Session(aws_access_key_id="AKID", aws_secret_access_key="s")
    async with session.client("dynamodb", region_name="eu-west-3") as client:
        plane = await DataPlane.open(client, "table")
        assert plane is not None
        await plane.close()
    assert plane.url == "https://dynamodb.eu-west-3.amazonaws.com"
    assert plane.signer.region == "eu-west-3" and plane.signer.host == "dynamodb.eu-west-3.amazonaws.com"


# --- retries ------------------------------------------------------------------------------------------------------


@settings(max_examples=50)
@given(attempt=st.integers(min_value=1, max_value=12), draw=st.floats(min_value=0, max_value=1))
def test_the_backoff_is_the_standard_modes(attempt: int, draw: float) -> None:
    context = RetryContext(attempt_number=attempt)
    expected = ExponentialBackoff(random=lambda: draw).delay_amount(context)
    with mock.patch("gateway.dynamo.dataplane.random.random", return_value=draw):
        assert _backoff(attempt) == expected


async def test_a_client_behind_an_http_proxy_keeps_the_stock_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    session = aioboto3.Session(aws_access_key_id="AKID", aws_secret_access_key="s")
    async with session.client("dynamodb", region_name="eu-west-3") as client:
        assert await DataPlane.open(client, "table") is None


# --- retries, through the fault-injecting proxy ---------------------------------------------------------------------

PLANES = ["lean", "stock"]


@pytest.fixture
def proxy(endpoint: str) -> Iterator[FaultProxy]:
    with FaultProxy(endpoint, seed=13) as running:
        yield running


async def _get_item(proxy: FaultProxy, table: str, plane: str, rules: list[Rule]) -> tuple[int, dict[str, int]]:
    """Attempts reaching the proxy, and calls accounted, for one GetItem of a missing item under ``rules``."""
    proxy.set_rules(rules)
    before = proxy.requests["GetItem"]
    ledger = Ledger()
    async with Store.open(Settings(endpoint_url=proxy.url, table=table, data_plane=plane), MODEL) as store:
        assert await store.get_item({"PK": "PLANE#none", "SK": "A"}, ledger) is None
    return proxy.requests["GetItem"] - before, ledger.summary()["operations"]


@pytest.mark.parametrize("kind", ["throttle", "drop_after"])
async def test_a_failed_attempt_is_retried_as_the_stock_client_retries_it(
    proxy: FaultProxy, table: str, kind: Any
) -> None:
    counts = [await _get_item(proxy, table, plane, [Rule(kind, times=2)]) for plane in PLANES]
    assert counts == [(3, {"GetItem": 1})] * 2


async def test_every_attempt_failing_is_the_same_error_after_the_same_attempts(
    proxy: FaultProxy, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No waiting between attempts on the lean path: the backoff has its own test above.
    monkeypatch.setattr("gateway.dynamo.dataplane._backoff", lambda attempt: 0.0)
    errors = []
    for plane in PLANES:
        proxy.set_rules([Rule("throttle")])
        before = proxy.requests["GetItem"]
        async with Store.open(Settings(endpoint_url=proxy.url, table=table, data_plane=plane), MODEL) as store:
            call = store._request("GetItem", TableName=table, Key={"PK": {"S": "x"}, "SK": {"S": "y"}})
            with pytest.raises(ClientError) as caught:
                await call
        errors.append((proxy.requests["GetItem"] - before, _refused(caught.value)))
    assert errors[0] == errors[1]
    assert errors[0][0] == 5 and errors[0][1]["attempts"] == 4


@pytest.mark.parametrize("plane", PLANES)
async def test_a_write_whose_answer_was_lost_is_known_to_be_uncertain(
    proxy: FaultProxy, table: str, plane: str, dynamodb: Any
) -> None:
    pk = f"PLANE#{uuid.uuid4().hex}"
    dynamodb.put_item(TableName=table, Item=_wire({"PK": pk, "SK": "A", "version": 1}))
    bump = WriteOp(
        "Update",
        {"PK": pk, "SK": "A"},
        Target(MODEL.entities[0], {}, "item"),
        update="SET version = :next",
        condition="version = :expected",
        values={":next": 2, ":expected": 1},
    )
    proxy.set_rules([Rule("drop_after", operations=frozenset({"UpdateItem"}), times=1)])
    async with Store.open(Settings(endpoint_url=proxy.url, table=table, data_plane=plane), MODEL) as store:
        with pytest.raises(Refused) as refused:
            await store.write([bump], Ledger())
    assert refused.value.uncertain
    assert [reason.code for reason in refused.value.reasons] == ["ConditionalCheckFailed"]
    assert refused.value.reasons[0].item == {"PK": pk, "SK": "A", "version": 2}
    assert [e.fault for e in proxy.exchanges if e.operation == "UpdateItem"] == ["drop_after", None]
