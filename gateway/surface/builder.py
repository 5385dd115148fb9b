"""Builds a declaration's object types: entities, their links and connections, filters and counts."""

from __future__ import annotations

import dataclasses
import functools
import logging
import operator
from collections.abc import Awaitable, Callable, Sequence
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any, NamedTuple

import strawberry
from graphql import GraphQLObjectType, get_named_type
from graphql.execution.values import get_argument_values
from strawberry import UNSET

from gateway.design import global_ids
from gateway.design.declaration import Declaration
from gateway.design.keys import Ids
from gateway.design.model import (
    INT_RANGE,
    Attribute,
    Collection,
    Entity,
    Item,
    Link,
    Shape,
    served_value,
)
from gateway.design.naming import field_name, python_attribute
from gateway.errors import DataMismatch
from gateway.execution import queries, selection
from gateway.execution.queries import Window
from gateway.execution.reader import Member, Page, Reader
from gateway.surface import hierarchy
from gateway.surface.inputs import describe, plain_attributes
from gateway.surface.toolkit import (
    Fields,
    Info,
    article,
    id_type,
    list_or_null,
    named,
    new_class,
    reads_arguments_from_the_operation,
    resolve_info,
    returns_what_the_root_holds,
    signature,
    upper_first,
    verbs_of,
)
from gateway.surface.types import (
    CONDITION_NAMES,
    CURSOR,
    ORDER,
    SCALARS,
    TOTAL_COUNT,
    UNREAD,
    VERSION_FIELD,
    WHERE,
    After,
    Before,
    First,
    Last,
    Node,
    PageInfo,
    SortOrder,
    Unread,
    edge_cursor,
    page_info,
    served_values,
)
from gateway.writes import building

log = logging.getLogger(__name__)

Make = Callable[[dict[str, str], Item], Any]
"""Builds an entity's object from the item's own ids and the item."""


class Served(NamedTuple):
    """A collection's connection as a field serves it: its type, what reads a page of it under the parent's ids,
    and its arguments (parameter, annotation, default)."""

    type: Any
    read: Callable[[Info, dict[str, str]], Awaitable[Any]]
    arguments: list[tuple[str, Any, Any]]


