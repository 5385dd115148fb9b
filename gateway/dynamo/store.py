"""The store: every request to the table (the stream has a client of its own, ``dynamo.streams``). Point reads
are batched, lists are Queries.

Writes are conditional, alone or in one transaction; GetItem only reads back what a write just did. The one
Scan, ``scan_pages``, exists for the offline ``tablegraph recount`` and ``check --full``, never used while serving.
``ClientError`` and connection failures become our own errors through ``dynamo.client.translate``.
"""

from __future__ import annotations

import asyncio
import logging
import random
from base64 import b64decode, b64encode
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import aioboto3
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore import xform_name
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from gateway.config import Settings
from gateway.design.model import Index, Item, KeyType, Model
from gateway.dynamo import accounting
from gateway.dynamo.accounting import Ledger, capacity_units, next_round
from gateway.dynamo.client import client_options, error_code, translate
from gateway.dynamo.dataplane import OPERATIONS, DataPlane, Hooks, Send
from gateway.dynamo.requests import TRANSACTION_LIMIT, Filter, Reason, Refused, WriteOp, expression
from gateway.dynamo.wire import install_fast_reads
from gateway.errors import GatewayError, Throttled

if TYPE_CHECKING:
    from typing import Literal, NotRequired, TypedDict

    from types_aiobotocore_dynamodb import DynamoDBClient
    from types_aiobotocore_dynamodb.type_defs import (
        AttributeDefinitionTypeDef,
        GlobalSecondaryIndexTypeDef,
        KeySchemaElementTypeDef,
        LocalSecondaryIndexTypeDef,
        ProjectionTypeDef,
        StreamSpecificationTypeDef,
    )

    class CreateTableDefinition(TypedDict):
        BillingMode: Literal["PAY_PER_REQUEST"]
        AttributeDefinitions: list[AttributeDefinitionTypeDef]
        KeySchema: list[KeySchemaElementTypeDef]
        GlobalSecondaryIndexes: NotRequired[list[GlobalSecondaryIndexTypeDef]]
        LocalSecondaryIndexes: NotRequired[list[LocalSecondaryIndexTypeDef]]
        StreamSpecification: StreamSpecificationTypeDef


log = logging.getLogger(__name__)

BATCH_GET_LIMIT = 100
_MISSING_ITEM_UNITS = 0.5
"""The read capacity an eventually consistent read of a missing (or small) item costs."""
BATCH_WRITE_LIMIT = 25
UNPROCESSED_ATTEMPTS = 8

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

_attempts: ContextVar[list[bool] | None] = ContextVar("tablegraph_write_attempts", default=None)
"""For the write this task is sending: per attempt, whether it ended without a definite answer."""

Key = dict[str, str]
"""Key attributes by name, each as text: a number key's decimal digits, a binary key's base64 (``Model.key``)."""
_TEXT_KEYS: Mapping[str, KeyType] = {}


@dataclass(frozen=True)
class QueryRequest:
    """One Query, built by the planner and sent by the store; ``limit`` is the number of items wanted."""

    partition: tuple[str, str]
    sort: tuple[str, str, str] | None = None
    """(attribute, operator, value) with operator one of ``begins_with``, ``<=``, ``>=``, ``between``."""
    index: str | None = None
    ascending: bool = True
    limit: int = 20
    start_key: Key | None = None
    sort_end: str | None = None
    """The upper bound, inclusive, of a ``between`` sort condition."""
    filter: Filter | None = None
    """Applied by DynamoDB after it reads: ``limit`` then bounds the items read, not those returned."""
    consistent: bool = False
    """``ConsistentRead``: on the table or a local index only."""

    def params(self, table: str, types: Mapping[str, KeyType] = _TEXT_KEYS) -> dict[str, Any]:
        """The Query's parameters; ``types``: the key attributes that are no text (``Model.key_types``)."""
        pk_name, pk_value = self.partition
        names = {"#pk": pk_name}
        values: dict[str, Any] = {":pk": _wire_key_value(types, pk_name, pk_value)}
        condition = "#pk = :pk"
        if self.sort is not None:
            sk_name, operator, sk_value = self.sort
            names["#sk"] = sk_name
            values[":sk"] = _wire_key_value(types, sk_name, sk_value)
            if operator == "begins_with":
                condition += " AND begins_with(#sk, :sk)"
            elif operator == "between":
                assert self.sort_end is not None
                values[":sk_end"] = _wire_key_value(types, sk_name, self.sort_end)
                condition += " AND #sk BETWEEN :sk AND :sk_end"
            else:
                condition += f" AND #sk {operator} :sk"
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
        if self.consistent:
            params["ConsistentRead"] = True
        if self.start_key is not None:
            params["ExclusiveStartKey"] = _wire_key(self.start_key, types)
        if self.filter is not None:
            params["FilterExpression"], filter_names, filter_values = expression(self.filter)
            names.update(filter_names)
            values.update(filter_values)
        return params


