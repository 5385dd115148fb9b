"""The GraphQL surface of a declaration: its types, connections, root fields and mutations, all named by it."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
import keyword
import logging
import operator
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any, NewType

import strawberry
from graphql import GraphQLInterfaceType, GraphQLObjectType, GraphQLUnionType, get_named_type
from graphql.execution.values import get_argument_values
from strawberry import UNSET
from strawberry.schema.config import StrawberryConfig
from strawberry.types.private import StrawberryPrivate

from gateway import hierarchy, nested, plan, selection, writes
from gateway import ids as global_ids
from gateway.config import Settings
from gateway.context import Context
from gateway.declaration import Declaration
from gateway.errors import BadUserInput, Conflict, GatewayError, NotFound
from gateway.extensions import Accounting, ErrorPolicy, GatewaySchema, Limits
from gateway.keys import Ids, validate_id
from gateway.loaders import Member, Page
from gateway.model import (
    Attribute,
    AttributeType,
    Collection,
    Entity,
    Item,
    Link,
    Shape,
    attribute_values,
    graphql_name,
    parse_date,
)
from gateway.plan import ASCENDING, MAX_BATCH_IDS, Window, batch_ids
from gateway.wire import Unreadable
from gateway.writer import Token, Writer

log = logging.getLogger(__name__)

Info = strawberry.Info[Context, None]
_Make = Callable[[dict[str, str], Item], Any]
"""Builds an entity's object from the item's own ids and the item."""


def _serialize_date(value: date | str) -> str:
    return value.isoformat() if isinstance(value, date) else value


def _parse_date(value: object) -> date:
    parsed = parse_date(value) if isinstance(value, str) else None
    if parsed is None:
        raise BadUserInput(f"{value!r} is not a Date: a calendar date written YYYY-MM-DD")
    return parsed


Date = NewType("Date", str)
"""A DATE attribute's value: stored as S ``YYYY-MM-DD``, served as the ``Date`` scalar."""
DATE_SCALAR = strawberry.scalar(
    name="Date",
    description="A calendar date, written YYYY-MM-DD (ISO 8601), e.g. 2026-09-01.",
    serialize=_serialize_date,
    parse_value=_parse_date,
)

_SCALARS: dict[AttributeType, Any] = {
    "S": str,
    "INT": int,
    "N": float,
    "BOOL": bool,
    "DATE": Date,
    "JSON": strawberry.scalars.JSON,
}
_CONDITION_NAMES: dict[AttributeType, str] = {
    "S": "String",
    "INT": "Int",
    "N": "Float",
    "BOOL": "Boolean",
    "DATE": "Date",
}


@strawberry.enum(description="Which way a connection's members are ordered by the key that sorts them.")
class SortOrder(Enum):
    ASCENDING = strawberry.enum_value(ASCENDING, description="Lowest key first.")
    DESCENDING = strawberry.enum_value("DESCENDING", description="Highest key first.")


ORDER = (
    "Ascending or descending by the key that sorts the members; the default is the collection's own order. Either "
    "way is one Query (DynamoDB reads an index both ways); a cursor reads on in the order it is given with."
)
WHERE = "Only the members that meet this filter; pages still fill (see the filter's description)."

VERSION = (
    "The item's version, raised by every update: pass it as expectedVersion to change the item only if nobody "
    "else has since. 0 for an item another tool wrote."
)
TOTAL_COUNT = (
    "How many members there are in all, from the parent's counter (no extra request when the parent was read); "
    "null on a table another tool wrote until `tablegraph recount` has run."
)
EXPECTED_VERSION = "The version read last; the change applies only if the item is still at it (0: written elsewhere)."
OPTIONAL_VERSION = "When given, delete only if the item is still at this version."
CASCADE = "Also delete the members (and their members), in bounded batches; without it, a parent with members stays."
KEEP = "Omitted: unchanged; null: removed."
UNCHANGED = "Omitted: unchanged."
CURSOR = "Where this edge is: pass it as after to read on from it, or as before to read back from it."
TOKEN = (
    "Makes the mutation idempotent for 24 hours: sent again with the same token and arguments, it is applied once "
    "and answers as the first time did; the same token with other arguments is a TOKEN_REUSED conflict."
)

First = Annotated[
    int | None,
    strawberry.argument(
        description=(
            "How many to return from the start (or after `after`), from 1 to the page limit; null: the server's "
            "default page size. Leave it out when paging backwards with last or before."
        )
    ),
]
After = Annotated[
    str | None,
    strawberry.argument(description="Resume after this cursor, taken from this same field of this same parent."),
]
Last = Annotated[
    int | None,
    strawberry.argument(
        description=(
            "How many to return from the end (or before `before`), from 1 to the page limit; null with before: "
            "the server's default page size. Members come in the same order as forwards. Not with first or after."
        )
    ),
]
Before = Annotated[
    str | None,
    strawberry.argument(
        description="Read back from this cursor, taken from this same field of this same parent. Not with after."
    ),
]
ClientToken = Annotated[str | None, strawberry.argument(description=TOKEN, name="clientToken")]


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
    return Graph(_Builder(declaration, default_page_size).schema(), declaration)


def possible_types(schema: strawberry.Schema) -> dict[str, list[str]]:
    """Each interface and union of ``schema`` with the object types that can stand for it, sorted: the
    ``possibleTypes`` Apollo Client needs to match fragments on ``Node``, ``MutationError`` and the results."""
    graphql_schema = schema._schema
    return {
        name: sorted(one.name for one in graphql_schema.get_possible_types(named))
        for name, named in sorted(graphql_schema.type_map.items())
        if not name.startswith("__") and isinstance(named, GraphQLInterfaceType | GraphQLUnionType)
    }