class Builder:
    """Creates every class first and decorates them once all exist, so types may refer to each other in cycles."""

    def __init__(self, declaration: Declaration, default_page_size: int) -> None:
        self.declaration = declaration
        self.default_page_size = default_page_size
        self.model = declaration.model
        self.entities = [entity for entity in self.model.entities if not entity.internal]
        self.types: dict[str, Any] = {entity.name: new_class(entity.name, Node) for entity in self.entities}
        self.makers: dict[str, Make] = {}
        self.pending: list[tuple[Any, str | None]] = []
        self.enums: dict[tuple[str, str], Any] = {}
        self.conditions: dict[str, Any] = {}
        self.enum_fields: dict[str, list[tuple[str, Any]]] = {}
        self.shapes: dict[tuple[Shape, bool], Any] = {}
        self.complex_fields: dict[str, list[tuple[str, Attribute]]] = {}
        self._values: dict[tuple[str, tuple[str, ...]], Callable[[Item], dict[str, Any]]] = {}
        self.connections: dict[str, Served] = {}
        """Each served collection's connection, by the collection's name: a root field reuses its parent's."""

    def type_of(self, entity: Entity | Shape, name: str, spec: Attribute, input_: bool = False) -> Any:
        """The GraphQL type of an attribute's value: its enum when it declares one, its shape's object (or input)
        type for a map, a list of its elements' type for a list, else its type's scalar."""
        if spec.type == "M" and spec.shape is not None:
            return self.shape_type(spec.shape, input_)
        if spec.each is not None:
            # Stored elements of another type are served as null; an input's elements are all given.
            element: Any = self.type_of(entity, name, spec.each, input_)
            return list[element] if input_ else list[element | None]
        if spec.enum is None:
            return SCALARS[spec.type]
        key = (entity.name, name)
        if key not in self.enums:
            type_name = named(entity.name + upper_first(field_name(name, spec)))
            members = [
                (spec.enum_members[value], strawberry.enum_value(value, description=text or f"Stored as {value!r}."))
                for value, text in spec.choices.items()
            ]
            description = f"The values {entity.name}.{field_name(name, spec)} may hold; they are stored as written."
            values: Any = Enum(type_name, members)  # type: ignore[misc]  # the functional API: the names are data
            self.enums[key] = strawberry.enum(values, description=description)
            self.enum_fields.setdefault(entity.name, []).append((name, self.enums[key]))
        return self.enums[key]

    def values_of(self, entity: Entity, names: Sequence[str]) -> Callable[[Item], dict[str, Any]]:
        """What serves the plain values ``names`` of an ``entity``'s item as GraphQL serves them (enum attributes as
        their enum's members, maps and lists as objects and lists of their shapes' types), an error in place of
        each value an unreadable item cannot serve. Made once per entity and names, when first asked for (the
        object types, and so the enums and shapes, all exist by then), so that each object pays only for its
        values, not for deciding again how each one is served."""
        key = (entity.name, tuple(names))
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = self._serve_values(entity, names)
        return found

    def _serve_values(self, entity: Entity, names: Sequence[str]) -> Callable[[Item], dict[str, Any]]:
        enums = dict(self.enum_fields.get(entity.name, ()))
        shaped = dict(self.complex_fields.get(entity.name, ()))
        attributes = {python_attribute(name): name for name in names}
        steps = [
            (name, attribute, spec, f"{entity.name}.{name}", enums.get(name), shaped.get(name), _stored_as_served(spec))
            for attribute, name in attributes.items()
            for spec in (entity.declared[name],)
        ]

        def values(item: Item) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, attribute, spec, where, enum, shape, as_served in steps:
                value = item.get(name)
                if value is None:  # served as null, whatever its type
                    out[attribute] = None
                    continue
                try:  # free where nothing raises: a value of the declared type costs no more than before
                    if as_served is int:
                        value = _integer(spec, value, where)
                    elif as_served is None or type(value) is not as_served:
                        value = served_value(spec, value, where)
                        if enum is not None and value is not None:
                            value = enum(value)
                        if shape is not None:
                            value = self.shaped(shape, value)
                except DataMismatch as mismatch:  # an error at its field, in place of a wrong null
                    value = self._of_item(mismatch, entity, name, item)
                out[attribute] = value
            return served_values(out, item, attributes)

        return values

    def _of_item(self, mismatch: DataMismatch, entity: Entity, name: str, item: Item) -> DataMismatch:
        """``mismatch``, raised by ``served_value``, with the entity, the stored attribute and the item's key."""
        mismatch.extensions.update(entity=entity.name, attribute=name, key=self.model.json_key(item))
        return mismatch

    def shaped(self, spec: Attribute, value: Any) -> Any:
        """A served map or list (``served_value``) as instances of its shapes' object types."""
        if value is None:
            return None
        if spec.each is not None:
            return [self.shaped(spec.each, one) for one in value]
        if spec.shape is None:
            return value
        shape = spec.shape
        fields = {}
        for name, field in shape.declared.items():
            one = value[name]
            enum = self.enums.get((shape.name, name))
            fields[python_attribute(name)] = (
                enum(one) if enum is not None and one is not None else self.shaped(field, one)
            )
        return self.shape_type(shape, False)(**fields)

    def shape_type(self, shape: Shape, input_: bool) -> Any:
        """The object type of a map's shape, or its input type; made once per shape and shared."""
        key = (shape, input_)
        if key in self.shapes:
            return self.shapes[key]
        name = shape.name + ("Input" if input_ else "")
        cls = new_class(name)
        self.shapes[key] = cls
        fields = Fields(name)
        for stored, spec in shape.declared.items():
            python = self.type_of(shape, stored, spec, input_)
            served = field_name(stored, spec)
            described = spec.description or f"The {shape.name}'s {stored}."
            if input_ and spec.required:
                fields.plain(stored, python, described, served)
            elif input_:
                fields.plain(stored, python | None, described, served, default=None)
            else:
                fields.plain(stored, python | None, described, served)
        fields.apply(cls)
        if input_:
            strawberry.input(
                cls,
                description=f"{article(shape.name)} {shape.name}, as a write gives it: null fields are not stored.",
            )
        else:
            self.pending.append((cls, shape.description))
        return cls

    def extra(self, fields: Fields) -> None:
        """The hand-written fields the declaration adds to this type."""
        for name, field in self.declaration.fields.get(fields.owner, {}).items():
            fields.add(name, None, field)

    def serves(self, entity: Entity) -> bool:
        return entity.name in self.types

    # --- objects ----------------------------------------------------------------------------------------------

    def object_type(self, entity: Entity) -> None:
        cls = self.types[entity.name]
        fields = Fields(entity.name, taken=["id"])
        for name in entity.key_fields:
            served = id_type(self.model, entity, name)
            fields.plain(
                name,
                served | None if name in entity.index_only_ids else served,
                f"From the {entity.name}'s own key.",
            )
        for name, spec in plain_attributes(entity):
            fields.plain(
                name, self.type_of(entity, name, spec) | None, describe(entity, name, spec), field_name(name, spec)
            )
            if spec.type in ("M", "L"):
                self.complex_fields.setdefault(entity.name, []).append((name, spec))
        fields.plain("version", int, VERSION_FIELD)
        for collection in self.model.collections:
            ends = (*collection.members, *(() if collection.target is None else (collection.target,)))
            if collection.parent is entity and all(self.serves(one) for one in ends):
                self._collection_field(fields, collection)
        for link in self.model.links:
            if link.source is entity and self.serves(link.target):
                self._link_field(fields, link)
        self.extra(fields)
        fields.private("_ids")
        self.pending.append((fields.apply(cls), entity.description or f"{article(entity.name)} {entity.name}."))

    def maker(self, entity: Entity) -> Make:
        cls = self.types[entity.name]
        keys = entity.key_fields
        names = [name for name, _ in plain_attributes(entity)]
        values = self.values_of(entity, names)
        if not _fills(cls, {"version", "_ids", *keys, *map(python_attribute, names)}):

            def make_by_init(ids: dict[str, str], item: Item) -> Any:
                fields = values(item)
                for key in keys:
                    fields[key] = ids.get(key)
                return cls(id=global_ids.encode(entity, ids), version=served_version(entity, item), _ids=ids, **fields)

            return make_by_init

        # An object is its fields' values, and its global id is encoded when first read: most operations select
        # no id of most objects they answer (measured: the encoding and the dataclass's __init__ were a quarter of
        # building an object).
        cls.id = _GlobalId(entity)
        new = object.__new__

        def make(ids: dict[str, str], item: Item) -> Any:
            fields = values(item)
            for key in keys:
                fields[key] = ids.get(key)
            fields["version"] = served_version(entity, item)
            fields["_ids"] = ids
            one = new(cls)
            one.__dict__ = fields
            return one

        return make

    def object_of(self, reader: Reader, entity: Entity, item: Item | None) -> Any:
        """The object of an item read at ``entity``'s key, built from the ids in the item itself; None for a missing
        item or another entity's. An item that has the entity's key and reads as no entity contradicts the
        declaration: a ``DataMismatch``, which its field reports, in place of the object. The request's reader
        recognises the item, once: the walk has most often done so already."""
        if item is None:
            return None
        ids = reader.ids_of(entity, item)
        if ids is None:
            return reader.mismatch(entity, item)
        return self.makers[entity.name](ids, item)

    async def read(self, info: Info, entity: Entity, ids: Ids) -> Any:
        reader = info.context.reader
        return self.object_of(reader, entity, await reader.get(entity, {name: ids[name] for name in entity.id_fields}))

    async def read_many(self, info: Info, collection: Collection, members: Sequence[Member]) -> list[Any]:
        entity = collection.target
        assert entity is not None
        keys = [collection.target_ids(member.ids) for member in members]
        reader = info.context.reader
        return [self.object_of(reader, entity, item) for item in await reader.get_many(entity, keys)]

    # --- relations --------------------------------------------------------------------------------------------

    def _link_field(self, fields: Fields, link: Link) -> None:
        target = link.target

        async def resolve(root: Any, info: Info) -> Any:
            ids = link.target_ids(root._ids)
            return None if ids is None else await self.read(info, target, ids)

        description = link.description or f"The {target.name} of this {link.source.name}; null if it does not exist."
        fields.resolved(link.field, self.types[target.name] | None, resolve, description)

    def _collection_field(self, fields: Fields, collection: Collection) -> None:
        served = self._connection(collection)

        @reads_arguments_from_the_operation
        async def resolve(root: Any, info: Info, **_: Any) -> Any:
            return await served.read(info, root._ids)

        signature(resolve, (), defaulted=served.arguments)
        fields.resolved(collection.field, served.type, resolve, collection.description)
        self.connections[collection.name] = served

    def _connection(self, collection: Collection) -> Served:
        """The connection type of ``collection``, made once: the parent's field and the root field serve it alike."""
        prefix = collection.parent.name + upper_first(collection.field)
        target = collection.target
        if collection.is_union:
            connection, connect = self._union_connection(collection, prefix)

            async def answer(page: Page, info: Info, parent_ids: dict[str, str] | None) -> Any:
                return connect(page, parent_ids)

        elif target is None:
            connection, connect = self._plain_connection(collection, prefix)

            async def answer(page: Page, info: Info, parent_ids: dict[str, str] | None) -> Any:
                return connect(page, parent_ids)

        else:
            connection, connect_edges = self._edge_connection(collection, target, prefix)

            async def answer(page: Page, info: Info, parent_ids: dict[str, str] | None) -> Any:
                # Read here, the targets are plain values to the edges rather than a resolver each awaiting its own
                # read (a quarter of the CPU of a 100-edge page); one BatchGetItem either way.
                nodes = await self.read_many(info, collection, page.members) if _selects_nodes(info) else None
                return connect_edges(page, parent_ids, nodes)

        async def read(info: Info, parent_ids: dict[str, str]) -> Any:
            # The arguments are read from the operation as the look-ahead read them: one reading of the page.
            window, ids = _window(info, collection, parent_ids)
            page = await info.context.reader.page(collection, ids, window)
            if page.mismatch is not None:
                raise page.mismatch
            # A range, like a level, reads part of the members: the parent's count is not theirs.
            counted = None if window.range is not None else hierarchy.counted(parent_ids, ids)
            return await answer(page, info, counted)

        return Served(connection, read, self._connection_arguments(collection, prefix))

    def _connection_arguments(self, collection: Collection, prefix: str) -> list[tuple[str, Any, Any]]:
        """A connection's arguments, as (parameter, annotation, default): the page, its order, its filter, its
        levels and its range."""
        order = SortOrder.ASCENDING if collection.ascending else SortOrder.DESCENDING
        arguments: list[tuple[str, Any, Any]] = [
            ("first", First, self.default_page_size),
            ("after", After, None),
            ("last", Last, None),
            ("before", Before, None),
            ("order", Annotated[SortOrder, strawberry.argument(description=ORDER)], order),
        ]
        if collection.filters:
            where: Any = Annotated[
                self._filter_input(collection, prefix) | None,
                strawberry.argument(description=WHERE),
            ]
            arguments.append(("where", where, UNSET))
        arguments += hierarchy.arguments(collection)
        arguments += hierarchy.range_arguments(collection, queries.sorts_by_number(self.model, collection))
        return arguments

    def _plain_connection(
        self, collection: Collection, prefix: str
    ) -> tuple[Any, Callable[[Page, dict[str, str] | None], Any]]:
        member = collection.entity
        edge = new_class(prefix + "Edge")
        edge_fields = Fields(edge.__name__)
        edge_fields.resolved("cursor", str, edge_cursor, CURSOR)
        edge_fields.plain("node", self.types[member.name], f"The {member.name}.")
        edge_fields.private("_member")
        self.pending.append((edge_fields.apply(edge), f"One {member.name} of {collection.name}."))
        connection = self._connection_class(collection, prefix, edge, self.types[member.name], None)

        def connect(page: Page, parent_ids: dict[str, str] | None) -> Any:
            make = self.makers[member.name]
            nodes = [make(one.ids, one.item) for one in page.members]
            return connection(
                edges=[edge(_member=one, node=node) for one, node in zip(page.members, nodes, strict=True)],
                nodes=nodes,
                pageInfo=page_info(page),
                _parent_ids=parent_ids,
            )

        return connection, connect

    def _union_connection(
        self, collection: Collection, prefix: str
    ) -> tuple[Any, Callable[[Page, dict[str, str] | None], Any]]:
        """``<Parent><Field>Connection`` of a union's nodes: each node is the object of the kind its item was
        recognised as, and a client tells them apart by ``__typename`` or inline fragments."""
        kinds = [self.types[entity.name] for entity in collection.members]
        names = ", ".join(entity.name for entity in collection.members)
        node: Any = Annotated[
            functools.reduce(operator.or_, kinds),
            strawberry.union(named(collection.union_name), description=f"One of {collection.name}: {names}."),
        ]
        edge = new_class(prefix + "Edge")
        edge_fields = Fields(edge.__name__)
        edge_fields.resolved("cursor", str, edge_cursor, CURSOR)
        edge_fields.plain("node", node, f"The {collection.union_name}: {names}.")
        edge_fields.private("_member")
        self.pending.append((edge_fields.apply(edge), f"One {collection.union_name} of {collection.name}."))
        connection = self._connection_class(collection, prefix, edge, node, None)

        def connect(page: Page, parent_ids: dict[str, str] | None) -> Any:
            nodes = [self.makers[one.entity.name](one.ids, one.item) for one in page.members if one.entity]
            return connection(
                edges=[edge(_member=one, node=node) for one, node in zip(page.members, nodes, strict=True)],
                nodes=nodes,
                pageInfo=page_info(page),
                _parent_ids=parent_ids,
            )

        return connection, connect

    def _edge_connection(
        self, collection: Collection, target: Entity, prefix: str
    ) -> tuple[Any, Callable[[Page, dict[str, str] | None, list[Any] | None], Any]]:
        member = collection.entity
        plain = [name for name, _ in plain_attributes(member)]

        @returns_what_the_root_holds("_node", Unread)
        def read_node(root: Any, info: Info) -> Any:
            if isinstance(root._node, Unread):
                # Read one by one, batched, only where the connection did not see the field coming.
                return self.read(info, target, collection.target_ids(root._member.ids))
            return root._node

        def read_nodes(root: Any, info: Info) -> Any:
            if any(isinstance(edge._node, Unread) for edge in root.edges):
                return self.read_many(info, collection, [edge._member for edge in root.edges])
            return [edge._node for edge in root.edges]

        node = self.types[target.name] | None
        edge = new_class(prefix + "Edge")
        edge_fields = Fields(edge.__name__)
        edge_fields.resolved("cursor", str, edge_cursor, CURSOR)
        description = f"The {target.name}; null if the {member.name} points at one that no longer exists."
        edge_fields.resolved("node", node, read_node, description)
        for name, spec in plain_attributes(member):
            served = field_name(name, spec)
            edge_fields.plain(name, self.type_of(member, name, spec) | None, describe(member, name, spec), served)
        verbs = verbs_of(member)
        edge_fields.plain("version", int, f"The {member.name}'s version, for {verbs['update']} and {verbs['delete']}.")
        edge_fields.private("_member")
        edge_fields.private("_node")
        description = f"One {target.name} of {collection.name}, with the {member.name} that links them."
        self.pending.append((edge_fields.apply(edge), description))
        connection = self._connection_class(collection, prefix, edge, node, read_nodes)

        def connect(page: Page, parent_ids: dict[str, str] | None, nodes: list[Any] | None) -> Any:
            found: list[Any] = [UNREAD] * len(page.members) if nodes is None else nodes
            values = self.values_of(member, plain)
            edges = []
            for one, node in zip(page.members, found, strict=True):
                data = values(one.item)
                edges.append(edge(_member=one, _node=node, version=served_version(member, one.item), **data))
            return connection(edges=edges, pageInfo=page_info(page), _parent_ids=parent_ids)

        return connection, connect

    def _connection_class(
        self, collection: Collection, prefix: str, edge: Any, node: Any, read_nodes: Callable[..., Any] | None
    ) -> Any:
        connection = new_class(prefix + "Connection")
        fields = Fields(connection.__name__)
        fields.plain("edges", list[edge], "The page's members, each with its cursor.")
        if read_nodes is None:
            fields.plain("nodes", list[node], "The edges' nodes, for a client that needs no cursor.")
        else:
            fields.resolved("nodes", list[node], read_nodes, "The edges' nodes, for a client that needs no cursor.")
        fields.plain("pageInfo", PageInfo, "Where the page ends, and whether more follow.")
        if collection.counter is not None:
            fields.resolved("totalCount", int | None, self._total_count(collection, collection.counter), TOTAL_COUNT)
        fields.private("_parent_ids")
        self.pending.append((fields.apply(connection), f"A page of {collection.name}, with where it ends."))
        return connection

    def _filter_input(self, collection: Collection, prefix: str) -> Any:
        """``<Parent><Field>Filter``: a condition per filterable attribute, all of which hold, and and/or lists."""
        member = collection.entity
        cls = new_class(prefix + "Filter")
        fields = Fields(cls.__name__)
        for name in collection.filters:
            spec = member.declared[name]
            served = field_name(name, spec)
            description = f"Members whose {served} meets this condition."
            fields.plain(name, self._condition(member, name, spec) | None, description, served, default=UNSET)
        fields.plain("and_", list_or_null(cls), "Members that meet every one of these filters.", default=UNSET)
        fields.plain("or_", list_or_null(cls), "Members that meet at least one of these filters.", default=UNSET)
        description = (
            f"Which members of {collection.name} to return; the conditions given all hold. Applied by DynamoDB "
            "as the page is read: a page keeps reading until it fills, within the read budget (pageInfo says when "
            "the budget stopped it)."
        )
        return strawberry.input(fields.apply(cls), description=description)

    def _condition(self, entity: Entity, name: str, spec: Attribute) -> Any:
        """The condition input of an attribute's type (a scalar: the model refuses filters on others): shared by
        scalar, one per enum."""
        value = self.type_of(entity, name, spec)
        type_name = (value.__name__ if spec.enum is not None else CONDITION_NAMES[spec.type]) + "Condition"
        if type_name in self.conditions:
            return self.conditions[type_name]
        cls = new_class(type_name)
        fields = Fields(type_name)
        fields.plain("eq", value | None, "Equal to this value.", default=UNSET)
        fields.plain("ne", value | None, "Not equal to this value (true where the attribute is absent).", default=UNSET)
        fields.plain("in_", list_or_null(value), "Equal to one of these values (1 to 100).", default=UNSET)
        if spec.enum is None:
            if spec.type in ("S", "DATE"):
                fields.plain("begins_with", str | None, "Text that starts with this prefix.", default=UNSET)
            if spec.type != "BOOL":
                between = "Between these two values, both included (low, then high)."
                fields.plain("between", list_or_null(value), between, default=UNSET)
        fields.plain("exists", bool | None, "true: the attribute is present; false: it is absent.", default=UNSET)
        description = "Conditions on one attribute; those given all hold. Strings compare by their UTF-8 bytes."
        self.conditions[type_name] = strawberry.input(fields.apply(cls), description=description)
        return self.conditions[type_name]

    def _total_count(self, collection: Collection, counter: str) -> Callable[..., Any]:
        parent = collection.parent
        if parent.declared[counter].type != "INT":
            raise ValueError(f"{collection.name}: the counter {counter!r} is not declared INT")

        async def total_count(root: Any, info: Info) -> int | None:
            if root._parent_ids is None:
                return None  # a level of a hierarchy: the parent counts the whole collection only
            # Through the request's batched reader: a cache hit when the parent was read.
            item = await info.context.reader.get(parent, root._parent_ids)
            if item is None:
                return None
            try:
                count: int | None = served_value(
                    parent.declared[counter], item.get(counter), f"{parent.name}.{counter}"
                )
            except DataMismatch as mismatch:
                raise self._of_item(mismatch, parent, counter, item) from None
            return count

        return total_count


