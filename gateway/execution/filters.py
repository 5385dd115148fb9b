"""Filters on a connection's members: declared per collection, sent as the Query's FilterExpression, never a Scan.

A connection that declares filterable attributes takes ``where``: per attribute a condition (``eq``, ``ne``,
``in``, ``beginsWith``, ``between``, ``exists``; several in one condition all hold), and ``and``/``or`` lists of
further filters. DynamoDB applies a filter after it reads, so the reader keeps reading until the page fills, within
a read budget (``plan.filter_limits``).

Semantics are DynamoDB's own: ``ne`` holds for an item without the attribute, a comparison with a value of another
type does not hold, strings compare by their UTF-8 bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from enum import Enum
from typing import Any

from gateway.design.model import Collection, graphql_name
from gateway.dynamo.requests import Filter, Group, Operator, Test, expression
from gateway.errors import BadUserInput

OPERATORS: tuple[Operator, ...] = ("eq", "ne", "in", "beginsWith", "between", "exists")

MAX_TESTS = 32
"""The most conditions one filter holds: DynamoDB bounds an expression's size, and each costs CPU per item read."""
MAX_VALUES = 100
"""The most values of one ``in``, DynamoDB's own limit."""
MAX_DEPTH = 4
"""How deep ``and`` and ``or`` may nest."""

ARGUMENT = "where"


def parse(where: Mapping[str, Any] | None, collection: Collection) -> Filter | None:
    """The filter a connection's ``where`` argument (as GraphQL coerced it: GraphQL names, null for unset) asks
    for; None when it asks for nothing. Refuses what DynamoDB would refuse, and more than the limits allow."""
    if where is None:
        return None
    return _group(where, collection, 1, [0])


def _group(where: Mapping[str, Any], collection: Collection, depth: int, counted: list[int]) -> Filter | None:
    if depth > MAX_DEPTH:
        raise BadUserInput(f"and/or may nest at most {MAX_DEPTH} deep", argument=ARGUMENT)
    parts: list[Filter] = []
    for name, condition in where.items():
        if condition is None:
            continue
        if name in ("and", "or"):
            if not condition:
                raise BadUserInput(f"{name} needs at least one filter", argument=ARGUMENT)
            inner = [_group(one, collection, depth + 1, counted) for one in condition]
            kept = tuple(one for one in inner if one is not None)
            if name == "or" and len(kept) < len(inner):
                continue  # one alternative holds for every member: so does the whole or
            if kept:
                parts.append(kept[0] if len(kept) == 1 else Group("and" if name == "and" else "or", kept))
            continue
        stored = _stored_name(collection, name)
        if stored is None:
            raise BadUserInput(f"{collection.name} cannot be filtered by {name}", argument=ARGUMENT)
        for operator in OPERATORS:
            value = condition.get(operator)
            if value is not None:
                counted[0] += 1
                if counted[0] > MAX_TESTS:
                    raise BadUserInput(f"a filter holds at most {MAX_TESTS} conditions", argument=ARGUMENT)
                parts.append(Test(stored, operator, _operands(operator, value, name)))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Group("and", tuple(parts))


def _stored_name(collection: Collection, name: str) -> str | None:
    """The stored attribute a filter's field (its GraphQL name: ``status`` for a stored ``Status``) tests."""
    return next((one for one in collection.filters if graphql_name(one) == name), None)


def _operands(operator: Operator, value: Any, name: str) -> tuple[Any, ...]:
    if operator == "exists":
        return (bool(value),)
    if operator == "in":
        values = tuple(_stored(one) for one in value)
        if not 1 <= len(values) <= MAX_VALUES:
            raise BadUserInput(f"{name}.in takes 1 to {MAX_VALUES} values", argument=ARGUMENT)
        return values
    if operator == "between":
        bounds = tuple(_stored(one) for one in value)
        if len(bounds) != 2:
            raise BadUserInput(f"{name}.between takes two values, the low and the high bound", argument=ARGUMENT)
        low, high = bounds
        if low > high:
            raise BadUserInput(f"{name}.between: the low bound is above the high one", argument=ARGUMENT)
        return bounds
    if operator == "beginsWith" and value == "":
        raise BadUserInput(f"{name}.beginsWith needs at least one character", argument=ARGUMENT)
    return (_stored(value),)


def _stored(value: Any) -> Any:
    """A GraphQL value as it is stored: an enum member as its string, a date as ``YYYY-MM-DD``."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, date):
        return value.isoformat()
    return value


def describe(filter_: Filter | None) -> str | None:
    """The FilterExpression with values inlined, for explain."""
    if filter_ is None:
        return None
    text, names, values = expression(filter_)
    for placeholder, attribute in names.items():
        text = text.replace(placeholder, attribute)
    for placeholder in sorted(values, key=len, reverse=True):
        ((_, shown),) = values[placeholder].items()
        text = text.replace(placeholder, repr(shown))
    return text