def fragment_matcher(schema: strawberry.Schema) -> str:
    """The fragment matcher file as graphql-codegen's ``fragment-matcher`` plugin writes it for Apollo Client 3:
    ``{"possibleTypes": ...}``, to pass as ``new InMemoryCache({possibleTypes})`` (urql graphcache: the same
    mapping, or the introspected schema)."""
    return json.dumps({"possibleTypes": possible_types(schema)}, indent=2) + "\n"


# --- the types every declaration shares ---------------------------------------------------------------------------


@strawberry.interface(description="An object with a global id: node(id:) and nodes(ids:) read it back.")
class Node:
    id: strawberry.ID = strawberry.field(description="Opaque, and unique across all types.")


def _start_cursor(root: PageInfo) -> str | None:
    return root.page.start_cursor


def _end_cursor(root: PageInfo) -> str | None:
    return root.page.end_cursor


@strawberry.type(description="Where a page starts and ends, and whether more members lie beyond it.")
class PageInfo:
    has_previous_page: bool = strawberry.field(
        description=(
            "Read backwards (last): whether members precede this page, to read back with startCursor as before. "
            "Read forwards: whether the page was read after a cursor, so members came before it when the cursor "
            "was given out (false for a page read from the start)."
        )
    )
    has_next_page: bool = strawberry.field(
        description=(
            "Read forwards (first): whether members follow this page, to read on with endCursor as after. Read "
            "backwards: whether the page was read before a cursor, so members came after it when the cursor was "
            "given out (false for a page read from the end)."
        )
    )
    start_cursor: str | None = strawberry.field(
        resolver=_start_cursor,
        description="The cursor of the first edge, to pass as before; null on an empty page.",
    )
    read_limit_reached: bool = strawberry.field(
        description=(
            "A filtered page that stopped at its read budget before it filled: more members may match past "
            "endCursor (before startCursor, read backwards), which then marks where reading stopped rather than "
            "the last edge. Always false on a page without a filter."
        )
    )
    end_cursor: str | None = strawberry.field(
        resolver=_end_cursor, description="The cursor of the last edge, to pass as after; null on an empty page."
    )
    page: strawberry.Private[Page]


@strawberry.interface(description="An expected reason why a mutation changed nothing.")
class MutationError:
    message: str = strawberry.field(description="What went wrong, for a person to read.")


@strawberry.type(description="The item, or a parent it needs, does not exist.")
class NotFoundError(MutationError):
    entity: str = strawberry.field(description="The kind of item that is missing, e.g. Workspace.")


@strawberry.enum(description="Why a mutation found the table in a state it could not apply to.")
class ConflictReason(Enum):
    ALREADY_EXISTS = strawberry.enum_value("ALREADY_EXISTS", description="A create found the item there already.")
    VERSION_MISMATCH = strawberry.enum_value(
        "VERSION_MISMATCH", description="The item is no longer at expectedVersion: someone changed it since."
    )
    HAS_CHILDREN = strawberry.enum_value(
        "HAS_CHILDREN", description="A delete without cascade found members under the item."
    )
    NOT_COUNTED = strawberry.enum_value(
        "NOT_COUNTED", description="A parent's counter is missing (written by another tool): run tablegraph recount."
    )
    TOKEN_REUSED = strawberry.enum_value(
        "TOKEN_REUSED", description="The clientToken was used before with other arguments."
    )
    CHANGED = strawberry.enum_value("CHANGED", description="The item changed while the mutation ran; read it again.")


@strawberry.type(description="The table is not in the state the mutation needs; nothing was changed.")
class ConflictError(MutationError):
    reason: ConflictReason = strawberry.field(description="What kind of conflict it is.")
    current_version: int | None = strawberry.field(
        description="The item's version now, when it exists: read it again, or retry with this expectedVersion."
    )


@strawberry.type(description="An argument is not acceptable; no request was sent.")
class ValidationFailedError(MutationError):
    field: str = strawberry.field(description="The argument or input field that was refused.")


@strawberry.type(description="How many items of one type a delete removed.")
class DeletedItems:
    type: str = strawberry.field(description="The entity, e.g. Project.")
    count: int = strawberry.field(description="How many items of the type were removed.")


@strawberry.type(description="What a delete removed: the item, and with cascade its members, by type.")
class Deleted:
    items: list[DeletedItems] = strawberry.field(description="One entry per type that lost items, by type name.")


class UnreadableItem(GatewayError):
    """A stored value a response cannot carry: text that is not valid Unicode, or a value no decoder reads."""

    code = "UNREADABLE_ITEM"


def _served(values: dict[str, Any], item: Item) -> dict[str, Any]:
    """The plain field values of ``item``; an error, reported at its field, in place of each one it cannot serve.

    Plain attribute fields are nullable, so the object (or edge) is still served with everything else it holds:
    one unreadable item never nulls its list or page.
    """
    if type(item) is not Unreadable:
        return values
    return {
        name: UnreadableItem(f"the stored {name} cannot be served: it is not valid Unicode text, or not readable")
        if name in item.invalid
        else value
        for name, value in values.items()
    }


_ERRORS = (NotFoundError, ConflictError, ValidationFailedError)
DeleteResult = Annotated[
    Deleted | NotFoundError | ConflictError | ValidationFailedError,
    strawberry.union("DeleteResult", description="What was deleted, or why nothing was."),
]


def _page_info(page: Page) -> PageInfo:
    return PageInfo(
        has_previous_page=page.has_previous,
        has_next_page=page.has_next,
        read_limit_reached=page.stopped is not None,
        page=page,
    )


