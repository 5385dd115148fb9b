"""The table's stream as DynamoDB serves it: shards, iterators, records, positions, and the lease item's writes.

The stream has a client of its own (``dynamodbstreams``); with the store, this is the one module that talks to
DynamoDB. Records travel as DynamoDB's wire format, binary values in base64, so that every process decodes them
alike (``dynamo.wire``). What is done with them, one reader per table and the fan-out, is ``live.relay``'s.
"""

from __future__ import annotations

import base64
import binascii
import logging
import time
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

import aioboto3
import orjson
from botocore.exceptions import BotoCoreError, ClientError

from gateway.config import Settings
from gateway.design.model import Model
from gateway.dynamo.client import client_options, error_code, translate
from gateway.errors import BadUserInput, PositionExpired

log = logging.getLogger(__name__)

Record = dict[str, Any]
"""One change as it travels: ``event`` (INSERT, MODIFY, REMOVE), ``keys``, ``new`` and ``old`` images in DynamoDB's
wire format (absent when the stream has none), ``position``, and ``replayed`` when it was read again from a
checkpoint (it happened before the reader that read it started)."""
Publish = Callable[[Record], None]

LEASE_PK = "TABLEGRAPH#STREAM-LEASE"
"""The partition key of the stream reader's lease: an item of the gateway's own in the served table, of no entity."""
_LEASE_SK: dict[str, dict[str, Any]] = {"S": {"S": "LEASE"}, "N": {"N": "0"}, "B": {"B": b"LEASE"}}
"""The lease item's sort key by the table's sort key type."""
_GONE = {"TrimmedDataAccessException", "ResourceNotFoundException"}


# --- positions ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Position:
    """Where a subscriber is in the whole stream: per shard, the sequence number of the last record published
    from it (a table's items are spread over shards, so one shard's place says nothing of the others'), and the
    time of the change the position was handed out with."""

    shards: Mapping[str, str]
    time: int


def position(shards: Mapping[str, str], at: int) -> str:
    """An opaque position: the shards' sequence numbers, compressed (shard ids share long prefixes)."""
    packed = orjson.dumps({"s": dict(shards), "t": at})
    return base64.urlsafe_b64encode(zlib.compress(packed, 9)).decode().rstrip("=")


def parse_position(text: str) -> Position:
    """The position ``text`` holds; BadUserInput when it is not one."""
    try:
        raw = orjson.loads(zlib.decompress(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), bufsize=4096))
        shards, at = raw["s"], raw["t"]
    except (binascii.Error, zlib.error, orjson.JSONDecodeError, ValueError, TypeError, KeyError):
        raise BadUserInput("after is not a stream position", argument="after") from None
    valid = isinstance(shards, dict) and shards and isinstance(at, int)
    if not valid or not all(isinstance(seq, str) and seq.isdigit() for seq in shards.values()):
        raise BadUserInput("after is not a stream position", argument="after")
    return Position(shards, at)


# --- the wire -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lease:
    holder: str
    address: str
    secret: str
    """What a process shows the holder's socket to be passed the records: readers of the table only."""
    checkpoint: dict[str, str]
    live: bool
    machine: str = ""
    """The host name of the holder's machine: its address is on 127.0.0.1 there."""


@dataclass(frozen=True)
class Shard:
    id: str
    parent: str | None
    closed: bool


