"""The Query type: each entity by its key, several by id, and any object by global id."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

import strawberry

from gateway.design import global_ids
from gateway.design.keys import validate_id
from gateway.design.model import Collection, Entity, Lookup, graphql_name
from gateway.errors import BadUserInput
from gateway.execution.queries import MAX_BATCH_IDS, batch_ids
from gateway.surface.builder import Builder, Served
from gateway.surface.toolkit import Fields, Info, id_argument, id_type, new_class, resolve_info, signature
from gateway.surface.types import Node


def query_type(builder: Builder) -> Any:
    fields = Fields("Query")
    for name, root in builder.model.roots.items():
        if root.entity is None:
            if root.many:
                description = "Objects by global id, in the order asked; null for ids that do not exist."
                fields.resolved(name, list[Node | None], _nodes(builder), description)
            else:
                description = "Any object by its global id; null if it does not exist."
                fields.resolved(name, Node | None, _node(builder), description)
            continue
        entity = root.entity
        optional: Any = builder.types[entity.name] | None
        if root.many:
            ((argument, id_field),) = root.arguments
            description = f"{entity.name}s by {id_field}, in the order asked; null for ids that do not exist."
            fields.resolved(name, list[optional], _many(builder, entity, argument), description)
        else:
            description = f"One {entity.name} by its key; null if it does not exist."
            fields.resolved(name, optional, _one(builder, entity), description)
    for lookup in builder.model.lookups:
        entity = lookup.entity
        names = " and ".join(argument for argument, _ in lookup.arguments)
        description = lookup.description or f"One {entity.name} by its {names}, found in {lookup.index}; null if none."
        fields.resolved(lookup.name, builder.types[entity.name] | None, _lookup(builder, lookup), description)
    for name, collection in builder.model.root_collections.items():
        served = builder.connections[collection.name]
        fields.resolved(name, served.type, _listed(builder, collection, served), _listed_description(collection))
    builder.extra(fields)
    query = new_class("Query")
    builder.pending.append((fields.apply(query), "What can be read: each entity by its key, and any by global id."))
    return query


def _one(builder: Builder, entity: Entity) -> Callable[..., Any]:
    names = entity.id_fields

    async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
        await info.context.reader.walked(resolve_info(info))
        ids = builder.model.canonical(
            entity, {name: validate_id(arguments[f"p{i}"], graphql_name(name)) for i, name in enumerate(names)}
        )
        return builder.object_of(info.context.reader, entity, await info.context.reader.get(entity, ids))

    parameters = [
        (f"p{i}", id_argument(name, f"The {entity.name}'s {name}.", id_type(builder.model, entity, name)))
        for i, name in enumerate(entity.id_fields)
    ]
    return signature(resolve, parameters)


def _lookup(builder: Builder, lookup: Lookup) -> Callable[..., Any]:
    arguments = lookup.arguments

    async def resolve(root: Any, info: Info, **given: Any) -> Any:
        await info.context.reader.walked(resolve_info(info))
        ids = builder.model.canonical(
            lookup.entity, {name: validate_id(given[f"p{i}"], argument) for i, (argument, name) in enumerate(arguments)}
        )
        return builder.object_of(
            info.context.reader, lookup.entity, await info.context.reader.lookup(lookup, ids, resolve_info(info))
        )

    parameters = [
        (f"p{i}", id_argument(name, f"The {lookup.entity.name}'s {name}.", id_type(builder.model, lookup.entity, name)))
        for i, (_, name) in enumerate(arguments)
    ]
    return signature(resolve, parameters)


def _listed(builder: Builder, collection: Collection, served: Served) -> Callable[..., Any]:
    """A root connection: the page under the parent's ids, read without the parent (its counter aside)."""
    names = collection.parent.id_fields

    async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
        await info.context.reader.walked(resolve_info(info))
        ids = builder.model.canonical(
            collection.parent,
            {name: validate_id(arguments[f"p{i}"], graphql_name(name)) for i, name in enumerate(names)},
        )
        return await served.read(info, ids)

    parent = collection.parent.name
    parameters = [
        (f"p{i}", id_argument(name, f"The {parent}'s {name}.", id_type(builder.model, collection.parent, name)))
        for i, name in enumerate(names)
    ]
    return signature(resolve, parameters, defaulted=served.arguments)


def _listed_description(collection: Collection) -> str:
    parent = collection.parent.name
    text = (
        f"{parent}.{collection.field} from the {parent}'s ids alone, without reading the {parent}: one Query; empty"
        f" when no {parent} has them."
    )
    if collection.counter is not None:
        text += f" Selecting totalCount reads the {parent} too, beside the Query."
    return text


def _many(builder: Builder, entity: Entity, argument: str) -> Callable[..., Any]:
    name = entity.id_fields[0]

    async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
        await info.context.reader.walked(resolve_info(info))
        keys = [{name: one} for one in batch_ids(arguments["p0"], argument)]
        reader = info.context.reader
        return [builder.object_of(reader, entity, item) for item in await reader.get_many(entity, keys)]

    description = f"At most {MAX_BATCH_IDS}; the same id may come more than once."
    one = id_type(builder.model, entity, name)
    annotation = Annotated[list[one], strawberry.argument(name=argument, description=description)]  # type: ignore[valid-type]
    return signature(resolve, [("p0", annotation)])


def _node(builder: Builder) -> Callable[..., Any]:
    async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
        await info.context.reader.walked(resolve_info(info))
        entity, ids = global_ids.decode(builder.model, arguments["p0"], "id")
        return builder.object_of(info.context.reader, entity, await info.context.reader.get(entity, ids))

    return signature(resolve, [("p0", id_argument("id", "A global id, as an object's id field gave it."))])


def _nodes(builder: Builder) -> Callable[..., Any]:
    async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
        await info.context.reader.walked(resolve_info(info))
        texts: list[str] = arguments["p0"]
        if len(texts) > MAX_BATCH_IDS:
            raise BadUserInput(f"ids takes at most {MAX_BATCH_IDS} ids", argument="ids")
        decoded = [global_ids.decode(builder.model, text, "ids") for text in texts]
        reader = info.context.reader
        # Every key is checked before any is read: one the caller may not see refuses the whole field.
        for entity, ids in decoded:
            reader.guard.check_item(entity, ids)
        groups: dict[str, list[int]] = {}
        for position, (entity, _) in enumerate(decoded):
            groups.setdefault(entity.name, []).append(position)
        # One get_many per entity, all at once, so they go out together as BatchGetItem.
        answers = await asyncio.gather(
            *(reader.get_many(decoded[at[0]][0], [decoded[i][1] for i in at]) for at in groups.values())
        )
        out: list[Any] = [None] * len(texts)
        for positions, items in zip(groups.values(), answers, strict=True):
            for position, item in zip(positions, items, strict=True):
                out[position] = builder.object_of(reader, decoded[position][0], item)
        return out

    description = f"Global ids, at most {MAX_BATCH_IDS}."
    annotation = Annotated[list[strawberry.ID], strawberry.argument(name="ids", description=description)]
    return signature(resolve, [("p0", annotation)])
