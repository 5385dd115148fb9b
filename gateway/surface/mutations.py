"""The Mutation type: each entity created, updated and deleted, with typed results for expected refusals."""

from __future__ import annotations

import copy
import functools
import json
import operator
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import strawberry

from gateway.design.keys import validate_id
from gateway.design.model import Entity, Item, Numbering, graphql_name
from gateway.design.naming import field_name, set_field_names
from gateway.design.rules import Transition
from gateway.design.values import set_fields
from gateway.errors import BadUserInput, Conflict, NotFound, Unavailable
from gateway.surface.builder import Builder
from gateway.surface.inputs import (
    SET_TYPES,
    describe,
    expected_version,
    input_attributes,
    inputs,
    on_create,
    set_changes,
    token_of,
)
from gateway.surface.toolkit import (
    Fields,
    Info,
    article,
    id_type,
    named,
    new_class,
    resolve_info,
    signature,
    upper_first,
    verbs_of,
)
from gateway.surface.types import (
    CASCADE,
    EXPECTED_VERSION,
    KEEP,
    MUTATION_ERRORS,
    OPTIONAL_VERSION,
    UNCHANGED,
    ClientToken,
    ConflictError,
    ConflictReason,
    Deleted,
    DeletedItems,
    DeleteResult,
    NotFoundError,
    ValidationFailedError,
)
from gateway.writes import building
from gateway.writes.writer import Writer


def mutation_type(builder: Builder) -> Any:
    fields = Fields("Mutation")
    for entity in builder.entities:
        if entity.partition:
            continue  # no item to write
        cls = builder.types[entity.name]
        description = f"The {entity.name}, or why the mutation changed nothing."
        result: Any = Annotated[
            functools.reduce(operator.or_, (cls, *MUTATION_ERRORS)),
            strawberry.union(named(f"{entity.name}Result"), description=description),
        ]
        verbs = verbs_of(entity)
        create, update, delete = verbs["create"], verbs["update"], verbs["delete"]
        fields.resolved(create, result, _create(builder, entity, create), _create_description(builder, entity))
        description = f"Change {article(entity.name)} {entity.name} if it is still at expectedVersion."
        fields.resolved(update, result, _update(builder, entity, update), description)
        fields.resolved(delete, DeleteResult, _delete(builder, entity, delete), _delete_description(builder, entity))
        for transition in builder.declaration.writes.transitions_of(entity):
            description = transition.description or _transition_description(entity, transition)
            fields.resolved(transition.name, result, _transition(builder, entity, transition), description)
    if not fields.annotations:
        return None
    mutation = new_class("Mutation")
    builder.pending.append((fields.apply(mutation), "What can be changed: each entity is created, updated, deleted."))
    return mutation


def _create_description(builder: Builder, entity: Entity) -> str:
    text = f"A new {entity.name}"
    if isinstance(entity.minted, Numbering):
        text += f", numbered {entity.mint} from its {entity.minted.parent}'s {entity.minted.counter}"
    elif entity.mint is not None:
        text += f", with a time-ordered {entity.mint}"
    parents = [f"the {counted.collection.parent.name}" for counted in builder.declaration.writes.parents_of(entity)]
    if parents:
        text += f"; {' and '.join(parents)} must exist"
    return text + ("." if entity.mint is not None else "; a conflict if it exists already.")


def _delete_description(builder: Builder, entity: Entity) -> str:
    members = [counted.collection.field for counted in builder.declaration.writes.children_of(entity)]
    text = f"Delete {article(entity.name)} {entity.name}"
    return text + (f"; one with {' or '.join(members)} only with cascade." if members else ".")