class _Unread:
    """An edge's node that its connection did not read: its resolver reads it."""


_UNREAD = _Unread()


def _cursor(root: Any) -> str:
    member: Member = root._member
    return member.cursor


# --- building -----------------------------------------------------------------------------------------------------


class _Fields:
    """The fields of one generated class, in order; a name given twice is a modelling error, reported at start-up."""

    def __init__(self, owner: str, taken: Sequence[str] = ()) -> None:
        self.owner = owner
        self.taken = set(taken)
        self.annotations: dict[str, Any] = {}
        self.values: dict[str, Any] = {}

    def add(self, name: str, annotation: Any, field: Any) -> None:
        # The GraphQL name is also the Python attribute and keyword argument that carries the value.
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ValueError(f"{self.owner}.{name}: not usable as a GraphQL field name")
        if graphql_name(name) in self.taken:
            raise ValueError(f"{self.owner}.{graphql_name(name)}: two fields of the same name")
        self.taken.add(graphql_name(name))
        if annotation is not None:
            self.annotations[name] = annotation
        self.values[name] = field

    def plain(self, name: str, annotation: Any, description: str | None, **default: Any) -> None:
        self.add(name, annotation, strawberry.field(name=graphql_name(name), description=description, **default))

    def resolved(self, name: str, annotation: Any, resolver: Callable[..., Any], description: str | None) -> None:
        field = strawberry.field(
            resolver=resolver, graphql_type=annotation, name=graphql_name(name), description=description
        )
        self.add(name, annotation, field)

    def private(self, name: str) -> None:
        self.annotations[name] = Annotated[Any, StrawberryPrivate()]

    def apply(self, cls: Any) -> Any:
        cls.__annotations__ = self.annotations
        for name, value in self.values.items():
            setattr(cls, name, value)
        return cls


def _new_class(name: str, *bases: type) -> Any:
    return type(name, bases, {"__module__": __name__})


def _signature(
    resolve: Callable[..., Any],
    parameters: Sequence[tuple[str, Any]],
    optional: Sequence[tuple[str, Any]] = (),
    defaulted: Sequence[tuple[str, Any, Any]] = (),
) -> Callable[..., Any]:
    """``resolve`` (root, info, keyword arguments) exposing these arguments, the ``optional`` ones with a null
    default and the ``defaulted`` ones with theirs: their names come from the declaration."""
    kinds = inspect.Parameter
    with_defaults = [*((name, annotation, None) for name, annotation in optional), *defaulted]
    signature = inspect.Signature(
        [
            kinds("root", kinds.POSITIONAL_OR_KEYWORD),
            kinds("info", kinds.POSITIONAL_OR_KEYWORD, annotation=Info),
            *(kinds(name, kinds.KEYWORD_ONLY, annotation=annotation) for name, annotation in parameters),
            *(
                kinds(name, kinds.KEYWORD_ONLY, annotation=annotation, default=default)
                for name, annotation, default in with_defaults
            ),
        ]
    )
    # strawberry reads the arguments from the signature and resolves their annotations from __annotations__.
    resolve.__signature__ = signature  # type: ignore[attr-defined]  # functions take any attribute at run time
    resolve.__annotations__ = {
        "info": Info,
        **dict(parameters),
        **{name: annotation for name, annotation, _ in with_defaults},
    }
    return resolve


def _id_argument(name: str, description: str) -> Any:
    return Annotated[strawberry.ID, strawberry.argument(name=graphql_name(name), description=description)]


