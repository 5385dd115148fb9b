"""A bounded sample of a table another tool filled, and its key schema: what ``tablegraph init`` drafts from, and
what ``tablegraph check`` (and ``serve``'s check at start-up) holds against the declaration.

The sample is read with Scan, stopped after ``limit`` items, on its own client: never one that serves requests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aioboto3
from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import BotoCoreError, ClientError

from gateway.config import Settings
from gateway.design.model import KEY_TYPES, KeyType
from gateway.dynamo.client import client_options, translate

SAMPLE_PAGE = 100
"""Items asked for per Scan page: a progress report per page, and a sample stops close to its bound."""

Progress = Callable[[int, int], None]
"""Told (items read, items wanted) after every page."""


@dataclass(frozen=True)
class KeySchema:
    """A table's key attributes and those of its global secondary indexes (name: (partition, sort))."""

    pk: str
    sk: str | None
    indexes: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)
    types: Mapping[str, KeyType] = field(default_factory=dict)
    """The key attributes that are not text (S), by name: N or B, as AttributeDefinitions declares them."""


@dataclass(frozen=True)
class Sample:
    keys: KeySchema
    items: list[dict[str, Any]]
    description: Mapping[str, Any] = field(default_factory=dict)
    """The table as DescribeTable answers."""
    complete: bool = False
    """Whether the sample holds every item of the table."""


def key_schema(description: Mapping[str, Any]) -> KeySchema:
    """The key schema of a DescribeTable answer's ``Table`` (or a CreateTable request of the same shape)."""

    def pair(schema: list[Mapping[str, str]]) -> tuple[str, str | None]:
        roles = {one["KeyType"]: one["AttributeName"] for one in schema}
        return roles["HASH"], roles.get("RANGE")

    pk, sk = pair(description["KeySchema"])
    indexes = {index["IndexName"]: pair(index["KeySchema"]) for index in description.get("GlobalSecondaryIndexes", [])}
    types: dict[str, KeyType] = {
        one["AttributeName"]: kind
        for one in description.get("AttributeDefinitions", [])
        for kind in KEY_TYPES
        if one["AttributeType"] == kind != "S"
    }
    return KeySchema(pk, sk, indexes, types)


async def sample_table(settings: Settings, table: str, limit: int, progress: Progress) -> Sample:
    """The table's key schema and at most ``limit`` of its items, read by a Scan that stops there."""
    if limit < 1:
        raise ValueError("a sample holds at least one item")
    decode = TypeDeserializer().deserialize
    items: list[dict[str, Any]] = []
    complete = False
    try:
        async with aioboto3.Session().client("dynamodb", **client_options(settings)) as client:
            described = await client.describe_table(TableName=table)
            params: dict[str, Any] = {"TableName": table}
            while len(items) < limit:
                params["Limit"] = min(SAMPLE_PAGE, limit - len(items))
                page = await client.scan(**params)
                items += [{k: decode(v) for k, v in raw.items()} for raw in page.get("Items", [])]
                progress(len(items), limit)
                start = page.get("LastEvaluatedKey")
                if not start:
                    # The table held fewer items than asked for: all of them were read.
                    progress(len(items), len(items))
                    complete = True
                    break
                params["ExclusiveStartKey"] = start
    except (ClientError, BotoCoreError) as error:
        raise translate(error) from error
    return Sample(key_schema(described["Table"]), items, described["Table"], complete)
