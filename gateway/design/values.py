"""Stored values that are not the declared GraphQL type verbatim: sets, free-form JSON, and numbers kept as text."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any


@dataclass(frozen=True)
class SetChange:
    """Members an update adds to a stored set and removes from it (``ADD``/``DELETE``), instead of replacing it:
    concurrent updates of other members do not undo each other. Either may be empty, not both."""

    add: frozenset[Any] = frozenset()
    remove: frozenset[Any] = frozenset()


def set_fields(name: str) -> tuple[str, str]:
    """The update input fields that add members to the set attribute ``name`` and remove members from it, as
    declared names (``add_to_labels``: GraphQL's ``addToLabels``)."""
    return f"add_to_{name}", f"remove_from_{name}"


def plain_json(value: Any) -> Any:
    """A stored value of any shape as JSON: numbers as int or float, sets as sorted lists, bytes as base64."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        return {str(key): plain_json(one) for key, one in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(one) for one in value]
    if isinstance(value, set | frozenset):
        return sorted((plain_json(one) for one in value), key=repr)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    raw = getattr(value, "value", None)  # boto3's Binary
    if isinstance(raw, bytes):
        return base64.b64encode(raw).decode()
    return value


def stored_json(value: Any) -> Any:
    """A JSON input as DynamoDB stores it: numbers as Decimal (a float as the number it prints as)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return Decimal(str(value))
    if isinstance(value, Mapping):
        return {str(key): stored_json(one) for key, one in value.items()}
    if isinstance(value, list | tuple):
        return [stored_json(one) for one in value]
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def number_from_text(text: str) -> Decimal | None:
    """The number a text attribute holds (``"100"``); None for text that is no finite number."""
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None