class _Builder:
    """Creates every class first and decorates them once all exist, so types may refer to each other in cycles."""

    def __init__(self, declaration: Declaration, default_page_size: int) -> None:
        self.declaration = declaration
        self.default_page_size = default_page_size
        self.model = declaration.model
        self.entities = [entity for entity in self.model.entities if not entity.internal]
        self.types: dict[str, Any] = {entity.name: _new_class(entity.name, Node) for entity in self.entities}
        self.makers: dict[str, _Make] = {}
        self.pending: list[tuple[Any, str | None]] = []
        self.enums: dict[tuple[str, str], Any] = {}
        self.conditions: dict[str, Any] = {}
        self.enum_fields: dict[str, list[tuple[str, Any]]] = {}
        self.shapes: dict[tuple[Shape, bool], Any] = {}
        self.complex_fields: dict[str, list[tuple[str, Attribute]]] = {}

    def _type_of(self, entity: Entity | Shape, name: str, spec: Attribute, input_: bool = False) -> Any:
        """The GraphQL type of an attribute's value: its enum when it declares one, its shape's object (or input)
        type for a map, a list of its elements' type for a list, else its type's scalar."""
        if spec.type == "M" and spec.shape is not None:
            return self._shape_type(spec.shape, input_)
        if spec.each is not None:
            # Stored elements of another type are served as null; an input's elements are all given.
            element: Any = self._type_of(entity, name, spec.each, input_)
            return list[element] if input_ else list[element | None]
        if spec.enum is None:
            return _SCALARS[spec.type]
        key = (entity.name, name)
        if key not in self.enums:
            type_name = entity.name + _upper_first(graphql_name(name))
            members = [
                (value, strawberry.enum_value(value, description=text or f"Stored as {value!r}."))
                for value, text in spec.choices.items()
            ]
            description = f"The values {entity.name}.{graphql_name(name)} may hold; they are stored as written."
            values: Any = Enum(type_name, members)  # type: ignore[misc]  # the functional API: the names are data
            self.enums[key] = strawberry.enum(values, description=description)
            self.enum_fields.setdefault(entity.name, []).append((name, self.enums[key]))
        return self.enums[key]

    def _values(self, entity: Entity, names: Sequence[str], item: Item) -> dict[str, Any]:
        """The plain values of ``item`` as GraphQL serves them: enum attributes as their enum's members, maps and
        lists as objects and lists of their shapes' types."""
        values = attribute_values(entity, item)
        out = {name: values[name] for name in names}
        for name, enum in self.enum_fields.get(entity.name, ()):
            if out.get(name) is not None:
                out[name] = enum(out[name])
        for name, spec in self.complex_fields.get(entity.name, ()):
            out[name] = self._shaped(spec, out[name])
        return _served(out, item)

    def _shaped(self, spec: Attribute, value: Any) -> Any:
        """A served map or list (``served_value``) as instances of its shapes' object types."""
        if value is None:
            return None
        if spec.each is not None:
            return [self._shaped(spec.each, one) for one in value]
        if spec.shape is None:
            return value
        shape = spec.shape
        fields = {}
        for name, field in shape.declared.items():
            one = value[name]
            enum = self.enums.get((shape.name, name))
            fields[name] = enum(one) if enum is not None and one is not None else self._shaped(field, one)
        return self._shape_type(shape, False)(**fields)

    def _shape_type(self, shape: Shape, input_: bool) -> Any:
        """The object type of a map's shape, or its input type; made once per shape and shared."""
        key = (shape, input_)
        if key in self.shapes:
            return self.shapes[key]
        name = shape.name + ("Input" if input_ else "")
        cls = _new_class(name)
        self.shapes[key] = cls
        fields = _Fields(name)
        for field_name, spec in shape.declared.items():
            python = self._type_of(shape, field_name, spec, input_)
            described = spec.description or f"The {shape.name}'s {field_name}."
            if input_ and spec.required:
                fields.plain(field_name, python, described)
            elif input_:
                fields.plain(field_name, python | None, described, default=None)
            else:
                fields.plain(field_name, python | None, described)
        fields.apply(cls)
        if input_:
            strawberry.input(
                cls,
                description=f"{_article(shape.name)} {shape.name}, as a write gives it: null fields are not stored.",
            )
        else:
            self.pending.append((cls, shape.description))
        return cls

    def schema(self) -> GatewaySchema:
        for entity in self.entities:
            self._object_type(entity)
        query = self._query()
        mutation = self._mutation()
        for cls, description in self.pending:
            strawberry.type(cls, description=description)
        for entity in self.entities:
            self.makers[entity.name] = self._maker(entity)
        from gateway.subscriptions import subscription_type  # it builds on this module's types

        return GatewaySchema(
            query=query,
            mutation=mutation,
            subscription=subscription_type(self),
            types=list(self.types.values()),
            extensions=[ErrorPolicy, Limits, Accounting],
            config=StrawberryConfig(scalar_map={Date: DATE_SCALAR}),
        )

    def _served(self, entity: Entity) -> bool:
        return entity.name in self.types

    # --- objects ----------------------------------------------------------------------------------------------

    def _object_type(self, entity: Entity) -> None:
        cls = self.types[entity.name]
        fields = _Fields(entity.name, taken=["id"])
        for name in entity.key_fields:
            id_type = strawberry.ID | None if name in entity.optional_id_fields else strawberry.ID
            fields.plain(name, id_type, f"From the {entity.name}'s own key.")
        for name, spec in _plain_attributes(entity):
            fields.plain(name, self._type_of(entity, name, spec) | None, _describe(entity, name, spec))
            if spec.type in ("M", "L"):
                self.complex_fields.setdefault(entity.name, []).append((name, spec))
        fields.plain("version", int, VERSION)
        for collection in self.model.collections:
            ends = (collection.member, collection.target or collection.member)
            if collection.parent is entity and all(self._served(one) for one in ends):
                self._collection_field(fields, collection)
        for link in self.model.links:
            if link.source is entity and self._served(link.target):
                self._link_field(fields, link)
        self._extra(fields)
        fields.private("_ids")
        self.pending.append((fields.apply(cls), entity.description or f"{_article(entity.name)} {entity.name}."))

    def _maker(self, entity: Entity) -> _Make:
        cls = self.types[entity.name]
        keys = entity.key_fields
        plain = [name for name, _ in _plain_attributes(entity)]

        def make(ids: dict[str, str], item: Item) -> Any:
            fields = self._values(entity, plain, item)
            for key in keys:
                fields[key] = ids.get(key)
            return cls(id=global_ids.encode(entity, ids), version=_version(entity, item), _ids=ids, **fields)

        return make

    def _object(self, entity: Entity, item: Item | None) -> Any:
        """The object of an item, built from the ids in the item itself; None for a missing or foreign item."""
        if item is None:
            return None
        ids = self.model.ids_of(entity, item)
        return None if ids is None else self.makers[entity.name](ids, item)

    async def _read(self, info: Info, entity: Entity, ids: Ids) -> Any:
        item = await info.context.reader.get(entity, {name: ids[name] for name in entity.id_fields})
        return self._object(entity, item)

    async def _read_many(self, info: Info, collection: Collection, members: Sequence[Member]) -> list[Any]:
        entity = collection.target
        assert entity is not None
        keys = [collection.target_ids(member.ids) for member in members]
        return [self._object(entity, item) for item in await info.context.reader.get_many(entity, keys)]

    # --- relations --------------------------------------------------------------------------------------------

    def _link_field(self, fields: _Fields, link: Link) -> None:
        target = link.target

        async def resolve(root: Any, info: Info) -> Any:
            ids = link.target_ids(root._ids)
            return None if ids is None else await self._read(info, target, ids)

        description = link.description or f"The {target.name} of this {link.source.name}; null if it does not exist."
        fields.resolved(link.field, self.types[target.name] | None, resolve, description)

    def _collection_field(self, fields: _Fields, collection: Collection) -> None:
        prefix = collection.parent.name + _upper_first(collection.field)
        target = collection.target
        size = self.default_page_size
        if target is None:
            connection, connect = self._plain_connection(collection, prefix)

            async def answer(page: Page, root: Any, info: Info, parent_ids: dict[str, str] | None) -> Any:
                return connect(page, parent_ids)

        else:
            connection, connect_edges = self._edge_connection(collection, target, prefix)

            async def answer(page: Page, root: Any, info: Info, parent_ids: dict[str, str] | None) -> Any:
                # Read here, the targets are plain values to the edges rather than a resolver each awaiting its own
                # read (a quarter of the CPU of a 100-edge page); one BatchGetItem either way.
                nodes = await self._read_many(info, collection, page.members) if _selects_nodes(info) else None
                return connect_edges(page, parent_ids, nodes)

        async def resolve(root: Any, info: Info, **_: Any) -> Any:
            # The arguments are read from the operation as the look-ahead read them: one reading of the page.
            window, ids = _window(info, collection, root._ids)
            page = await info.context.reader.page(collection, ids, window)
            return await answer(page, root, info, hierarchy.counted(root._ids, ids))

        order = SortOrder.ASCENDING if collection.ascending else SortOrder.DESCENDING
        arguments: list[tuple[str, Any, Any]] = [
            ("first", First, size),
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
        _signature(resolve, (), defaulted=arguments)
        fields.resolved(collection.field, connection, resolve, collection.description)

    def _plain_connection(
        self, collection: Collection, prefix: str
    ) -> tuple[Any, Callable[[Page, dict[str, str] | None], Any]]:
        member = collection.member
        edge = _new_class(prefix + "Edge")
        edge_fields = _Fields(edge.__name__)
        edge_fields.resolved("cursor", str, _cursor, CURSOR)
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
                pageInfo=_page_info(page),
                _parent_ids=parent_ids,
            )

        return connection, connect

    def _edge_connection(
        self, collection: Collection, target: Entity, prefix: str
    ) -> tuple[Any, Callable[[Page, dict[str, str] | None, list[Any] | None], Any]]:
        member = collection.member
        plain = [name for name, _ in _plain_attributes(member)]

        def read_node(root: Any, info: Info) -> Any:
            if isinstance(root._node, _Unread):
                # Read one by one, batched, only where the connection did not see the field coming.
                return self._read(info, target, collection.target_ids(root._member.ids))
            return root._node

        def read_nodes(root: Any, info: Info) -> Any:
            if any(isinstance(edge._node, _Unread) for edge in root.edges):
                return self._read_many(info, collection, [edge._member for edge in root.edges])
            return [edge._node for edge in root.edges]

        node = self.types[target.name] | None
        edge = _new_class(prefix + "Edge")
        edge_fields = _Fields(edge.__name__)
        edge_fields.resolved("cursor", str, _cursor, CURSOR)
        description = f"The {target.name}; null if the {member.name} points at one that no longer exists."
        edge_fields.resolved("node", node, read_node, description)
        for name, spec in _plain_attributes(member):
            edge_fields.plain(name, self._type_of(member, name, spec) | None, _describe(member, name, spec))
        verbs = _verbs(member)
        edge_fields.plain("version", int, f"The {member.name}'s version, for {verbs['update']} and {verbs['delete']}.")
        edge_fields.private("_member")
        edge_fields.private("_node")
        description = f"One {target.name} of {collection.name}, with the {member.name} that links them."
        self.pending.append((edge_fields.apply(edge), description))
        connection = self._connection_class(collection, prefix, edge, node, read_nodes)

        def connect(page: Page, parent_ids: dict[str, str] | None, nodes: list[Any] | None) -> Any:
            found: list[Any] = [_UNREAD] * len(page.members) if nodes is None else nodes
            edges = []
            for one, node in zip(page.members, found, strict=True):
                data = self._values(member, plain, one.item)
                edges.append(edge(_member=one, _node=node, version=_version(member, one.item), **data))
            return connection(edges=edges, pageInfo=_page_info(page), _parent_ids=parent_ids)

        return connection, connect

    def _connection_class(
        self, collection: Collection, prefix: str, edge: Any, node: Any, read_nodes: Callable[..., Any] | None
    ) -> Any:
        connection = _new_class(prefix + "Connection")
        fields = _Fields(connection.__name__)
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
        member = collection.member
        cls = _new_class(prefix + "Filter")
        fields = _Fields(cls.__name__)
        for name in collection.filters:
            spec = member.declared[name]
            description = f"Members whose {graphql_name(name)} meets this condition."
            fields.plain(name, self._condition(member, name, spec) | None, description, default=UNSET)
        fields.plain("and_", _list_or_null(cls), "Members that meet every one of these filters.", default=UNSET)
        fields.plain("or_", _list_or_null(cls), "Members that meet at least one of these filters.", default=UNSET)
        description = (
            f"Which members of {collection.name} to return; the conditions given all hold. Applied by DynamoDB "
            "as the page is read: a page keeps reading until it fills, within the read budget (pageInfo says when "
            "the budget stopped it)."
        )
        return strawberry.input(fields.apply(cls), description=description)

    def _condition(self, entity: Entity, name: str, spec: Attribute) -> Any:
        """The condition input of an attribute's type: shared by scalar, one per enum."""
        if spec.type in ("L", "M"):
            raise ValueError(f"{entity.name}.{name}: lists and maps cannot be filtered by")
        value = self._type_of(entity, name, spec)
        type_name = (value.__name__ if spec.enum is not None else _CONDITION_NAMES[spec.type]) + "Condition"
        if type_name in self.conditions:
            return self.conditions[type_name]
        cls = _new_class(type_name)
        fields = _Fields(type_name)
        fields.plain("eq", value | None, "Equal to this value.", default=UNSET)
        fields.plain("ne", value | None, "Not equal to this value (true where the attribute is absent).", default=UNSET)
        fields.plain("in_", _list_or_null(value), "Equal to one of these values (1 to 100).", default=UNSET)
        if spec.enum is None:
            if spec.type in ("S", "DATE"):
                fields.plain("begins_with", str | None, "Text that starts with this prefix.", default=UNSET)
            if spec.type != "BOOL":
                between = "Between these two values, both included (low, then high)."
                fields.plain("between", _list_or_null(value), between, default=UNSET)
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
            count: int | None = attribute_values(parent, item)[counter]
            return count

        return total_count

    # --- root fields ------------------------------------------------------------------------------------------

    def _query(self) -> Any:
        fields = _Fields("Query")
        for name, root in self.model.roots.items():
            if root.entity is None:
                if root.many:
                    description = "Objects by global id, in the order asked; null for ids that do not exist."
                    fields.resolved(name, list[Node | None], self._nodes(), description)
                else:
                    description = "Any object by its global id; null if it does not exist."
                    fields.resolved(name, Node | None, self._node(), description)
                continue
            entity = root.entity
            optional: Any = self.types[entity.name] | None
            if root.many:
                ((argument, id_field),) = root.arguments
                description = f"{entity.name}s by {id_field}, in the order asked; null for ids that do not exist."
                fields.resolved(name, list[optional], self._many(entity, argument), description)
            else:
                description = f"One {entity.name} by its key; null if it does not exist."
                fields.resolved(name, optional, self._one(entity), description)
        self._extra(fields)
        query = _new_class("Query")
        self.pending.append((fields.apply(query), "What can be read: each entity by its key, and any by global id."))
        return query

    def _extra(self, fields: _Fields) -> None:
        """The hand-written fields the declaration adds to this type."""
        for name, field in self.declaration.fields.get(fields.owner, {}).items():
            fields.add(name, None, field)

    def _one(self, entity: Entity) -> Callable[..., Any]:
        names = entity.id_fields

        async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
            await info.context.reader.walked(info)
            ids = {name: validate_id(arguments[f"p{i}"], graphql_name(name)) for i, name in enumerate(names)}
            return self._object(entity, await info.context.reader.get(entity, ids))

        parameters = [
            (f"p{i}", _id_argument(name, f"The {entity.name}'s {name}.")) for i, name in enumerate(entity.id_fields)
        ]
        return _signature(resolve, parameters)

    def _many(self, entity: Entity, argument: str) -> Callable[..., Any]:
        name = entity.id_fields[0]

        async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
            await info.context.reader.walked(info)
            keys = [{name: one} for one in batch_ids(arguments["p0"], argument)]
            items = await info.context.reader.get_many(entity, keys)
            return [self._object(entity, item) for item in items]

        description = f"At most {MAX_BATCH_IDS}; the same id may come more than once."
        annotation = Annotated[list[strawberry.ID], strawberry.argument(name=argument, description=description)]
        return _signature(resolve, [("p0", annotation)])

    def _node(self) -> Callable[..., Any]:
        async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
            await info.context.reader.walked(info)
            entity, ids = global_ids.decode(self.model, arguments["p0"], "id")
            return self._object(entity, await info.context.reader.get(entity, ids))

        return _signature(resolve, [("p0", _id_argument("id", "A global id, as an object's id field gave it."))])

    def _nodes(self) -> Callable[..., Any]:
        async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
            await info.context.reader.walked(info)
            texts: list[str] = arguments["p0"]
            if len(texts) > MAX_BATCH_IDS:
                raise BadUserInput(f"ids takes at most {MAX_BATCH_IDS} ids", argument="ids")
            decoded = [global_ids.decode(self.model, text, "ids") for text in texts]
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
                    out[position] = self._object(decoded[position][0], item)
            return out

        description = f"Global ids, at most {MAX_BATCH_IDS}."
        annotation = Annotated[list[strawberry.ID], strawberry.argument(name="ids", description=description)]
        return _signature(resolve, [("p0", annotation)])

    # --- mutations --------------------------------------------------------------------------------------------

    def _mutation(self) -> Any:
        fields = _Fields("Mutation")
        for entity in self.entities:
            cls = self.types[entity.name]
            description = f"The {entity.name}, or why the mutation changed nothing."
            result: Any = Annotated[
                functools.reduce(operator.or_, (cls, *_ERRORS)),
                strawberry.union(f"{entity.name}Result", description=description),
            ]
            verbs = _verbs(entity)
            create, update, delete = verbs["create"], verbs["update"], verbs["delete"]
            fields.resolved(create, result, self._create(entity, create), self._create_description(entity))
            description = f"Change {_article(entity.name)} {entity.name} if it is still at expectedVersion."
            fields.resolved(update, result, self._update(entity, update), description)
            fields.resolved(delete, DeleteResult, self._delete(entity, delete), self._delete_description(entity))
        if not fields.annotations:
            return None
        mutation = _new_class("Mutation")
        self.pending.append((fields.apply(mutation), "What can be changed: each entity is created, updated, deleted."))
        return mutation

    def _create_description(self, entity: Entity) -> str:
        text = f"A new {entity.name}"
        if entity.mint is not None:
            text += f", with a time-ordered {entity.mint}"
        parents = [f"the {counted.collection.parent.name}" for counted in self.declaration.writes.parents_of(entity)]
        if parents:
            text += f"; {' and '.join(parents)} must exist"
        return text + ("." if entity.mint is not None else "; a conflict if it exists already.")

    def _delete_description(self, entity: Entity) -> str:
        members = [counted.collection.field for counted in self.declaration.writes.children_of(entity)]
        text = f"Delete {_article(entity.name)} {entity.name}"
        return text + (f"; one with {' or '.join(members)} only with cascade." if members else ".")

    def _create(self, entity: Entity, verb: str) -> Callable[..., Any]:
        fields = _Fields(_input_name(verb))
        given = [name for name in entity.key_fields if name != entity.mint]
        for name in given:
            if name in entity.optional_id_fields:
                fields.plain(name, strawberry.ID | None, f"Part of the new {entity.name}'s key.", default=None)
            else:
                fields.plain(name, strawberry.ID, f"Part of the new {entity.name}'s key.")
        for name, spec in _input_attributes(entity):
            python = self._type_of(entity, name, spec, input_=True)
            default = spec.default if spec.enum is None or spec.default is None else python(spec.default)
            if spec.required:
                fields.plain(name, python, _describe(entity, name, spec))
            else:
                fields.plain(name, python | None, _describe(entity, name, spec), default=default)
        minted = f"; its {entity.mint} is minted" if entity.mint is not None else ""
        input_type = _input(fields, f"The new {entity.name}'s ids and attributes{minted}.")

        async def create(info: Info, data: Any, client_token: str | None) -> Any:
            ids = {
                name: validate_id(getattr(data, name), graphql_name(name))
                for name in given
                if getattr(data, name) is not None
            }
            if entity.mint is not None:
                ids[entity.mint] = writes.mint_id()
            attributes = {**_inputs(entity, data), **_on_create(entity, ids)}
            token = _token(info, client_token, data)
            return await self._written(info, entity, await self._writer(info).create(entity, ids, attributes, token))

        return _mutation_resolver(create, input_type, f"The {entity.name} to create.")

    def _update(self, entity: Entity, verb: str) -> Callable[..., Any]:
        fields = _Fields(_input_name(verb))
        for name in entity.id_fields:
            fields.plain(name, strawberry.ID, f"Part of the {entity.name}'s key.")
        fields.plain("expectedVersion", int, EXPECTED_VERSION)
        for name, spec in _input_attributes(entity):
            keep = UNCHANGED if spec.required else KEEP
            description = f"{_describe(entity, name, spec)} {keep}"
            fields.plain(
                name, self._type_of(entity, name, spec, input_=True) | None, description, default=strawberry.UNSET
            )
        input_type = _input(fields, f"The changes to {_article(entity.name)} {entity.name}, at the version read last.")

        async def update(info: Info, data: Any, client_token: str | None) -> Any:
            ids = {name: validate_id(getattr(data, name), graphql_name(name)) for name in entity.id_fields}
            changes = _inputs(entity, data)
            version = _expected_version(data.expectedVersion) or 0
            token = _token(info, client_token, data)
            return await self._written(
                info, entity, await self._writer(info).update(entity, ids, changes, version, token)
            )

        return _mutation_resolver(update, input_type, f"The {entity.name} to change, and how.")

    def _delete(self, entity: Entity, verb: str) -> Callable[..., Any]:
        fields = _Fields(_input_name(verb))
        for name in entity.id_fields:
            fields.plain(name, strawberry.ID, f"Part of the {entity.name}'s key.")
        fields.plain("expectedVersion", int | None, OPTIONAL_VERSION, default=None)
        if any(collection.parent is entity for collection in self.model.collections):
            fields.plain("cascade", bool, CASCADE, default=False)
        input_type = _input(fields, f"The {entity.name} to delete.")

        async def delete(info: Info, data: Any, client_token: str | None) -> Deleted:
            ids = {name: validate_id(getattr(data, name), graphql_name(name)) for name in entity.id_fields}
            version = _expected_version(data.expectedVersion)
            token = _token(info, client_token, data)
            cascade = bool(getattr(data, "cascade", False))
            writer = self._writer(info)
            counts = await writer.delete(entity, ids, expected_version=version, cascade=cascade, token=token)
            return Deleted(items=[DeletedItems(type=name, count=count) for name, count in sorted(counts.items())])

        return _mutation_resolver(delete, input_type, f"The {entity.name} to delete.")

    async def _written(self, info: Info, entity: Entity, item: Item) -> Any:
        """A create's or update's answer: the item written, with what its selection reads read ahead."""
        item = info.context.reader.screen(item)
        await info.context.reader.expand(entity, item, info)
        return self._result(entity, item)

    def _writer(self, info: Info) -> Writer:
        # Mutations run one after another: what an earlier one (or the request's reads) left cached is stale now.
        info.context.reader.forget()
        return Writer(info.context.reader.store, self.declaration.writes, info.context.ledger, info.context.guard)

    def _result(self, entity: Entity, item: Item) -> Any:
        ids = self.model.ids_of(entity, item)
        if ids is None:
            raise NotFound(f"the {entity.name} written cannot be read back", entity=entity.name)
        return self.makers[entity.name](ids, item)


