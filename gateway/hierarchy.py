"""Composite sort key hierarchies on the GraphQL surface: one optional argument per level of a connection."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import strawberry

from gateway.model import Collection, graphql_name


def _parameter(index: int) -> str:
    return f"level{index}"


def with_levels(resolve: Callable[..., Any], collection: Collection) -> Callable[..., Any]:
    """``resolve`` taking, besides its own arguments, one optional ``ID`` argument per level of ``collection``;
    they reach it as keyword arguments that ``arguments`` reads back."""
    kinds = inspect.Parameter
    signature = inspect.signature(resolve)
    own = [one for one in signature.parameters.values() if one.kind != kinds.VAR_KEYWORD]
    annotations = {name: one for name, one in resolve.__annotations__.items() if name in signature.parameters}
    annotations = {
        name: one for name, one in annotations.items() if signature.parameters[name].kind != kinds.VAR_KEYWORD
    }
    above: list[str] = []
    for index, level in enumerate(collection.levels):
        name = graphql_name(level)
        description = f"Only the members under this {name}" + (f" (give {', '.join(above)} too)." if above else ".")
        annotation = Annotated[strawberry.ID | None, strawberry.argument(name=name, description=description)]
        own.append(kinds(_parameter(index), kinds.KEYWORD_ONLY, annotation=annotation, default=None))
        annotations[_parameter(index)] = annotation
        above.append(name)
    resolve.__signature__ = signature.replace(parameters=own)  # type: ignore[attr-defined]  # read by strawberry
    resolve.__annotations__ = annotations
    return resolve


def arguments(collection: Collection, given: Mapping[str, Any]) -> dict[str, Any]:
    """The level arguments a resolver received, by their GraphQL names (as the walk sees them)."""
    return {graphql_name(level): given.get(_parameter(index)) for index, level in enumerate(collection.levels)}
