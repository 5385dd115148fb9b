"""Complex attributes on the write path: maps and lists checked against their declared shape, and the item size."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from gateway.design import values
from gateway.design.model import Attribute, Entity
from gateway.design.naming import field_name, python_attribute
from gateway.dynamo.requests import MAX_ITEM_BYTES
from gateway.errors import BadUserInput

"""DynamoDB's bound on one item: attribute names and values together."""

Check = Callable[[str, Attribute, Any], Any]
"""Checks one input value against its attribute and returns it as stored (the scalars' rules live with GraphQL)."""


def stored(name: str, spec: Attribute, value: Any, check: Check) -> Any:
    """An input map or list as stored: each field or element checked (``check``), fields left null left out, a
    list no longer than ``max_items``; BadUserInput names the input field, down to the element (``addresses[3]``).
    A set holds its distinct elements, and is removed when empty (DynamoDB stores no empty set); free-form JSON is
    stored as given, numbers as decimals."""
    if spec.type == "JSON":
        return values.stored_json(value)
    if spec.type == "BS" or spec.each is not None:
        if len(value) > spec.max_items:
            raise BadUserInput(f"{name} takes at most {spec.max_items} elements", argument=name)
        if spec.each is None:  # a binary set: base64 texts
            try:
                return values.binary_set_stored(value)
            except ValueError as error:
                raise BadUserInput(f"{name}: {error}", argument=name) from None
        if spec.type in ("SS", "NS"):
            return {check(f"{name}[{i}]", spec.each, one) for i, one in enumerate(value)} or None
        return [check(f"{name}[{i}]", spec.each, one) for i, one in enumerate(value)]
    if spec.shape is None:
        raise BadUserInput(f"{name} has no declared shape", argument=name)
    out: dict[str, Any] = {}
    for field, field_spec in spec.shape.declared.items():
        one = check(f"{name}.{field_name(field, field_spec)}", field_spec, getattr(value, python_attribute(field)))
        if one is not None:
            out[field] = one
    return out


def item_size(item: Mapping[str, Any]) -> int:
    """The size DynamoDB counts for an item: each attribute's name and value, in bytes."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int | float | Decimal):
        return _number_size(Decimal(str(value)))
    if isinstance(value, bytes | bytearray):
        return len(value)
    if isinstance(value, Mapping):
        # A map or list costs 3 bytes, and each of its elements 1 more.
        return 3 + sum(len(key.encode()) + _value_size(one) + 1 for key, one in value.items())
    if isinstance(value, list | tuple):
        return 3 + sum(_value_size(one) + 1 for one in value)
    if isinstance(value, set | frozenset):
        return sum(_value_size(one) for one in value)
    if isinstance(value, values.SetChange):  # at most what it adds
        return _value_size(value.add)
    raise TypeError(f"not a DynamoDB value: {type(value).__name__}")


def _number_size(number: Decimal) -> int:
    """A number is stored in base 100: a byte of exponent, a byte per pair of digits aligned on the decimal point
    (zero pairs at either end not stored), and a byte more when negative; zero is one byte."""
    if number == 0:
        return 1
    sign, digits, exponent = number.normalize().as_tuple()
    assert isinstance(exponent, int)  # finite: DynamoDB stores no NaN or infinity
    if exponent % 2:
        digits, exponent = (*digits, 0), exponent - 1
    pairs = (len(digits) + 1) // 2
    return 1 + pairs + sign


def check_size(entity: Entity, item: Mapping[str, Any]) -> None:
    """Refuse, before sending, an item (or the part of it a write sets) larger than DynamoDB stores."""
    size = item_size(item)
    if size <= MAX_ITEM_BYTES:
        return
    largest = max(entity.declared.keys() & item.keys(), key=lambda name: _value_size(item[name]), default="")
    argument = field_name(largest, entity.declared[largest]) if largest else ""
    raise BadUserInput(
        f"the {entity.name} would take {size:,} bytes; DynamoDB stores items of at most {MAX_ITEM_BYTES:,} bytes"
        + (f" (the largest attribute given is {argument})" if argument else ""),
        argument=argument,
        reason="ITEM_TOO_LARGE",
    )