class _GlobalId:
    """An object's ``id``, encoded from its ids when first read and kept in its dictionary, which is read first
    from then on (a descriptor without ``__set__``)."""

    __slots__ = ("_entity",)

    def __init__(self, entity: Entity) -> None:
        self._entity = entity

    def __get__(self, one: Any, owner: type | None = None) -> Any:
        if one is None:
            return self
        found = one.__dict__["id"] = global_ids.encode(self._entity, one._ids)
        return found


def _fills(cls: type, given: set[str]) -> bool:
    """Whether an object of ``cls`` (a dataclass) is whole once ``given`` are set in its dictionary and its ``id``
    left to ``_GlobalId``, without its ``__init__``: every other field has a default on the class, there is no
    ``__post_init__`` and the class has no ``id`` of its own."""
    if hasattr(cls, "__post_init__") or hasattr(cls, "id") or hasattr(cls, "__slots__"):
        return False
    fields = dataclasses.fields(cls)
    return all(one.name in given or one.name == "id" or hasattr(cls, one.name) for one in fields if one.init)


def served_version(entity: Entity, item: Item) -> int:
    value = item.get(building.VERSION)
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    if value is not None:
        log.warning("%s.version holds a %s; served as 0", entity.name, type(value).__name__)
    return 0


def _stored_as_served(spec: Attribute) -> type | None:
    """The type whose stored values an attribute serves as they are, with nothing to check or convert: text, of no
    enum and no number kept as text (``served_value`` returns such a value unchanged); None for any other. ``int``
    for an ``INT`` of no enum, not kept as text: served by ``_integer``."""
    if spec.enum is not None or spec.text:
        return None
    return {"S": str, "BOOL": bool, "INT": int}.get(spec.type)


