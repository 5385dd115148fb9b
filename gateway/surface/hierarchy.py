"""Sort keys on the GraphQL surface: one optional argument per level of a connection's composite sort key, and one
for a range of the field that ends it."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from gateway.design.model import Collection, graphql_name
from gateway.surface.types import Long


def arguments(collection: Collection) -> list[tuple[str, Any, Any]]:
    """One optional ``ID`` argument per level of ``collection``, as (parameter, annotation, default): the
    connection's resolver reads them back from the operation, as the walk does (``plan.narrowed``)."""
    out: list[tuple[str, Any, Any]] = []
    above: list[str] = []
    for index, level in enumerate(collection.levels):
        name = graphql_name(level)
        description = f"Only the members under this {name}" + (f" (give {', '.join(above)} too)." if above else ".")
        annotation = Annotated[strawberry.ID | None, strawberry.argument(name=name, description=description)]
        out.append((f"level{index}", annotation, None))
        above.append(name)
    return out


@strawberry.input(
    name="KeyRange",
    description="A range of the values that end the members' sort key, read as the Query's key condition: give one"
    " field. Values compare as DynamoDB compares keys, by their UTF-8 bytes (a date is below every stamp of that day).",
)
class RangeArgument:
    between: list[str] | None = strawberry.field(default=None, description="From low to high, both included.")
    gte: str | None = strawberry.field(default=None, description="This value and every one above it.")
    lte: str | None = strawberry.field(default=None, description="This value and every one below it.")
    begins_with: str | None = strawberry.field(default=None, description="Values that start with this text.")


@strawberry.input(
    name="LongRange",
    description="A range of the numbers that are the members' sort key, read as the Query's key condition: give one"
    " field. Values compare as numbers (10 is above 9).",
)
class NumberRangeArgument:
    between: list[Long] | None = strawberry.field(default=None, description="From low to high, both included.")
    gte: Long | None = strawberry.field(default=None, description="This value and every one above it.")
    lte: Long | None = strawberry.field(default=None, description="This value and every one below it.")


def range_arguments(collection: Collection, numeric: bool = False) -> list[tuple[str, Any, Any]]:
    """The range argument of ``collection``, named after its sort key's last field (of numbers when the sort key
    is a number key, ``numeric``); none without a range."""
    if collection.range is None:
        return []
    name = graphql_name(collection.range)
    description = f"Only the members whose {name} is in this range: one Query reads the range alone."
    kind: Any = NumberRangeArgument if numeric else RangeArgument
    annotation = Annotated[kind | None, strawberry.argument(name=name, description=description)]
    return [("key_range", annotation, None)]


def counted(parent_ids: dict[str, str], ids: dict[str, str]) -> dict[str, str] | None:
    """What ``totalCount`` reads: the parent, unless levels narrowed the page to part of its members."""
    return parent_ids if ids is parent_ids else None