def _create(builder: Builder, entity: Entity, verb: str) -> Callable[..., Any]:
    fields = Fields(_input_name(verb))
    key_type = functools.partial(id_type, builder.model, entity)
    given = [name for name in entity.key_fields if name != entity.mint]
    for name in given:
        if name in entity.optional_id_fields:
            fields.plain(name, key_type(name) | None, f"Part of the new {entity.name}'s key.", default=None)
        else:
            fields.plain(name, key_type(name), f"Part of the new {entity.name}'s key.")
    # A list or map default is no GraphQL input default (a JSON one cannot be printed in the SDL, nor is it a
    # Python field default): a create that leaves it out stores a fresh copy.
    stored_defaults = {
        name: spec.default for name, spec in input_attributes(entity) if isinstance(spec.default, list | dict)
    }
    for name, spec in input_attributes(entity):
        python = builder.type_of(entity, name, spec, input_=True)
        default = spec.default if spec.enum is None or spec.default is None else python(spec.default)
        served = field_name(name, spec)
        if name in stored_defaults:
            text = f"{describe(entity, name, spec)} Left out or null: {json.dumps(spec.default)}."
            fields.plain(name, python | None, text, served, default=None)
        elif spec.required and default is None:
            fields.plain(name, python, describe(entity, name, spec), served)
        elif spec.required:  # never null, and left out it takes its default
            fields.plain(name, python, describe(entity, name, spec), served, default=default)
        else:
            fields.plain(name, python | None, describe(entity, name, spec), served, default=default)
    minted = f"; its {entity.mint} is minted" if entity.mint is not None else ""
    input_type = _input(fields, f"The new {entity.name}'s ids and attributes{minted}.")

    async def create(info: Info, data: Any, client_token: str | None) -> Any:
        ids = builder.model.canonical(
            entity,
            {
                name: validate_id(getattr(data, name), graphql_name(name))
                for name in given
                if getattr(data, name) is not None
            },
        )
        ids.update(building.minted(entity))
        attributes = {**inputs(entity, data), **on_create(entity, ids)}
        for name, value in stored_defaults.items():
            if attributes.get(name) is None:
                attributes[name] = copy.deepcopy(value)
        token = token_of(info, client_token, data)
        return await _written(
            builder, info, entity, await _writer(builder, info).create(entity, ids, attributes, token)
        )

    return _mutation_resolver(create, input_type, f"The {entity.name} to create.")


def _update(builder: Builder, entity: Entity, verb: str) -> Callable[..., Any]:
    fields = Fields(_input_name(verb))
    key_type = functools.partial(id_type, builder.model, entity)
    _key_inputs(builder, fields, entity)
    fields.plain("expectedVersion", int, EXPECTED_VERSION)
    # A tenant's id never moves: an update would carry the item into another tenant's partition of the index.
    movable = sorted(entity.movable_ids - set(builder.declaration.tenancy.grants))
    for name in movable:
        fields.plain(
            name,
            key_type(name) | None,
            f"Part of the {entity.name}'s keys in an index it is in only with it: a value puts it there (or moves it),"
            f" null takes it out. {KEEP}",
            default=strawberry.UNSET,
        )
    for name, spec in input_attributes(entity):
        keep = UNCHANGED if spec.required else KEEP
        description = f"{describe(entity, name, spec)} {keep}"
        python = builder.type_of(entity, name, spec, input_=True)
        fields.plain(name, python | None, description, field_name(name, spec), default=strawberry.UNSET)
        if spec.type in SET_TYPES:
            _set_fields(fields, entity, name, python)
    input_type = _input(fields, f"The changes to {article(entity.name)} {entity.name}, at the version read last.")

    async def update(info: Info, data: Any, client_token: str | None) -> Any:
        ids = _item_ids(builder, entity, data)
        changes = inputs(entity, data)
        changes = {**changes, **set_changes(entity, data, changes), **building.stamps(entity, creating=False)}
        for name in movable:
            value = getattr(data, name)
            if value is not strawberry.UNSET:
                moved = None if value is None else validate_id(value, graphql_name(name))
                changes[name] = moved if moved is None else builder.model.canonical(entity, {name: moved})[name]
        version = expected_version(data.expectedVersion) or 0
        token = token_of(info, client_token, data)
        return await _written(
            builder, info, entity, await _writer(builder, info).update(entity, ids, changes, version, token)
        )

    return _mutation_resolver(update, input_type, f"The {entity.name} to change, and how.")


def _transition_description(entity: Entity, transition: Transition) -> str:
    """What a transition does, from its data: what it requires, sets and removes."""
    parts = []
    if transition.when:
        parts.append("only when " + " and ".join(str(one) for one in transition.when))
    if transition.set:
        parts.append("sets " + ", ".join(graphql_name(name) for name in transition.set))
    if transition.remove:
        parts.append("removes " + ", ".join(graphql_name(name) for name in transition.remove))
    return f"Change {article(entity.name)} {entity.name}: " + "; ".join(parts) + "."


def _transition(builder: Builder, entity: Entity, transition: Transition) -> Callable[..., Any]:
    fields = Fields(_input_name(transition.name))
    _key_inputs(builder, fields, entity)
    fields.plain(
        "expectedVersion", int | None, "When given, change it only if it is still at this version.", default=None
    )
    input_type = _input(fields, f"The {entity.name} to change by {transition.name}.")

    async def change(info: Info, data: Any, client_token: str | None) -> Any:
        ids = _item_ids(builder, entity, data)
        version = expected_version(data.expectedVersion)
        token = token_of(info, client_token, data)
        changes = building.transition_changes(transition)
        writer = _writer(builder, info)
        item = await writer.update(entity, ids, changes, version, token, rules=(transition,))
        return await _written(builder, info, entity, item)

    return _mutation_resolver(change, input_type, f"The {entity.name} to change.")


