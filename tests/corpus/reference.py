"""The design's own requests, sent with plain boto3 and counted: the reference every corpus pattern is held to."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

_FROM = TypeDeserializer()
_TO = TypeSerializer()


def plain(item: dict[str, Any]) -> dict[str, Any]:
    """An item of the low-level client as Python values (numbers as Decimal)."""
    return {name: _FROM.deserialize(value) for name, value in item.items()}


def typed(item: dict[str, Any]) -> dict[str, Any]:
    """Python values as the low-level client's typed attributes."""
    return {name: _TO.serialize(value) for name, value in item.items()}


class Design:
    """The design's requests on one table, each counted as one call in one round, as its authors send them."""

    def __init__(self, dynamodb: Any, table: str) -> None:
        self.dynamodb = dynamodb
        self.table = table
        self.calls = 0

    def get(self, key: dict[str, Any]) -> dict[str, Any] | None:
        self.calls += 1
        found = self.dynamodb.get_item(TableName=self.table, Key=typed(key), ConsistentRead=True).get("Item")
        return None if found is None else plain(found)

    def query(self, condition: str, values: dict[str, Any], **options: Any) -> list[dict[str, Any]]:
        """One Query page, as the design sends it (its own ``Limit``, when it sets one)."""
        self.calls += 1
        answer = self.dynamodb.query(
            TableName=self.table,
            KeyConditionExpression=condition,
            ExpressionAttributeValues=typed(values),
            **options,
        )
        return [plain(item) for item in answer["Items"]]

    def send(self, operation: str, **request: Any) -> Any:
        """Any other request of the design (UpdateItem, TransactWriteItems, ...), on its own words."""
        self.calls += 1
        return getattr(self.dynamodb, operation)(**request)


@contextmanager
def table(dynamodb: Any, prefix: str, create: Callable[[Any, str], None]) -> Iterator[str]:
    """A table of the design, made by its own ``create`` under a random name, deleted afterwards."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    create(dynamodb, name)
    try:
        yield name
    finally:
        dynamodb.delete_table(TableName=name)


def without_gateway_bookkeeping(item: dict[str, Any] | None) -> dict[str, Any] | None:
    """An item without what the gateway adds beside the design's attributes (docs/writes.md): version, writeId."""
    if item is None:
        return None
    return {name: value for name, value in item.items() if name not in ("version", "writeId")}
