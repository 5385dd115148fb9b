"""The GraphQL surface of a declaration: its types, connections, root fields and mutations, all named by it."""

from __future__ import annotations

import json
from dataclasses import dataclass

import strawberry
from graphql import GraphQLInterfaceType, GraphQLUnionType
from strawberry.schema.config import StrawberryConfig

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.surface.builder import Builder
from gateway.surface.compiled import CompiledExecutor
from gateway.surface.extensions import Accounting, ErrorPolicy, GatewaySchema, Limits
from gateway.surface.mutations import mutation_type
from gateway.surface.roots import query_type
from gateway.surface.subscriptions import subscription_type
from gateway.surface.toolkit import NAMED, graphql_schema
from gateway.surface.types import DATE_SCALAR, LONG_SCALAR, Date, Long


@dataclass(frozen=True)
class Graph:
    """A declaration's GraphQL schema, with the declaration it was derived from."""

    schema: GatewaySchema
    declaration: Declaration


DEFAULT_PAGE_SIZE = Settings.default_page_size


def build(declaration: Declaration, default_page_size: int = DEFAULT_PAGE_SIZE) -> Graph:
    """The schema serving ``declaration``; ValueError when two of its names would make the same GraphQL field.

    ``default_page_size`` is the default of every connection's ``first`` argument, shown in the SDL and applied by
    GraphQL itself, so the schema tells clients the page size they get; build with the served settings' value.
    """
    if default_page_size < 1:
        raise ValueError("default_page_size must be at least 1")
    return Graph(_schema(Builder(declaration, default_page_size)), declaration)


def possible_types(schema: strawberry.Schema) -> dict[str, list[str]]:
    """Each interface and union of ``schema`` with the object types that can stand for it, sorted: the
    ``possibleTypes`` Apollo Client needs to match fragments on ``Node``, ``MutationError`` and the results."""
    graphql = graphql_schema(schema)
    return {
        name: sorted(one.name for one in graphql.get_possible_types(named))
        for name, named in sorted(graphql.type_map.items())
        if not name.startswith("__") and isinstance(named, GraphQLInterfaceType | GraphQLUnionType)
    }


def fragment_matcher(schema: strawberry.Schema) -> str:
    """The fragment matcher file as graphql-codegen's ``fragment-matcher`` plugin writes it for Apollo Client 3:
    ``{"possibleTypes": ...}``, to pass as ``new InMemoryCache({possibleTypes})`` (urql graphcache: the same
    mapping, or the introspected schema)."""
    return json.dumps({"possibleTypes": possible_types(schema)}, indent=2) + "\n"


def _schema(builder: Builder) -> GatewaySchema:
    """Every class is created first and decorated once all exist, so types may refer to each other in cycles."""
    made = list(builder.types)  # made with the builder, before this build began
    token = NAMED.set(made)
    try:
        schema = _made(builder)
    finally:
        NAMED.reset(token)
    return schema


def _made(builder: Builder) -> GatewaySchema:
    for entity in builder.entities:
        builder.object_type(entity)
    query = query_type(builder)
    mutation = mutation_type(builder)
    for cls, description in builder.pending:
        strawberry.type(cls, description=description)
    for entity in builder.entities:
        builder.makers[entity.name] = builder.maker(entity)
    subscription = subscription_type(builder)
    _refuse_twice_named(NAMED.get() or [], builder)
    return GatewaySchema(
        query=query,
        mutation=mutation,
        subscription=subscription,
        types=list(builder.types.values()),
        extensions=[ErrorPolicy, Limits, Accounting],
        config=StrawberryConfig(scalar_map={Date: DATE_SCALAR, Long: LONG_SCALAR}),
        execution_context_class=CompiledExecutor,
    )


def _refuse_twice_named(made: list[str], builder: Builder) -> None:
    """ValueError for a GraphQL type name two of the schema's types would have, naming the entity to rename."""
    seen: set[str] = set()
    for name in made:
        if name in seen:
            entity = builder.model.entity(name)
            what = (
                f"the entity {name!r} and a type derived from another part of the declaration"
                if entity
                else ("two types derived from the declaration")
            )
            raise ValueError(
                f"{name}: {what} would both be the GraphQL type {name!r}; rename the entity (the stored items do not"
                " hold its name)"
            )
        seen.add(name)
