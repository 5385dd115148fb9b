"""Stored values that are not the declared GraphQL type verbatim: sets, binary, free-form JSON, numbers kept as text."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
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
    raw = _raw(value)
    return value if raw is None else base64.b64encode(raw).decode()


def _raw(value: Any) -> bytes | None:
    """The bytes of a binary value: ``bytes``, or boto3's ``Binary`` (which the wire decoding returns)."""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    raw = getattr(value, "value", None)
    return raw if isinstance(raw, bytes) else None


def is_binary_set(value: Any) -> bool:
    return isinstance(value, set | frozenset) and all(_raw(one) is not None for one in value)


def binary_set_json(value: Any) -> list[str]:
    """A binary set (BS) as served: its elements in byte order, each in base64 as DynamoDB's JSON writes it, so a
    set reads the same every time."""
    return [base64.b64encode(raw).decode() for raw in sorted(_raw(one) or b"" for one in value)]


def binary_set_stored(texts: Sequence[str]) -> set[bytes] | None:
    """Base64 texts as the binary set DynamoDB stores; None for none (it stores no empty set). ValueError names the
    first text that is not base64."""
    out = set()
    for n, text in enumerate(texts):
        try:
            out.add(base64.b64decode(text, validate=True))
        except ValueError:
            raise ValueError(f"element {n} is not base64") from None
    return out or None


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


_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A number as text, in ASCII: Python's Decimal also reads ``1_000`` and other scripts' digits (``١٢``), which no
other reader of the table would take for a number."""


def number_from_text(text: str) -> Decimal | None:
    """The number a text attribute holds (``"100"``); None for text that is no finite number."""
    stripped = text.strip()
    if not _NUMBER.fullmatch(stripped):
        return None
    return Decimal(stripped)