# --- helpers ------------------------------------------------------------------------------------------------------


def _plain_attributes(entity: Entity) -> list[tuple[str, Attribute]]:
    """The attributes served as plain fields: a stored copy of an id is served as the id field."""
    return [(name, spec) for name, spec in entity.declared.items() if spec.from_id is None and spec.is_typed]


def _describe(entity: Entity, name: str, spec: Attribute) -> str:
    return spec.description or f"The {entity.name}'s {name}."


def _input_attributes(entity: Entity) -> list[tuple[str, Attribute]]:
    return [(name, spec) for name, spec in entity.declared.items() if spec.is_input and spec.is_typed]


def _version(entity: Entity, item: Item) -> int:
    value = item.get(writes.VERSION)
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    if value is not None:
        log.warning("%s.version holds a %s; served as 0", entity.name, type(value).__name__)
    return 0


def _window(info: Info, collection: Collection, parent_ids: dict[str, str]) -> tuple[Window, dict[str, str]]:
    """The page a connection's arguments ask for, and the ids it is read under (the parent's, narrowed by the levels
    given), read from the operation as the look-ahead reads them; ``first`` counts as set only when the operation
    sets it, not by its default."""
    raw = info._raw_info
    variables = selection.Scope.of(raw).variables
    node = raw.field_nodes[0]
    args = get_argument_values(raw.parent_type.fields[raw.field_name], node, variables)
    first_given = args.get("first") is not None and "first" in selection.given(node, variables)
    window: Window = info.context.reader.window(args, first_given, collection)
    ids = plan.narrowed(collection, parent_ids, args) if plan.narrows(collection, args) else parent_ids
    return window, ids


