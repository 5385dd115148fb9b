"""The store: the only module that talks to DynamoDB. GetItem-free: point reads are batched, lists are Queries.

There is no Scan here, by design; ``ClientError`` and connection failures become our own errors here.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import aioboto3
from aiobotocore.config import AioConfig
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from gateway.accounting import Ledger
from gateway.config import Settings
from gateway.errors import GatewayError, Throttled, Unavailable
from gateway.model import Item, Model

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient
    from types_aiobotocore_dynamodb.type_defs import GlobalSecondaryIndexTypeDef

log = logging.getLogger(__name__)

BATCH_GET_LIMIT = 100
BATCH_WRITE_LIMIT = 25
UNPROCESSED_ATTEMPTS = 8
_THROTTLING = {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

Key = dict[str, str]


@dataclass(frozen=True)
class QueryRequest:
    """One Query, built by the planner and sent by the store; ``limit`` is the number of items wanted."""

    partition: tuple[str, str]
    sort: tuple[str, str, str] | None = None
    """(attribute, operator, value) with operator one of ``begins_with``, ``<=``, ``>=``."""
    index: str | None = None
    ascending: bool = True
    limit: int = 20
    start_key: Key | None = None

    def params(self, table: str) -> dict[str, Any]:
        pk_name, pk_value = self.partition
        names = {"#pk": pk_name}
        values: dict[str, Any] = {":pk": {"S": pk_value}}
        condition = "#pk = :pk"
        if self.sort is not None:
            sk_name, operator, sk_value = self.sort
            names["#sk"] = sk_name
            values[":sk"] = {"S": sk_value}
            condition += " AND begins_with(#sk, :sk)" if operator == "begins_with" else f" AND #sk {operator} :sk"
        params: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": self.ascending,
            "ReturnConsumedCapacity": "TOTAL",
        }
        if self.index is not None:
            params["IndexName"] = self.index
        if self.start_key is not None:
            params["ExclusiveStartKey"] = {k: {"S": v} for k, v in self.start_key.items()}
        return params


@dataclass(frozen=True)
class QueryResult:
    items: list[Item]
    last_key: Key | None = field(default=None)


class Store:
    def __init__(self, client: DynamoDBClient, model: Model) -> None:
        self._client = client
        self.model = model
        self.table = model.table

    @classmethod
    @asynccontextmanager
    async def open(cls, settings: Settings, model: Model) -> AsyncIterator[Store]:
        """One client per process: connections are pooled and reused across requests."""
        config = AioConfig(
            retries={"mode": "standard", "max_attempts": 4},
            max_pool_connections=settings.max_pool_connections,
            connect_timeout=5,
            read_timeout=10,
        )
        # DynamoDB Local accepts any credentials but refuses requests without them.
        local = bool(settings.endpoint_url) and urlparse(settings.endpoint_url).hostname in _LOCAL_HOSTS
        session = aioboto3.Session()
        async with session.client(
            "dynamodb",
            endpoint_url=settings.endpoint_url,
            region_name=settings.region,
            config=config,
            aws_access_key_id="local" if local else None,
            aws_secret_access_key="local" if local else None,
        ) as client:
            yield cls(client, model.with_table(settings.table))

    # --- reads --------------------------------------------------------------------------------------------

    async def batch_get(self, keys: Sequence[Key], ledger: Ledger) -> list[Item]:
        """Items for ``keys`` in any order, missing ones omitted; chunks of 100 are sent at once."""
        unique = list({_key_id(key): key for key in keys}.values())
        chunks = [unique[i : i + BATCH_GET_LIMIT] for i in range(0, len(unique), BATCH_GET_LIMIT)]
        results = await asyncio.gather(*(self._batch_get_chunk(chunk, ledger) for chunk in chunks))
        return [item for chunk in results for item in chunk]

    async def _batch_get_chunk(self, keys: list[Key], ledger: Ledger) -> list[Item]:
        items: list[Item] = []
        request: dict[str, Any] = {self.table: {"Keys": [_wire_key(key) for key in keys]}}
        for attempt in range(UNPROCESSED_ATTEMPTS):
            started = time.perf_counter()
            response = await self._call(
                self._client.batch_get_item, RequestItems=request, ReturnConsumedCapacity="TOTAL"
            )
            ledger.record("BatchGetItem", started, _capacity(response.get("ConsumedCapacity")))
            items.extend(_item(raw) for raw in response.get("Responses", {}).get(self.table, []))
            request = response.get("UnprocessedKeys") or {}
            if not request:
                return items
            await asyncio.sleep(_backoff(attempt))
        raise Throttled("DynamoDB kept returning unprocessed keys; try again shortly")

    async def query(self, request: QueryRequest, ledger: Ledger) -> QueryResult:
        """Up to ``request.limit`` items, following 1 MB pages until the limit is reached or the data ends."""
        items: list[Item] = []
        start_key = request.start_key
        while True:
            params = request.params(self.table)
            params["Limit"] = request.limit - len(items)
            if start_key is not None:
                params["ExclusiveStartKey"] = _wire_key(start_key)
            started = time.perf_counter()
            response = await self._call(self._client.query, **params)
            ledger.record("Query", started, _capacity(response.get("ConsumedCapacity")))
            items.extend(_item(raw) for raw in response.get("Items", []))
            last = response.get("LastEvaluatedKey")
            start_key = {k: v["S"] for k, v in last.items()} if last else None
            if start_key is None or len(items) >= request.limit:
                return QueryResult(items, start_key)

    async def ping(self) -> bool:
        """Whether the table answers; used by the health check."""
        try:
            await self._call(self._client.describe_table, TableName=self.table)
        except GatewayError:
            return False
        return True

    # --- administration and seeding -------------------------------------------------------------------------

    async def create_table(self) -> bool:
        """Create the table and its indexes as the model declares them; False when it already exists."""
        attributes = sorted({name for index in self.model.indexes for name in (index.pk, index.sk)})
        table_index = self.model.index(None)
        gsis: list[GlobalSecondaryIndexTypeDef] = [
            {
                "IndexName": index.name,
                "KeySchema": [
                    {"AttributeName": index.pk, "KeyType": "HASH"},
                    {"AttributeName": index.sk, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index in self.model.indexes
            if index.name is not None
        ]
        try:
            await self._client.create_table(
                TableName=self.table,
                BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in attributes],
                KeySchema=[
                    {"AttributeName": table_index.pk, "KeyType": "HASH"},
                    {"AttributeName": table_index.sk, "KeyType": "RANGE"},
                ],
                GlobalSecondaryIndexes=gsis,
            )
        except ClientError as error:
            if _code(error) != "ResourceInUseException":
                raise _translate(error) from error
            await self._check_existing_table()
            return False
        except (BotoCoreError, EndpointConnectionError) as error:
            raise _translate(error) from error
        waiter = self._client.get_waiter("table_exists")
        await waiter.wait(TableName=self.table, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        return True

    async def _check_existing_table(self) -> None:
        description = (await self._client.describe_table(TableName=self.table))["Table"]
        table_index = self.model.index(None)
        keys = {(k["AttributeName"], k["KeyType"]) for k in description.get("KeySchema", [])}
        if keys != {(table_index.pk, "HASH"), (table_index.sk, "RANGE")}:
            raise GatewayError(f"table {self.table!r} exists with another key schema: {sorted(keys)}")
        existing = {gsi["IndexName"] for gsi in description.get("GlobalSecondaryIndexes", [])}
        missing = [index.name for index in self.model.indexes if index.name and index.name not in existing]
        if missing:
            raise GatewayError(f"table {self.table!r} exists without the indexes {missing}")

    async def put_items(self, items: Iterable[Item]) -> int:
        """Write items in batches of 25, retrying unprocessed ones; for seeding and maintenance."""
        batch: list[Item] = []
        count = 0
        for item in items:
            batch.append(item)
            if len(batch) == BATCH_WRITE_LIMIT:
                count += await self._write_batch(batch)
                batch = []
        if batch:
            count += await self._write_batch(batch)
        return count

    async def _write_batch(self, items: list[Item]) -> int:
        request: dict[str, Any] = {self.table: [{"PutRequest": {"Item": _wire_item(item)}} for item in items]}
        for attempt in range(UNPROCESSED_ATTEMPTS):
            response = await self._call(self._client.batch_write_item, RequestItems=request)
            request = response.get("UnprocessedItems") or {}
            if not request:
                return len(items)
            await asyncio.sleep(_backoff(attempt))
        raise Throttled("DynamoDB kept returning unprocessed items; try again shortly")

    async def _call(self, method: Any, **params: Any) -> Any:
        try:
            return await method(**params)
        except (ClientError, BotoCoreError) as error:
            raise _translate(error) from error


def _translate(error: Exception) -> GatewayError:
    if isinstance(error, ClientError):
        code = _code(error)
        if code in _THROTTLING:
            return Throttled("DynamoDB is throttling requests; try again shortly")
        if code == "ResourceNotFoundException":
            return Unavailable("the table is not available")
        log.error("DynamoDB refused a request: %s", error)
        return GatewayError(f"DynamoDB refused a request ({code})")
    log.warning("DynamoDB could not be reached: %s", error)
    return Unavailable("DynamoDB could not be reached")


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _backoff(attempt: int) -> float:
    return random.uniform(0, min(1.0, 0.025 * 2**attempt))


def _capacity(consumed: Any) -> float:
    if isinstance(consumed, list):
        return float(sum(entry.get("CapacityUnits", 0) for entry in consumed))
    if isinstance(consumed, dict):
        return float(consumed.get("CapacityUnits", 0))
    return 0.0


def _key_id(key: Key) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(key.items()))


def _wire_key(key: Key) -> dict[str, Any]:
    return {name: {"S": value} for name, value in key.items()}


def _wire_item(item: Item) -> dict[str, Any]:
    return {name: _serializer.serialize(value) for name, value in item.items()}


def _item(raw: dict[str, Any]) -> Item:
    return {name: _deserializer.deserialize(value) for name, value in raw.items()}