def _key_inputs(builder: Builder, fields: Fields, entity: Entity) -> None:
    """The input fields that name one item: its table key's ids, of their key's type."""
    key_type = functools.partial(id_type, builder.model, entity)
    for name in entity.id_fields:
        fields.plain(name, key_type(name), f"Part of the {entity.name}'s key.")


def _item_ids(builder: Builder, entity: Entity, data: Any) -> dict[str, str]:
    """The ids an input names its item by, checked and in their stored form."""
    return builder.model.canonical(
        entity, {name: validate_id(getattr(data, name), graphql_name(name)) for name in entity.id_fields}
    )


def _set_fields(fields: Fields, entity: Entity, name: str, python: Any) -> None:
    """An update's fields that add members to a set and remove members from it, beside the one that replaces it."""
    add, remove = set_fields(name)
    spec = entity.declared[name]
    shown = field_name(name, spec)
    served_add, served_remove = set_field_names(name, spec)
    fields.plain(
        add,
        python | None,
        f"Members to add to the {entity.name}'s {shown}, whatever it holds; an absent set is created.",
        served_add,
        default=strawberry.UNSET,
    )
    fields.plain(
        remove,
        python | None,
        f"Members to remove from the {entity.name}'s {shown}; removing its last one removes the set (then null).",
        served_remove,
        default=strawberry.UNSET,
    )


def _delete(builder: Builder, entity: Entity, verb: str) -> Callable[..., Any]:
    fields = Fields(_input_name(verb))
    _key_inputs(builder, fields, entity)
    fields.plain("expectedVersion", int | None, OPTIONAL_VERSION, default=None)
    if any(collection.parent is entity for collection in builder.model.collections):
        fields.plain("cascade", bool, CASCADE, default=False)
    input_type = _input(fields, f"The {entity.name} to delete.")

    async def delete(info: Info, data: Any, client_token: str | None) -> Deleted:
        ids = _item_ids(builder, entity, data)
        version = expected_version(data.expectedVersion)
        token = token_of(info, client_token, data)
        cascade = bool(getattr(data, "cascade", False))
        writer = _writer(builder, info)
        counts = await writer.delete(entity, ids, expected_version=version, cascade=cascade, token=token)
        return Deleted(items=[DeletedItems(type=name, count=count) for name, count in sorted(counts.items())])

    return _mutation_resolver(delete, input_type, f"The {entity.name} to delete.")


async def _written(builder: Builder, info: Info, entity: Entity, item: Item) -> Any:
    """A create's or update's answer: the item written, with what its selection reads read ahead."""
    item = info.context.reader.screen(item)
    await info.context.reader.expand(entity, item, resolve_info(info))
    return _result(builder, entity, item)


def _writer(builder: Builder, info: Info) -> Writer:
    # Mutations run one after another: what an earlier one (or the request's reads) left cached is stale now.
    info.context.reader.forget()
    store = info.context.store
    if store is None:
        raise Unavailable("mutations are not served here")
    return Writer(store, builder.declaration.writes, info.context.ledger, info.context.guard)


def _result(builder: Builder, entity: Entity, item: Item) -> Any:
    ids = builder.model.ids_of(entity, item)
    if ids is None:
        raise NotFound(f"the {entity.name} written cannot be read back", entity=entity.name)
    return builder.makers[entity.name](ids, item)


def _input_name(verb: str) -> str:
    return upper_first(verb) + "Input"


def _input(fields: Fields, description: str) -> Any:
    return strawberry.input(fields.apply(new_class(fields.owner)), description=description)


def _mutation_resolver(
    work: Callable[[Info, Any, str | None], Awaitable[Any]], input_type: Any, description: str
) -> Callable[..., Any]:
    async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
        return await _run(work(info, arguments["input"], arguments.get("client_token")))

    argument = Annotated[input_type, strawberry.argument(description=description)]
    return signature(resolve, [("input", argument)], [("client_token", ClientToken)])


async def _run(work: Awaitable[Any]) -> Any:
    """The mutation's result, or the typed error for an expected refusal; anything else is a GraphQL error."""
    try:
        return await work
    except BadUserInput as error:
        return ValidationFailedError(message=error.message, field=str(error.extensions.get("argument", "")))
    except NotFound as error:
        return NotFoundError(message=error.message, entity=str(error.extensions.get("entity", "")))
    except Conflict as error:
        return ConflictError(
            message=error.message,
            reason=ConflictReason(error.extensions.get("reason", "CHANGED")),
            current_version=error.extensions.get("currentVersion"),
            rule=error.extensions.get("rule"),
        )