def _list_or_null(item: Any) -> Any:
    return list[item] | None


def _selects_nodes(info: Info) -> bool:
    """Whether a connection's selection reads its targets: ``nodes``, or ``node`` under ``edges``."""
    raw = info._raw_info
    connection = get_named_type(raw.return_type)
    if not isinstance(connection, GraphQLObjectType):
        return False
    scope = selection.Scope.of(raw)
    selection_sets = [node.selection_set for node in raw.field_nodes if node.selection_set is not None]
    return any(
        field.name == "nodes"
        or (field.name == "edges" and any(one.name == "node" for one in selection.children(scope, field)))
        for field in selection.fields(scope, connection, selection_sets)
    )


def _verbs(entity: Entity) -> dict[str, str]:
    return {verb: entity.verbs.get(verb, verb + entity.name) for verb in ("create", "update", "delete")}


def _input_name(verb: str) -> str:
    return _upper_first(verb) + "Input"


def _input(fields: _Fields, description: str) -> Any:
    return strawberry.input(fields.apply(_new_class(fields.owner)), description=description)


def _mutation_resolver(
    work: Callable[[Info, Any, str | None], Awaitable[Any]], input_type: Any, description: str
) -> Callable[..., Any]:
    async def resolve(root: Any, info: Info, **arguments: Any) -> Any:
        return await _run(work(info, arguments["input"], arguments.get("client_token")))

    argument = Annotated[input_type, strawberry.argument(description=description)]
    return _signature(resolve, [("input", argument)], [("client_token", ClientToken)])


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
        )


