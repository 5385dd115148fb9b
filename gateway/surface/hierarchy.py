"""Composite sort key hierarchies on the GraphQL surface: one optional argument per level of a connection."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from gateway.design.model import Collection, graphql_name


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


def counted(parent_ids: dict[str, str], ids: dict[str, str]) -> dict[str, str] | None:
    """What ``totalCount`` reads: the parent, unless levels narrowed the page to part of its members."""
    return parent_ids if ids is parent_ids else None