@dataclass(frozen=True)
class BatchResult:
    items: list[Item]
    round: int
    """The round of the last call that answered: what is read with these items comes after it."""


@dataclass(frozen=True)
class QueryResult:
    items: list[Item]
    last_key: Key | None = field(default=None)


class Store:
    def __init__(
        self,
        client: DynamoDBClient,
        model: Model,
        decode: Callable[[dict[str, Any]], Item] | None = None,
        plane: DataPlane | None = None,
    ) -> None:
        """``plane`` sends the data-plane requests when given; ``client`` sends every other one, and all of them
        without it. ``decode`` reads the items of reads, the data plane's writes' too when it decodes them."""
        self._client = client
        self._plane = plane
        self.model = model
        self.table = model.table
        self._types = model.key_types
        self._decode = decode or _item
        self._written = self._decode if plane is not None and plane.decode_items else _item
        self.hooks = plane.hooks if plane is not None else Hooks()
        """What both paths do, told as the data plane tells it: observation and tests attach here."""
        self.hooks.attempted.append(_attempt_ended)
        _forward_events(client.meta.events, self.hooks)

    def on_send(self, listener: Send) -> None:
        """Call ``listener`` with the operation, headers and body of every request as it is sent, either path."""
        self.hooks.sending.append(listener)

    @classmethod
    @asynccontextmanager
    async def open(cls, settings: Settings, model: Model) -> AsyncIterator[Store]:
        """One client per process: connections are pooled and reused across requests."""
        options = client_options(
            settings,
            max_pool_connections=settings.max_pool_connections,
            # A fixed User-Agent: botocore otherwise rebuilds its own twice per call, 0.1 ms of CPU each time.
            user_agent=f"tablegraph aiobotocore/{version('aiobotocore')}",
            # Every request is built by this module from validated ids and tested builders, and DynamoDB checks
            # each one again; botocore's own walk over the parameters costs 2 ms for a 100-key BatchGetItem.
            parameter_validation=False,
        )
        session = aioboto3.Session()
        model = model.with_table(settings.table or model.table)
        decode = _already_decoded if settings.fast_decode else None
        async with session.client("dynamodb", **options) as client:
            if settings.fast_decode:
                install_fast_reads(client)
            if settings.data_plane == "stock":
                yield cls(client, model, decode)
                return
            plane = await DataPlane.open(client, model.table, decode_items=settings.fast_decode)
            if plane is None:
                log.warning("DynamoDB is reached through an HTTP proxy: every request goes through aioboto3")
                yield cls(client, model, decode)
                return
            try:
                yield cls(client, model, decode, plane)
            finally:
                await plane.close()

    # --- reads --------------------------------------------------------------------------------------------

    async def batch_get(self, keys: Sequence[Key], ledger: Ledger, round_: int | None = None) -> BatchResult:
        """Items for ``keys`` in any order, missing ones omitted; chunks of 100 are sent at once.

        ``round_`` is the round the keys were asked for in: a loader collects keys from several tasks.
        """
        unique = list({_key_id(key): key for key in keys}.values())
        chunks = [unique[i : i + BATCH_GET_LIMIT] for i in range(0, len(unique), BATCH_GET_LIMIT)]
        first = next_round() if round_ is None else round_
        results = await accounting.gather(*(self._batch_get_chunk(chunk, ledger, first) for chunk in chunks))
        last = max((answered for _, answered in results), default=first - 1)
        return BatchResult([item for chunk, _ in results for item in chunk], last)

    async def _batch_get_chunk(self, keys: list[Key], ledger: Ledger, round_: int) -> tuple[list[Item], int]:
        items: list[Item] = []
        request: dict[str, Any] = {self.table: {"Keys": [_wire_key(key, self._types) for key in keys]}}
        for attempt in range(UNPROCESSED_ATTEMPTS):
            # A key whose item is missing costs a read as much as a small item does (DynamoDB charges the minimum;
            # DynamoDB Local reports nothing): accounted so, an answer the guard withholds from the caller reads
            # the same whether the item exists or not.
            floor = _MISSING_ITEM_UNITS * len(request[self.table]["Keys"])
            response, answered = await self._send(
                "BatchGetItem",
                ledger,
                round_ + attempt,
                floor,
                RequestItems=request,
                ReturnConsumedCapacity="TOTAL",
            )
            items.extend(self._decode(raw) for raw in response.get("Responses", {}).get(self.table, []))
            request = response.get("UnprocessedKeys") or {}
            if not request:
                return items, answered
            await asyncio.sleep(_backoff(attempt))
        raise Throttled("DynamoDB kept returning unprocessed keys; try again shortly")

    async def query(self, request: QueryRequest, ledger: Ledger) -> QueryResult:
        """Up to ``request.limit`` items, following 1 MB pages until the limit is reached or the data ends."""
        items: list[Item] = []
        start_key = request.start_key
        while True:
            params = request.params(self.table, self._types)
            params["Limit"] = request.limit - len(items)
            if start_key is not None:
                params["ExclusiveStartKey"] = _wire_key(start_key, self._types)
            response, _ = await self._send("Query", ledger, None, **params)
            items.extend(self._decode(raw) for raw in response.get("Items", []))
            last = response.get("LastEvaluatedKey")
            start_key = _key_of(last) if last else None
            if start_key is None or len(items) >= request.limit:
                return QueryResult(items, start_key)

    async def query_once(self, request: QueryRequest, ledger: Ledger) -> QueryResult:
        """One Query call reading at most ``request.limit`` items (returning those its filter keeps)."""
        params = request.params(self.table, self._types)
        params["Limit"] = request.limit
        response, _ = await self._send("Query", ledger, None, **params)
        last = response.get("LastEvaluatedKey")
        items = [self._decode(raw) for raw in response.get("Items", [])]
        return QueryResult(items, _key_of(last) if last else None)

    async def ping(self) -> bool:
        """Whether the table answers; used by the health check."""
        try:
            await self._call("DescribeTable", TableName=self.table)
        except GatewayError:
            return False
        return True

    # --- writes -----------------------------------------------------------------------------------------------

    async def write(self, ops: Sequence[WriteOp], ledger: Ledger) -> Item | None:
        """Apply ``ops`` all or none: one conditional write alone, or one TransactWriteItems.

        A refused condition raises ``Refused`` with a reason per op and the item as it was (ALL_OLD), and says
        whether an earlier attempt may have been applied (its answer was lost). Writes that lost a race with
        another transaction are sent again after a backoff. Botocore gives a transaction a ``ClientRequestToken``
        that its retries share, so DynamoDB answers the retry of an applied transaction as the first time. A
        single Update returns the item as it is after the write.
        """
        if not 0 < len(ops) <= TRANSACTION_LIMIT:
            raise ValueError(f"a write has 1 to {TRANSACTION_LIMIT} items, not {len(ops)}")
        single = len(ops) == 1 and ops[0].action != "ConditionCheck"
        operation = f"{ops[0].action}Item" if single else "TransactWriteItems"
        uncertain = False
        for attempt in range(UNPROCESSED_ATTEMPTS):
            seen: list[bool] = []
            noting = _attempts.set(seen)
            try:
                if single:
                    response = await self._write_one(ops[0])
                else:
                    response = await self._request(
                        "TransactWriteItems",
                        TransactItems=[{op.action: self._wire_op(op)} for op in ops],
                        ReturnConsumedCapacity="TOTAL",
                    )
            except ClientError as error:
                ledger.record(operation)
                uncertain = uncertain or any(seen)
                reasons = _refusal(error, len(ops))
                if reasons is None:
                    raise translate(error) from error
                if any(reason.code == "TransactionConflict" for reason in reasons):
                    await asyncio.sleep(_backoff(attempt))
                    continue
                raise Refused(reasons, uncertain) from error
            except BotoCoreError as error:
                ledger.record(operation)
                raise translate(error) from error
            finally:
                _attempts.reset(noting)
            ledger.record(operation, capacity_units(response.get("ConsumedCapacity")))
            attributes = response.get("Attributes")
            return self._written(attributes) if attributes else None
        raise Throttled("the write kept conflicting with other transactions; try again shortly")

    async def _write_one(self, op: WriteOp) -> Any:
        params: dict[str, Any] = {**self._wire_op(op), "ReturnConsumedCapacity": "TOTAL"}
        if op.action == "Update":
            params["ReturnValues"] = "ALL_NEW"
        return await self._request(f"{op.action}Item", **params)

    def _wire_op(self, op: WriteOp) -> dict[str, Any]:
        body: dict[str, Any] = {"TableName": self.table, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
        if op.action == "Put":
            # Its key attributes are text, as Model.item writes them: a number or binary key is sent as its type.
            item = op.item or {}
            body["Item"] = _wire_item(self.model.stored(item) if self._types else item)
        else:
            body["Key"] = _wire_key(op.key, self._types)
        if op.update is not None:
            body["UpdateExpression"] = op.update
        if op.condition is not None:
            body["ConditionExpression"] = op.condition
        if op.names:
            body["ExpressionAttributeNames"] = op.names
        if op.values:
            body["ExpressionAttributeValues"] = _wire_item(op.values)
        return body

    async def get_item(self, key: Key, ledger: Ledger) -> Item | None:
        """One item, strongly consistent: reading back what a write just did, never for serving reads."""
        response, _ = await self._send(
            "GetItem",
            ledger,
            None,
            TableName=self.table,
            Key=_wire_key(key, self._types),
            ConsistentRead=True,
            ReturnConsumedCapacity="TOTAL",
        )
        raw = response.get("Item")
        return self._decode(raw) if raw else None

    async def query_pages(self, request: QueryRequest, ledger: Ledger) -> AsyncIterator[list[Item]]:
        """Every item ``request`` matches, a page of at most ``request.limit`` at a time; for cascades."""
        start_key = request.start_key
        while True:
            params = {**request.params(self.table, self._types), "Limit": request.limit}
            if start_key is not None:
                params["ExclusiveStartKey"] = _wire_key(start_key, self._types)
            response, _ = await self._send("Query", ledger, None, **params)
            items = [self._decode(raw) for raw in response.get("Items", [])]
            if items:
                yield items
            last = response.get("LastEvaluatedKey")
            if not last:
                return
            start_key = _key_of(last)

    async def scan_pages(self, ledger: Ledger, segment: tuple[int, int] | None = None) -> AsyncIterator[list[Item]]:
        """Every item of the table (of one ``(segment, total segments)`` of it), a page at a time. Only the offline
        ``tablegraph recount`` and ``tablegraph check --full`` may use this."""
        start: dict[str, Any] | None = None
        while True:
            params: dict[str, Any] = {"TableName": self.table, "ReturnConsumedCapacity": "TOTAL"}
            if segment is not None:
                params["Segment"], params["TotalSegments"] = segment
            if start is not None:
                params["ExclusiveStartKey"] = start
            response, _ = await self._send("Scan", ledger, None, **params)
            yield [_item(raw) for raw in response.get("Items", [])]
            start = response.get("LastEvaluatedKey")
            if not start:
                return

    async def estimated_item_count(self) -> int:
        """DynamoDB's item count for the table, refreshed about every six hours: good for a progress bar."""
        return int((await self.describe()).get("ItemCount", 0))

    async def describe(self) -> dict[str, Any]:
        """The table as DescribeTable answers: its keys, indexes, projections and stream."""
        description: dict[str, Any] = (await self._call("DescribeTable", TableName=self.table))["Table"]
        return description

    # --- administration and seeding -------------------------------------------------------------------------

    async def create_table(self) -> bool:
        """Create the table and its indexes as the model declares them; False when it already exists."""
        try:
            await self._client.create_table(TableName=self.table, **table_definition(self.model))
        except ClientError as error:
            if error_code(error) != "ResourceInUseException":
                raise translate(error) from error
            await self._check_existing_table()
            return False
        except (BotoCoreError, EndpointConnectionError) as error:
            raise translate(error) from error
        waiter = self._client.get_waiter("table_exists")
        await waiter.wait(TableName=self.table, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        if self.model.expires_attribute is not None:
            await self._call(
                "UpdateTimeToLive",
                TableName=self.table,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": self.model.expires_attribute},
            )
        return True

    async def _check_existing_table(self) -> None:
        description = (await self._client.describe_table(TableName=self.table))["Table"]
        table_index = self.model.index(None)
        keys = {(k["AttributeName"], k["KeyType"]) for k in description.get("KeySchema", [])}
        if keys != _key_schema(table_index):
            raise GatewayError(f"table {self.table!r} exists with another key schema: {sorted(keys)}")
        described = [*description.get("GlobalSecondaryIndexes", []), *description.get("LocalSecondaryIndexes", [])]
        existing = {
            one["IndexName"]: {(k["AttributeName"], k["KeyType"]) for k in one.get("KeySchema", [])}
            for one in described
        }
        for index in self.model.indexes:
            if index.name is None:
                continue
            if index.name not in existing:
                raise GatewayError(f"table {self.table!r} exists without the index {index.name!r}")
            if existing[index.name] != _key_schema(index):
                raise GatewayError(f"index {index.name!r} of table {self.table!r} has another key schema")
        # A key of another type than declared matches no key the gateway sends: every read would come back empty.
        held = {one["AttributeName"]: one["AttributeType"] for one in description.get("AttributeDefinitions", [])}
        declared = {
            one["AttributeName"]: one["AttributeType"] for one in table_definition(self.model)["AttributeDefinitions"]
        }
        other = sorted(
            f"{name} is {held[name]}, declared {kind}"
            for name, kind in declared.items()
            if held.get(name, kind) != kind
        )
        if other:
            raise GatewayError(f"table {self.table!r} exists with keys of other types: {'; '.join(other)}")

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
            response = await self._call("BatchWriteItem", RequestItems=request)
            request = response.get("UnprocessedItems") or {}
            if not request:
                return len(items)
            await asyncio.sleep(_backoff(attempt))
        raise Throttled("DynamoDB kept returning unprocessed items; try again shortly")

    async def _send(
        self, operation: str, ledger: Ledger, round_: int | None, floor: float = 0.0, **params: Any
    ) -> tuple[Any, int]:
        """One accounted call: counted whether DynamoDB answers or fails, with the round it was sent in, and at
        least ``floor`` capacity units."""
        try:
            response = await self._call(operation, **params)
        except GatewayError:
            ledger.record(operation, 0.0, round_)
            raise
        consumed = max(capacity_units(response.get("ConsumedCapacity")), floor)
        return response, ledger.record(operation, consumed, round_)

    async def _call(self, operation: str, **params: Any) -> Any:
        try:
            return await self._request(operation, **params)
        except (ClientError, BotoCoreError) as error:
            raise translate(error) from error

    async def _request(self, operation: str, **params: Any) -> Any:
        """``operation`` sent by the data plane when it sends that one, else by the client; botocore's errors."""
        if self._plane is not None and operation in OPERATIONS:
            return await self._plane.call(operation, params)
        return await getattr(self._client, xform_name(operation))(**params)


def _key_schema(index: Index) -> set[tuple[str, str]]:
    """An index's key schema as DescribeTable's pairs (attribute, key type) read."""
    return {(name, kind) for name, kind in zip(index.attributes, ("HASH", "RANGE"), strict=False)}


def _key_schema_elements(index: Index) -> list[KeySchemaElementTypeDef]:
    """An index's KeySchema: its partition key, then its sort key if it has one."""
    elements: list[KeySchemaElementTypeDef] = [{"AttributeName": index.pk, "KeyType": "HASH"}]
    if index.sk is not None:
        elements.append({"AttributeName": index.sk, "KeyType": "RANGE"})
    return elements


def _projection(index: Index) -> ProjectionTypeDef:
    """An index's Projection: ALL, KEYS_ONLY, or INCLUDE of the attributes it names."""
    if index.projection == "ALL" or index.projection == "KEYS_ONLY":
        return {"ProjectionType": index.projection}
    return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(index.projection)}


def table_definition(model: Model) -> CreateTableDefinition:
    """CreateTable's parameters but the table's name: the keys and indexes ``model`` declares, on demand."""
    attributes = sorted({name for index in model.indexes for name in index.attributes})
    types = model.key_types
    table_index = model.index(None)
    gsis: list[GlobalSecondaryIndexTypeDef] = [
        {"IndexName": index.name, "KeySchema": _key_schema_elements(index), "Projection": _projection(index)}
        for index in model.indexes
        if index.name is not None and not index.local
    ]
    lsis: list[LocalSecondaryIndexTypeDef] = [
        {"IndexName": index.name, "KeySchema": _key_schema_elements(index), "Projection": _projection(index)}
        for index in model.indexes
        if index.name is not None and index.local
    ]
    definition: CreateTableDefinition = {
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": name, "AttributeType": types.get(name, "S")} for name in attributes],
        "KeySchema": _key_schema_elements(table_index),
        # Subscriptions read changes from the stream, whoever wrote them (gateway/live/relay.py).
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }
    if gsis:  # DynamoDB refuses an empty list
        definition["GlobalSecondaryIndexes"] = gsis
    if lsis:
        definition["LocalSecondaryIndexes"] = lsis
    return definition


def _forward_events(events: Any, hooks: Hooks) -> None:
    """Tell ``hooks`` what botocore's events tell about the stock client's calls, so that listeners see one kind
    of call whichever path sends it."""

    def calling(model: Any, context: dict[str, Any], **_: Any) -> None:
        for hook in hooks.calling:
            hook(model.name, context)

    def sending(request: Any, event_name: str, **_: Any) -> None:
        headers = {name: _text(value) for name, value in request.headers.items()}
        for hook in hooks.sending:
            hook(_operation_of(event_name), headers, request.body or b"")

    def attempted(
        event_name: str,
        response_dict: dict[str, Any] | None = None,
        parsed_response: dict[str, Any] | None = None,
        exception: Exception | None = None,
        **_: Any,
    ) -> None:
        status = None if exception is not None or response_dict is None else response_dict.get("status_code")
        for hook in hooks.attempted:
            hook(_operation_of(event_name), status, parsed_response)

    def called(http_response: Any, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        for hook in hooks.called:
            hook(model.name, context, http_response.status_code, parsed)

    def failed(context: dict[str, Any], event_name: str, **_: Any) -> None:
        for hook in hooks.called:
            hook(_operation_of(event_name), context, None, {})

    events.register("before-call.dynamodb", calling, unique_id="tablegraph-calling")
    events.register("before-send.dynamodb", sending, unique_id="tablegraph-sending")
    events.register("response-received.dynamodb", attempted, unique_id="tablegraph-attempted")
    events.register("after-call.dynamodb", called, unique_id="tablegraph-called")
    events.register("after-call-error.dynamodb", failed, unique_id="tablegraph-failed")


def _operation_of(event_name: str) -> str:
    """``Query`` from ``after-call-error.dynamodb.Query``."""
    return event_name.rsplit(".", 1)[-1]


def _attempt_ended(operation: str, status: int | None, parsed: Any = None) -> None:
    """The data plane's hook after every attempt: ``status`` None when no answer came."""
    seen = _attempts.get()
    if seen is not None:
        seen.append(status is None or status >= 500)


def _refusal(error: ClientError, count: int) -> list[Reason] | None:
    """The reasons of a refused conditional write or transaction, aligned with its ops; None for other errors."""
    code = error_code(error)
    if code == "ConditionalCheckFailedException":
        raw: Any = error.response.get("Item")
        return [Reason("ConditionalCheckFailed", _item(raw) if raw else None)]
    if code == "TransactionConflictException":
        return [Reason("TransactionConflict")]
    if code != "TransactionCanceledException":
        return None
    reasons: list[Any] = error.response.get("CancellationReasons") or []
    out = [Reason(str(r.get("Code", "None")), _item(r["Item"]) if r.get("Item") else None) for r in reasons]
    if len(out) != count or not any(r.code in ("ConditionalCheckFailed", "TransactionConflict") for r in out):
        return None
    return out


def _backoff(attempt: int) -> float:
    return random.uniform(0, min(1.0, 0.025 * 2**attempt))


def _key_id(key: Key) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(key.items()))


def _wire_key(key: Key, types: Mapping[str, KeyType]) -> dict[str, Any]:
    if not types:  # every key text: the common case, with no look-up per attribute
        return {name: {"S": value} for name, value in key.items()}
    return {name: _wire_key_value(types, name, value) for name, value in key.items()}


def _wire_key_value(types: Mapping[str, KeyType], name: str, text: str) -> dict[str, Any]:
    """A key attribute's text as DynamoDB's typed JSON: a number as its digits, binary as its bytes (which the
    client and the data plane send as base64)."""
    kind = types.get(name, "S")
    return {kind: b64decode(text) if kind == "B" else text}


def _key_of(wire: Mapping[str, Any]) -> Key:
    """A LastEvaluatedKey as text, as ``Model.key`` gives keys: a number's digits as DynamoDB writes them, binary
    as base64 (which the data plane leaves as DynamoDB sent it, and botocore parses into bytes)."""
    out: Key = {}
    for name, value in wire.items():
        ((_, held),) = value.items()
        out[name] = b64encode(held).decode() if isinstance(held, bytes) else held
    return out


def _wire_item(item: Item) -> dict[str, Any]:
    return {name: _serializer.serialize(value) for name, value in item.items()}


def _item(raw: dict[str, Any]) -> Item:
    return {name: _deserializer.deserialize(value) for name, value in raw.items()}


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _already_decoded(raw: dict[str, Any]) -> Item:
    """With ``install_fast_reads`` the client returns GetItem, Query and BatchGetItem items decoded."""
    return raw
