"""Composite sort key hierarchies on the GraphQL surface: one optional argument per level of a connection."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import strawberry

from gateway import plan
from gateway.model import Collection, graphql_name


def _parameter(index: int) -> str:
    return f"level{index}"


def with_levels(resolve: Callable[..., Any], collection: Collection) -> Callable[..., Any]:
    """``resolve`` taking, besides its own arguments, one optional ``ID`` argument per level of ``collection``;
    they reach it as keyword arguments that ``narrowed`` reads back."""
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


def narrowed(collection: Collection, parent_ids: dict[str, str], received: Mapping[str, Any]) -> dict[str, str]:
    """The ids a connection's page is read under: the parent's, with the levels the resolver ``received``
    (validated by ``plan.narrowed``, as the walk reads them ahead); the parent's own when none was given."""
    given = {graphql_name(level): received.get(_parameter(i)) for i, level in enumerate(collection.levels)}
    return plan.narrowed(collection, parent_ids, given) if plan.narrows(collection, given) else parent_ids


def counted(parent_ids: dict[str, str], ids: dict[str, str]) -> dict[str, str] | None:
    """What ``totalCount`` reads: the parent, unless levels narrowed the page to part of its members."""
    return parent_ids if ids is parent_ids else None
