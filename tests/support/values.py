"""Decoded DynamoDB values in a form where equal means the same value of the same type."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary


def typed(value: Any) -> Any:
    """``value`` with every leaf tagged by its type, so ``Decimal("1") == 1 == True`` cannot pass as equal."""
    if isinstance(value, dict):
        return {name: typed(member) for name, member in value.items()}
    if isinstance(value, list):
        return [typed(member) for member in value]
    if isinstance(value, set):
        return ("set", sorted(typed(member) for member in value))
    if isinstance(value, Decimal):
        # str keeps the exponent: Decimal("1.0") and Decimal("1.00") are equal but not the same value read.
        return ("Decimal", str(value))
    if isinstance(value, Binary):
        return ("Binary", repr(value))
    return (type(value).__name__, value)