def _inputs(entity: Entity, data: object) -> dict[str, Any]:
    """The stored attributes an input sets, validated; fields left out of an update input are not among them."""
    out: dict[str, Any] = {}
    for name, spec in _input_attributes(entity):
        value = getattr(data, name)
        if value is not strawberry.UNSET:
            out[name] = _checked(graphql_name(name), spec, value)
    return out


def _checked(name: str, spec: Attribute, value: Any) -> Any:
    """``value`` as stored, or BadUserInput naming the input field ``name`` when the declaration refuses it."""
    if value is None:
        if spec.required:
            raise BadUserInput(f"{name} may not be null", argument=name)
        return None
    if isinstance(value, Enum):  # GraphQL refused anything outside the enum already
        return value.value
    if isinstance(value, date):  # the Date scalar refused anything that is not a date
        return value.isoformat()
    if spec.type in ("M", "L", "SS", "NS", "JSON"):
        return nested.stored(name, spec, value, _checked)
    if spec.type == "S" and (not value.strip() or len(value) > spec.max_length):
        raise BadUserInput(f"{name} must be 1 to {spec.max_length} characters, not blank", argument=name)
    if spec.type in ("INT", "N"):
        low, high = spec.minimum, spec.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            bound = (
                f"between {low} and {high}"
                if low is not None and high is not None
                else f"at least {low}"
                if low is not None
                else f"at most {high}"
            )
            raise BadUserInput(f"{name} must be {bound}", argument=name)
        # DynamoDB's numbers are decimal: a float is stored as the number it prints as.
        number = Decimal(str(value)) if spec.type == "N" else value
        return str(number) if spec.text else number
    return value


def _on_create(entity: Entity, ids: Ids) -> dict[str, Any]:
    """What a create stores besides its input: copies of ids, and the date of creation."""
    out: dict[str, Any] = {}
    for name, spec in entity.declared.items():
        if spec.from_id is not None:
            out[name] = ids[spec.from_id]
        elif spec.on_create == "today":
            out[name] = writes.today()
    return out


def _token(info: Info, client_token: str | None, data: object) -> Token | None:
    if client_token is None:
        return None
    arguments = dataclasses.asdict(data)  # type: ignore[call-overload]  # a strawberry input is a dataclass
    caller = info.context.guard.principal.subject
    return Token(validate_id(client_token, "clientToken"), writes.fingerprint(info.field_name, arguments, caller))


def _expected_version(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise BadUserInput("expectedVersion may not be negative", argument="expectedVersion")
    return value


def _upper_first(name: str) -> str:
    return name[:1].upper() + name[1:]


def _lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def _article(name: str) -> str:
    return "an" if name[:1].upper() in "AEIOU" else "a"