def _integer(spec: Attribute, value: Any, where: str) -> Any:
    """``served_value`` of an ``INT`` (``_stored_as_served`` is ``int``): a whole number in range as an int, without
    the general checks; anything else as ``served_value`` serves it."""
    if type(value) is Decimal and value.is_finite():
        number = int(value)
        if number == value and number in INT_RANGE:
            return number
    return served_value(spec, value, where)


def _window(info: Info, collection: Collection, parent_ids: dict[str, str]) -> tuple[Window, dict[str, str]]:
    """The page a connection's arguments ask for, and the ids it is read under (the parent's, narrowed by the levels
    given), read from the operation as the look-ahead reads them; ``first`` counts as set only when the operation
    sets it, not by its default."""
    raw = resolve_info(info)
    variables = selection.Scope.of(raw).variables
    node = raw.field_nodes[0]
    args = get_argument_values(raw.parent_type.fields[raw.field_name], node, variables)
    first_given = args.get("first") is not None and "first" in selection.given(node, variables)
    window: Window = info.context.reader.window(args, first_given, collection)
    ids = queries.narrowed(collection, parent_ids, args) if queries.narrows(collection, args) else parent_ids
    return window, ids


def _selects_nodes(info: Info) -> bool:
    """Whether a connection's selection reads its targets: ``nodes``, or ``node`` under ``edges``."""
    raw = resolve_info(info)
    connection = get_named_type(raw.return_type)
    if not isinstance(connection, GraphQLObjectType):
        return False
    scope = selection.Scope.of(raw, info.context.reader.selections(raw))
    selection_sets = [node.selection_set for node in raw.field_nodes if node.selection_set is not None]
    return any(
        field.name == "nodes"
        or (field.name == "edges" and any(one.name == "node" for one in selection.children(scope, field)))
        for field in selection.fields(scope, connection, selection_sets)
    )