class StreamClient:
    """DynamoDB Streams and the lease item, for one table; DynamoDB's errors become ours here."""

    def __init__(self, dynamodb: Any, streams: Any, table: str, model: Model) -> None:
        self._dynamodb = dynamodb
        self._streams = streams
        self.table = table
        index = model.index(None)
        self._lease_key = {index.pk: {"S": LEASE_PK}}
        if index.sk is not None:
            self._lease_key[index.sk] = _LEASE_SK[index.sk_type]
        self._pk = index.pk

    @classmethod
    @asynccontextmanager
    async def open(cls, settings: Settings, model: Model) -> AsyncIterator[StreamClient]:
        options = client_options(settings)
        session = aioboto3.Session()
        async with session.client("dynamodb", **options) as dynamodb, session.client("dynamodbstreams", **options) as s:
            yield cls(dynamodb, s, settings.table or model.table, model)

    async def stream_arn(self) -> str | None:
        """The table's stream, when it has one that carries images."""
        table = (await _call(self._dynamodb.describe_table, TableName=self.table))["Table"]
        spec = table.get("StreamSpecification") or {}
        if not spec.get("StreamEnabled") or spec.get("StreamViewType") not in ("NEW_AND_OLD_IMAGES", "NEW_IMAGE"):
            return None
        arn: str | None = table.get("LatestStreamArn")
        return arn

    async def shards(self, arn: str) -> list[Shard]:
        out: list[Shard] = []
        start: dict[str, str] = {}
        while True:
            answer = await _call(self._streams.describe_stream, StreamArn=arn, **start)
            description = answer["StreamDescription"]
            for raw in description.get("Shards", []):
                closed = "EndingSequenceNumber" in raw.get("SequenceNumberRange", {})
                out.append(Shard(raw["ShardId"], raw.get("ParentShardId"), closed))
            last = description.get("LastEvaluatedShardId")
            if not last:
                return out
            start = {"ExclusiveStartShardId": last}

    async def iterator(self, arn: str, shard: str, kind: str, sequence: str | None = None) -> str:
        params: dict[str, Any] = {"StreamArn": arn, "ShardId": shard, "ShardIteratorType": kind}
        if sequence is not None:
            params["SequenceNumber"] = sequence
        try:
            answer = await self._streams.get_shard_iterator(**params)
        except ClientError as error:
            if error_code(error) in _GONE:
                raise PositionExpired("the stream no longer holds this position: read again, then subscribe") from None
            raise translate(error, "DynamoDB Streams") from error
        except BotoCoreError as error:
            raise translate(error, "DynamoDB Streams") from error
        iterator: str = answer["ShardIterator"]
        return iterator

    async def records(self, iterator: str) -> tuple[list[Record], str | None]:
        """The next records of a shard, as they travel, and the iterator to read on with (None: the shard closed)."""
        answer = await _call(self._streams.get_records, ShardIterator=iterator, Limit=1000)
        return [_record(raw) for raw in answer.get("Records", [])], answer.get("NextShardIterator")

    # --- the lease ------------------------------------------------------------------------------------------

    async def take_lease(
        self, holder: str, address: str, secret: str, seconds: float, checkpoint: dict[str, str], machine: str = ""
    ) -> bool:
        """Take or renew the lease for ``holder``: only when nobody holds it, it lapsed, or ``holder`` has it."""
        now = int(time.time() * 1000)
        item = {
            **self._lease_key,
            "holder": {"S": holder},
            "address": {"S": address},
            "secret": {"S": secret},
            "machine": {"S": machine},
            "until": {"N": str(now + int(seconds * 1000))},
            "checkpoint": {"M": {shard: {"S": sequence} for shard, sequence in checkpoint.items()}},
        }
        try:
            await self._dynamodb.put_item(
                TableName=self.table,
                Item=item,
                ConditionExpression="attribute_not_exists(#pk) OR #until < :now OR #holder = :me",
                ExpressionAttributeNames={"#pk": self._pk, "#until": "until", "#holder": "holder"},
                ExpressionAttributeValues={":now": {"N": str(now)}, ":me": {"S": holder}},
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            raise translate(error, "DynamoDB Streams") from error
        except BotoCoreError as error:
            raise translate(error, "DynamoDB Streams") from error
        return True

    async def lease(self) -> Lease | None:
        """The lease as the table holds it, lapsed or not; None when there never was one (or it was released)."""
        answer = await _call(self._dynamodb.get_item, TableName=self.table, Key=self._lease_key, ConsistentRead=True)
        item = answer.get("Item")
        if not item:
            return None
        return Lease(
            item["holder"]["S"],
            item["address"]["S"],
            item.get("secret", {}).get("S", ""),
            {shard: value["S"] for shard, value in item.get("checkpoint", {}).get("M", {}).items()},
            int(item["until"]["N"]) >= time.time() * 1000,
            item.get("machine", {}).get("S", ""),
        )

    async def release(self, holder: str) -> None:
        """Give the lease up, so that another process takes it at once rather than when it lapses."""
        with suppress(ClientError, BotoCoreError):
            await self._dynamodb.delete_item(
                TableName=self.table,
                Key=self._lease_key,
                ConditionExpression="#holder = :me",
                ExpressionAttributeNames={"#holder": "holder"},
                ExpressionAttributeValues={":me": {"S": holder}},
            )


async def _call(method: Any, **params: Any) -> Any:
    try:
        return await method(**params)
    except (ClientError, BotoCoreError) as error:
        raise translate(error, "DynamoDB Streams") from error


def _record(raw: dict[str, Any]) -> Record:
    change = raw["dynamodb"]
    out: Record = {"event": raw["eventName"], "keys": _wire(change["Keys"]), "sequence": change["SequenceNumber"]}
    created = change.get("ApproximateCreationDateTime")
    out["time"] = int(created.timestamp()) if created is not None else int(time.time())
    if "NewImage" in change:
        out["new"] = _wire(change["NewImage"])
    if "OldImage" in change:
        out["old"] = _wire(change["OldImage"])
    return out


def _wire(value: Any) -> Any:
    """Botocore's parse of an image back to the wire format: binary values as base64 text, as DynamoDB sends them."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {name: _wire(member) for name, member in value.items()}
    if isinstance(value, list):
        return [_wire(member) for member in value]
    return value
