"""The single-table model as data: table, indexes, entities with key templates, and their relations.

A model is validated when it is built, so a key design that would need a Scan, or whose item shapes could be
mistaken for each other, fails at start-up rather than at query time.
"""

from __future__ import annotations

import binascii
import logging
import re
from base64 import b64decode, b64encode
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import cached_property, lru_cache
from operator import itemgetter
from typing import Any, Literal

from gateway.design import values
from gateway.design.keys import Ids, KeyTemplate, head, validate_id

# graphql_name is part of this module's API, as it was before names had a module of their own.
from gateway.design.naming import graphql_name as graphql_name
from gateway.design.naming import refuse_shared_fields
from gateway.design.segments import Case, fold
from gateway.errors import BadUserInput, DataMismatch

log = logging.getLogger(__name__)

RECOGNISED = 8192
"""How many distinct items' recognitions a model keeps (``Model.recognise``): a few MiB at most."""
_ABSENT = object()
"""An attribute an item does not have, among those recognition reads."""

Item = dict[str, Any]
AttributeType = Literal["S", "N", "INT", "BOOL", "L", "M", "DATE", "SS", "NS", "BS", "JSON"]
"""DynamoDB's types, INT: a number stored as N that is served as a GraphQL Int (32-bit, integral), DATE: a
calendar date stored as S ``YYYY-MM-DD`` that is served as the ``Date`` scalar, SS and NS: string and number sets
served as lists, BS: a binary set served as a list of base64 strings (as DynamoDB's JSON writes binary), and
JSON: any value (an open map, a list, ...) served as the ``JSON`` scalar."""

_ENUM_VALUE = re.compile(r"[_A-Za-z][_0-9A-Za-z]*")
_NOT_IN_NAMES = re.compile(r"[^_0-9A-Za-z]+")
_RESERVED = ("true", "false", "null")

Clock = Literal["iso", "seconds", "milliseconds"]
"""How a time the gateway keeps is written: ISO-8601 text in UTC to the millisecond (``2026-03-15T14:25:01.123Z``),
or whole seconds or milliseconds since the epoch."""


def enum_name(value: str) -> str:
    """The GraphQL name a stored enum value is served as: itself when it is one, else its runs of other characters
    as ``_`` (``in-progress``: ``in_progress``), after a ``_`` when it starts with a digit (``2fa``: ``_2fa``)."""
    if _ENUM_VALUE.fullmatch(value) and value not in _RESERVED:
        return value
    name = _NOT_IN_NAMES.sub("_", value)
    return f"_{name}" if name[:1].isdigit() else name


_PLACEHOLDER_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)")

SURFACE_TYPE_NAMES = frozenset(
    {
        *("Query", "Mutation", "Subscription", "Node", "PageInfo", "SortOrder", "Date", "JSON", "Long", "LongRange"),
        *("MutationError", "NotFoundError", "ConflictError", "ConflictReason", "ValidationFailedError"),
        *("Deleted", "DeletedItems", "DeleteResult", "NodeChange", "ChangeKind", "Unread"),
        *("ID", "String", "Int", "Float", "Boolean"),
    }
)
"""The GraphQL type names the surface itself defines for every declaration, and GraphQL's own scalars: an entity
of one of these names would take the place of that type (or lose its own) in the schema."""
_TYPE_NAME = re.compile(r"[A-Za-z][_0-9A-Za-z]*")

INT_RANGE = range(-(2**31), 2**31)
"""The whole numbers GraphQL's Int holds (32 bits)."""
MAX_TEXT = 1000
"""The longest text attribute a write may set, unless the attribute declares its own bound."""
MAX_ITEMS = 100
"""The most elements a list attribute may hold after a write, unless the attribute declares its own bound."""
SCALAR_TYPES: tuple[AttributeType, ...] = ("S", "N", "INT", "BOOL", "DATE")
_SET_ELEMENTS: dict[AttributeType, AttributeType] = {"SS": "S", "NS": "N"}


@dataclass(frozen=True)
class Attribute:
    """A plain attribute of an entity and its GraphQL surface: one field of the object type, one of its inputs.

    ``required``: a create must give it and an update may not remove it. ``default``: what a create stores when
    the input leaves it out. ``from_id``: a stored copy of an id field, written by creates and never an input; where
    a key writes that id folded (``{storeId:lower}``), the copy keeps its case and the id is served from it.
    ``on_create`` ``"today"``: the UTC date of the create; ``"now"``: the time of the create, and ``on_update``
    ``"now"``: the time of the create and of every update (an S as ISO-8601 ``2026-03-15T14:25:01.123Z``, an N or
    INT as the epoch ``clock`` says: ``"seconds"`` or ``"milliseconds"``). ``writable`` False: kept by the gateway
    (counters).
    ``minimum``/``maximum`` bound an INT; ``max_length`` bounds a text. ``text``: an N or INT stored as a string
    (``"Price": "100"``), served as a number and written back as text. ``enum``: the closed set of values an S
    attribute holds (a tuple, or a mapping of each value to its description), served as a GraphQL enum named after
    the entity and the attribute (``ProjectStatus``) whose values are the stored strings themselves, so clients
    send and receive what is stored; inputs outside the set are refused. A stored value that is no GraphQL name
    (``in-progress``, ``on hold``, ``2fa``) has one made for it (``in_progress``, ``on_hold``, ``_2fa``), or the one
    ``enum_names`` gives (``{"2fa": "TWO_FACTOR"}``): inputs store the stored value, answers serve the name.
    ``field``: the GraphQL field that serves the attribute (``field="createdAt"`` for ``_ct``); without it, the
    field is named by ``naming.field_name`` (``_ct`` is ``ct``, ``follower#`` is ``follower``).

    Complex attributes: an M with a ``shape`` is a typed map, served as an object type of that shape; an L is a list
    of maps of ``shape``, or of scalars of type ``element``, of at most ``max_items`` elements. Both are served from
    the item itself, with no read of their own; an M or L without either has no GraphQL surface.

    What is served is what is stored: a stored value that is absent, of another type, outside the enum or not a
    date is served as null (and logged), never refused. So every attribute field is nullable in GraphQL, ``required``
    ones too: ``required`` binds the gateway's own writes, not the items other tools wrote to the same table, and a
    non-null field holding null would null its whole parent object.
    """

    type: AttributeType
    description: str | None = None
    required: bool = False
    default: Any = None
    writable: bool = True
    from_id: str | None = None
    on_create: Literal["today", "now"] | None = None
    minimum: int | None = None
    maximum: int | None = None
    max_length: int = MAX_TEXT
    enum: tuple[str, ...] | Mapping[str, str] | None = None
    shape: Shape | None = None
    element: AttributeType | None = None
    max_items: int = MAX_ITEMS
    text: bool = False
    # Last, so that an Attribute built by position keeps its meaning.
    on_update: Literal["now"] | None = None
    clock: Clock | None = None
    enum_names: Mapping[str, str] | None = None
    field: str | None = None

    def __post_init__(self) -> None:
        if self.field is not None and (not _ENUM_VALUE.fullmatch(self.field) or self.field.startswith("__")):
            raise ValueError(
                f"field={self.field!r} is no GraphQL field name: letters, digits and _, not led by a digit or __"
            )
        if self.text and self.type not in ("N", "INT"):
            raise ValueError(f"text= keeps a number as a string; {self.type} is no number")
        if self.shape is not None and self.type not in ("M", "L"):
            raise ValueError(f"a shape describes an M or an L, not {self.type}")
        if self.element is not None and (self.type != "L" or self.element not in SCALAR_TYPES):
            raise ValueError(f"element is the scalar type of an L's elements, not of {self.type}")
        if self.type == "L" and self.shape is not None and self.element is not None:
            raise ValueError("a list holds maps of a shape or scalars of an element type, not both")
        _validate_stamp(self)
        if self.enum is None:
            if self.enum_names is not None:
                raise ValueError("enum_names names the values of an enum; declare enum= or drop enum_names=")
            return
        if self.type != "S":
            raise ValueError(f"an enum is stored as S, not {self.type}")
        values = tuple(self.enum)
        if not values or len(set(values)) != len(values) or not all(values):
            raise ValueError(f"an enum has distinct, non-empty values: {values!r}")
        if self.default is not None and self.default not in values:
            raise ValueError(f"the default {self.default!r} is not one of {values!r}")
        self.enum_members  # noqa: B018  # refuses names GraphQL cannot take, when the attribute is declared

    @cached_property
    def enum_members(self) -> dict[str, str]:
        """Each value of the enum as stored, and its GraphQL name: the value itself where it is a GraphQL name."""
        given = dict(self.enum_names or {})
        unknown = sorted(set(given) - set(self.choices))
        if unknown:
            raise ValueError(f"enum_names names {unknown[0]!r}, which is not a value of the enum {tuple(self.choices)}")
        out = {value: given.get(value) or enum_name(value) for value in self.choices}
        for value, name in out.items():
            if not _ENUM_VALUE.fullmatch(name) or name in _RESERVED:
                raise ValueError(
                    f"{name!r} cannot be a GraphQL enum value: name {value!r} with enum_names={{{value!r}: 'NAME'}}"
                )
        seen: dict[str, str] = {}
        for value, name in out.items():
            other = seen.setdefault(name, value)
            if other != value:
                raise ValueError(
                    f"{other!r} and {value!r} are both served as {name!r}: name one with"
                    f" enum_names={{{value!r}: 'NAME'}}"
                )
        return out

    @cached_property
    def choices(self) -> dict[str, str | None]:
        """The enum's values with their descriptions (None where the declaration gives none); empty: no enum."""
        if self.enum is None:
            return {}
        if isinstance(self.enum, Mapping):
            return dict(self.enum)
        return dict.fromkeys(self.enum)

    @property
    def is_input(self) -> bool:
        return self.writable and self.from_id is None and self.on_create is None and self.on_update is None

    @cached_property
    def each(self) -> Attribute | None:
        """What each element of a typed list is; None for any other attribute."""
        if self.type in _SET_ELEMENTS:
            return Attribute(_SET_ELEMENTS[self.type])
        if self.type != "L":
            return None
        if self.shape is not None:
            return Attribute("M", shape=self.shape)
        return None if self.element is None else Attribute(self.element)

    @property
    def is_typed(self) -> bool:
        """Whether GraphQL serves it: a scalar, a map of a shape, or a list of either."""
        served = (*SCALAR_TYPES, *_SET_ELEMENTS, "BS", "JSON")
        return self.type in served or self.shape is not None or self.element is not None


@dataclass(frozen=True, eq=False)
class Shape:
    """The fields of a typed map (M): an object type named ``name`` in GraphQL, and ``<name>Input`` for writes.

    Fields are declared like an entity's attributes, and may be complex themselves. Shapes are compared by
    identity: one shape used by several attributes is one GraphQL type.
    """

    name: str
    fields: Mapping[str, AttributeType | Attribute]
    description: str | None = None

    def __post_init__(self) -> None:
        declared = {
            name: spec if isinstance(spec, Attribute) else Attribute(spec) for name, spec in self.fields.items()
        }
        for name, spec in declared.items():
            if not spec.is_typed or not spec.is_input:
                raise ValueError(f"{self.name}.{name}: a shape's fields are typed values a write gives")
        refuse_shared_fields(self.name, declared)
        object.__setattr__(self, "fields", declared)

    @property
    def declared(self) -> Mapping[str, Attribute]:
        return self.fields  # type: ignore[return-value]


KeyType = Literal["S", "N", "B"]
"""The DynamoDB type of a key attribute: text (S), a number (N) or binary (B)."""
KEY_TYPES: tuple[KeyType, ...] = ("S", "N", "B")


@dataclass(frozen=True)
class Index:
    """The table's primary key (``name`` None) or a global secondary index with projection ALL.

    ``pk_type`` and ``sk_type``: each key attribute's DynamoDB type. A number (N) or binary (B) key holds one value
    and no literal text, so every template on it is one field (``{ts}``): its id is a whole number (served as the
    ``Long`` scalar), or base64 text for binary.

    ``sk`` None: a partition key alone (a table or an index keyed by one attribute, whose keys shapes have no sort
    key template: ``KeyShape.of("{id}")``)."""

    name: str | None
    pk: str
    sk: str | None = None
    local: bool = False
    """A local secondary index: the table's partition key, a sort key of its own, created with the table, and read
    strongly consistent when a collection asks (``Collection.consistent``)."""
    projection: Literal["ALL", "KEYS_ONLY"] | tuple[str, ...] = "ALL"
    """What the index holds of an item besides its keys: everything (``ALL``), nothing (``KEYS_ONLY``), or the
    attributes named (``INCLUDE``). A read through it must find there every attribute it serves (see
    ``_validate_projection``)."""
    pk_type: KeyType = "S"
    sk_type: KeyType = "S"

    def __post_init__(self) -> None:
        if not isinstance(self.pk, str) or not isinstance(self.sk, str | None):
            raise ValueError(
                f"index {self.name!r}: a key of several attributes (up to four partition and four sort attributes) is"
                " not supported yet: key it by one partition key attribute and at most one sort key attribute"
                " (Index(name, 'pk', 'sk')), or keep a composite key in one attribute ('{a}#{b}')"
            )

    @property
    def attributes(self) -> tuple[str, ...]:
        """Its key attributes, the partition key first."""
        return (self.pk,) if self.sk is None else (self.pk, self.sk)

    def keys(self, shape: KeyShape, ids: Ids) -> dict[str, str]:
        """The key attributes of the item ``ids`` name, of ``shape`` in this index."""
        if self.sk is None:
            return {self.pk: shape.pk.format(ids)}
        return {self.pk: shape.pk.format(ids), self.sk: shape.sk.format(ids)}


NO_SORT_KEY = KeyTemplate("")
"""The sort key template of a shape in an index without a sort key: the empty text, which holds no id."""


@dataclass(frozen=True)
class KeyShape:
    """An entity's key templates in one index.

    Read, any item may be absent from any secondary index: DynamoDB puts it in an index exactly when it holds every
    key attribute of that index, so an item without them is still the entity, in the table and its other indexes,
    and the ids only this index's keys hold are null (``Entity.index_only_ids``). ``sparse`` says what the
    gateway's own writes do: a create may leave the item out of this index (the ids only a sparse shape holds are
    optional inputs) and an update may set or remove them, putting the item in, moving it, or taking it out.
    Without it, every create writes this index's keys, and what needs every member in the index (a counter) is
    allowed.
    """

    pk: KeyTemplate
    sk: KeyTemplate = NO_SORT_KEY
    """``NO_SORT_KEY`` in an index keyed by its partition key alone."""
    sparse: bool = False

    @classmethod
    def of(cls, pk: str, sk: str | None = None, sparse: bool = False, separator: str = "#") -> KeyShape:
        """``separator``: a character the ids of both templates may not hold, besides ``#`` (``ORDER|{orderId}``).
        ``sk`` None: the shape in an index with a partition key alone."""
        return cls(KeyTemplate(pk, separator), KeyTemplate(sk or "", separator), sparse)

    @property
    def sorted(self) -> bool:
        """Whether it has a sort key template (its index a sort key)."""
        return bool(self.sk.pattern)

    @property
    def fields(self) -> set[str]:
        return {*self.pk.fields, *self.sk.fields}


@dataclass(frozen=True)
class Numbering:
    """Ids minted as the numbers 1, 2, 3, ... of one parent item (a project's tickets): ``counter``, an attribute of
    the ``parent`` entity that the gateway keeps, holds the last number taken (absent: none yet), and a create
    takes the next one in the transaction that writes its item. Entities numbered from the same parent and counter
    share one sequence."""

    parent: str
    counter: str
    ids: Mapping[str, str] = field(default_factory=dict)
    """Which id of the numbered item supplies each id of the parent's table key, by role (``{"name": "owner"}``:
    the parent's ``name`` is the item's ``owner``); ids not named are the item's ids of the same name."""

    def parent_ids(self, parent: Entity, ids: Ids) -> dict[str, str]:
        """The parent's table key from the numbered item's ids."""
        return {name: ids[self.ids.get(name, name)] for name in parent.id_fields}


MintKind = Literal["time", "ulid"]
"""How a minted id is made when it is no number: ``time`` (``20260315T142501.123456Z-9f3ac1d2``) or ``ulid``."""


@dataclass(frozen=True, eq=False)
class Entity:
    """An item type: its key templates per index (``None`` is the table) and its plain attributes.

    Attributes are declared by type (``"S"``) or as an :class:`Attribute` with their GraphQL surface. ``mint``
    names the id field a create mints, and ``minted`` how: ``"time"`` (UTC time and a random suffix), ``"ulid"``
    (a ULID) or a :class:`Numbering` (the next number of a counter on the parent); ``verbs`` renames the derived
    mutations (``create``, ``update``, ``delete``); ``internal`` entities (the gateway's own records) have no
    GraphQL surface.

    ``discriminator`` (``("EntityType", "customer")``): the attribute every item of the entity holds, and its
    value. An item is the entity only when its keys have the entity's shape and it holds that value; creates write
    it. Entities whose key shapes could be mistaken for each other must each declare one, on the same attribute.
    ``constants`` (``{"__edb_e__": "store", "__edb_v__": "1"}``) are more such attributes, none of them a GraphQL
    field: an item is the entity only when it holds every one of them (and the discriminator), and creates write
    them all. Two entities whose keys could be mistaken for each other are told apart by a constant attribute both
    hold with different values.

    A field of a secondary index's sort key that is a declared attribute (``o#{orderDate}``) is no id: it is an
    ordinary typed attribute (S, DATE or INT) that creates take and updates change, and an update that changes it
    moves the item in that index (re-keys it).
    """

    name: str
    keys: Mapping[str | None, KeyShape]
    attributes: Mapping[str, AttributeType | Attribute] = field(default_factory=dict)
    description: str | None = None
    mint: str | None = None
    verbs: Mapping[str, str] = field(default_factory=dict)
    internal: bool = False
    discriminator: tuple[str, str] | None = None
    variants: Mapping[str, tuple[KeyShape, ...]] = field(default_factory=dict)
    """Other shapes an item may have in a secondary index instead of its ``keys`` one (``#DOC#{docId}`` for an
    original, ``COPY#{docId}`` for a copy): an item is the entity when its keys there have one of the shapes.
    Creates write the first shape whose ids they are given; a collection reads one shape (``Collection.shape``)."""
    minted: MintKind | Numbering = "time"
    partition: bool = False
    """An entity with no item of its own: a partition its collections' members share (an order's ``o#<orderId>``,
    holding its lines, shipments and invoice). It is never read nor written: its object exists whenever its ids are
    given, and holds them alone. Its table key's partition key names the partition; its sort key is any text no
    item has."""
    constants: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.partition and (
            self.attributes or set(self.keys) != {None} or self.identity or self.mint or self.variants
        ):
            raise ValueError(
                f"{self.name}: a partition entity has no item, so no attributes, discriminator, constants, minted id,"
                " variants"
                " or index keys: only its table key"
            )
        if self.discriminator is not None and self.discriminator[0] in self.attributes:
            raise ValueError(
                f"{self.name}: the discriminator {self.discriminator[0]!r} is a constant the gateway writes,"
                " not a declared attribute"
            )
        _validate_constants(self)
        declared = {
            name: spec if isinstance(spec, Attribute) else Attribute(spec) for name, spec in self.attributes.items()
        }
        object.__setattr__(self, "attributes", declared)
        refuse_shared_fields(
            self.name, {name: spec for name, spec in declared.items() if spec.from_id is None and spec.is_typed}
        )
        if self.mint is not None and self.mint not in self.id_fields:
            raise ValueError(f"{self.name}: the minted id {self.mint!r} is not an id of its table key")
        _validate_minted(self)
        for name, spec in declared.items():
            if spec.from_id is not None and spec.from_id not in self.all_id_fields:
                raise ValueError(f"{self.name}.{name}: copies {spec.from_id!r}, which is not one of its ids")
        unknown = set(self.verbs) - {"create", "update", "delete"}
        if unknown:
            raise ValueError(f"{self.name}: unknown mutation verbs {sorted(unknown)}")
        for index, shape in self.keys.items():
            _validate_indexed_attributes(self, index, shape)
        for index, shapes in self.variants.items():
            if index is None or index not in self.keys:
                raise ValueError(
                    f"{self.name}: variants of {index!r}: an item has one table key, and variants are other shapes"
                    " in a secondary index its keys declare"
                )
            for shape in shapes:
                _validate_indexed_attributes(self, index, shape)

    # Normalised by __post_init__: every value is an Attribute.
    @property
    def declared(self) -> Mapping[str, Attribute]:
        return self.attributes  # type: ignore[return-value]

    @cached_property
    def identity(self) -> dict[str, str]:
        """The constant attributes every item of the entity holds: its discriminator and its ``constants``."""
        told = dict([self.discriminator]) if self.discriminator is not None else {}
        return {**told, **self.constants}

    @cached_property
    def folded_ids(self) -> dict[str, Case]:
        """The ids some key of the entity writes folded (``{storeId:lower}``), and to which case; an id folded
        both ways is listed lower."""
        out: dict[str, Case] = {}
        for shape in self._all_shapes:
            for template in (shape.pk, shape.sk):
                for name, case in template.cases.items():
                    if out.get(name) != "lower":
                        out[name] = case
        return out

    @cached_property
    def stored_ids(self) -> dict[str, str]:
        """Each id folded in a key that a stored copy holds as given (``Attribute("S", from_id="storeId")``), and
        that copy's attribute: where recognition reads the id's own case back."""
        copies = {spec.from_id: name for name, spec in self.declared.items() if spec.from_id is not None}
        return {name: copies[name] for name in self.folded_ids if name in copies}

    @cached_property
    def served_folded(self) -> frozenset[str]:
        """The ids served as their keys hold them, folded: every key the item always has writes them folded, and
        no stored copy keeps their case."""
        kept = {
            name
            for index, shape in self.keys.items()
            if not shape.sparse and index not in self.variants
            for template in (shape.pk, shape.sk)
            for name in template.fields
            if name not in template.cases
        }
        return frozenset(self.folded_ids) - kept - set(self.stored_ids)

    @property
    def primary(self) -> KeyShape:
        return self.keys[None]

    # Cached: the guard and the reader ask for them for every item of a request.
    @cached_property
    def id_fields(self) -> tuple[str, ...]:
        """The ids that identify one item: the fields of its table key, in order."""
        return tuple(dict.fromkeys((*self.primary.pk.fields, *self.primary.sk.fields)))

    def shapes(self, index: str | None) -> tuple[KeyShape, ...]:
        """The entity's shapes in ``index``: its ``keys`` one, then its variants."""
        return (self.keys[index], *self.variants.get(index, ())) if index is not None else (self.keys[index],)

    @cached_property
    def _all_shapes(self) -> tuple[KeyShape, ...]:
        return (*self.keys.values(), *(shape for shapes in self.variants.values() for shape in shapes))

    @cached_property
    def all_id_fields(self) -> frozenset[str]:
        return frozenset().union(*(shape.fields for shape in self._all_shapes)) - self.indexed_attributes

    @cached_property
    def padded_ids(self) -> frozenset[str]:
        """The ids some key of the entity writes as a zero-padded number (``ISSUE#{number:07}``)."""
        return frozenset().union(*(shape.pk.numbers | shape.sk.numbers for shape in self._all_shapes))

    @cached_property
    def indexed_attributes(self) -> frozenset[str]:
        """The declared attributes that index sort keys hold (``o#{orderDate}``): values, not ids."""
        declared = self.declared
        return frozenset(
            name
            for shape in self._all_shapes
            for name in shape.sk.fields
            if name in declared and declared[name].from_id is None
        )

    @cached_property
    def optional_id_fields(self) -> frozenset[str]:
        """The ids only sparse index keys, or one of several variants, hold: an item may have none of them."""
        kept = {
            name
            for index, shape in self.keys.items()
            if not shape.sparse and index not in self.variants
            for name in shape.fields
        }
        return self.all_id_fields - kept

    @cached_property
    def index_only_ids(self) -> frozenset[str]:
        """The ids no table key holds: an item absent from the indexes that hold them (it lacks a key attribute
        there) has none of them, so they are optional wherever an item is read."""
        return self.all_id_fields - set(self.id_fields)

    @cached_property
    def movable_ids(self) -> frozenset[str]:
        """The ids only sparse index keys hold (not one of several variants): an update sets one, which puts the item
        in those indexes or moves it there (a log escalated to a supervisor), or removes it, which takes the item out
        of them; its identity, the table key, stays."""
        variant = {name for index, shapes in self.variants.items() for shape in shapes for name in shape.fields}
        variant |= {name for index in self.variants for name in self.keys[index].fields}
        return self.optional_id_fields - variant

    @cached_property
    def key_fields(self) -> tuple[str, ...]:
        """Every id of the entity's own key templates, table key first: its natural key fields in GraphQL."""
        ordered = [*self.id_fields]
        for shape in self._all_shapes:
            ordered += [name for name in (*shape.pk.fields, *shape.sk.fields) if name not in self.indexed_attributes]
        return tuple(dict.fromkeys(ordered))


@dataclass(frozen=True)
class Collection:
    """A to-many relation answered by one Query: the ``member`` items of ``parent`` in ``index``.

    With a ``target``, members are edge items of a many-to-many relation and each edge points at a target item
    that is read with BatchGetItem.

    With a tuple of entities as ``member``, a union connection: the items of all of them in the parent's partition,
    in one Query, in sort-key order, each served as the entity its keys (and discriminator) say it is. Every entity
    whose items can sort in that range must be one of them, and the model refuses filters, levels, a range, a
    counter, a target, a shape and copies on it (see docs/own-table.md).
    """

    name: str
    parent: Entity
    member: Entity | tuple[Entity, ...]
    index: str | None = None
    ascending: bool = True
    target: Entity | None = None
    counter: str | None = None
    """The parent's attribute that holds the exact number of members: the connection's ``totalCount``."""
    description: str | None = None
    levels: tuple[str, ...] = ()
    """A composite sort key's hierarchy (``LOC#<state>#<city>#<branchId>``): the ids, in key order, that the
    connection takes as arguments. The levels given narrow the Query to ``begins_with`` on their prefix; a level is
    given only with the ones above it."""
    filters: tuple[str, ...] = ()
    """Member attributes the connection may be filtered by (its ``where`` argument): plain attributes, not keys."""
    shape: KeyShape | None = None
    """Which of the member's shapes in ``index`` the connection lists, when it has variants there: its ``keys``
    one unless given."""
    partition: Mapping[str, str] = field(default_factory=dict)
    """Which id of the parent supplies each id of the members' partition key, by role (``{"owner": "name"}``: a
    document's ``owner`` is its account's ``name``); ids not named are the parent's ids of the same name."""
    ids: Mapping[str, str] = field(default_factory=dict)
    """Which id of an edge item supplies each id of the target, by role (``{"name": "followee"}``: the target's
    ``name`` is the edge's ``followee``); ids not named are taken from the edge's id of the same name."""
    range: str | None = None
    """The field that ends the members' sort key (a date or a number: ``p#{orderedAt}``), which the connection
    takes an argument of that name to read a range of (``between``, ``gte``, ``lte``, ``beginsWith``): the range
    becomes the Query's key condition, so only the range is read."""
    root: str | None = None
    """A root query field that lists the members from the parent's ids alone (``warehouseShipments(warehouseId)``):
    one Query, with no read of the parent, for a client that wants the list and not the parent; the connection is
    the nested field's. A parent that does not exist gives an empty connection."""
    union: str | None = None
    """A union connection's node type in GraphQL (``OrderDetail``): by default the parent's name and the field's
    without a final ``s`` (``Order.details``: ``OrderDetail``)."""
    consistent: bool = False
    """Read with ``ConsistentRead``: a page reflects every write acknowledged before it, at twice the read cost. On
    the table's key or a local index only: a global secondary index is eventually consistent."""

    def __post_init__(self) -> None:
        if self.is_union:
            _validate_union_declaration(self)
            return
        if self.union is not None:
            raise ValueError(f"{self.name}: union= names the node type of a union connection; drop it")
        for name in self.filters:
            if name not in self.entity.attributes:
                raise ValueError(f"{self.name}: {name} is not an attribute of {self.entity.name}")
            kind = self.entity.declared[name].type
            if kind not in SCALAR_TYPES:
                raise ValueError(
                    f"{self.name}: {self.entity.name}.{name} is {kind}, which a filter cannot compare: filters take"
                    f" attributes of types {', '.join(SCALAR_TYPES)}; drop {name!r} from filters="
                )

    @property
    def is_union(self) -> bool:
        """Whether the connection lists several entities (``member`` is a tuple of them)."""
        return isinstance(self.member, tuple)

    @property
    def members(self) -> tuple[Entity, ...]:
        """Every entity the connection lists: ``member`` alone, or a union's."""
        return self.member if isinstance(self.member, tuple) else (self.member,)

    @property
    def entity(self) -> Entity:
        """The one entity a plain collection lists. A union has several (``members``); what asks for one alone
        (counters, copies, filters, edges) is refused on a union when the model is built."""
        if isinstance(self.member, tuple):
            raise TypeError(f"{self.name} is a union connection of {len(self.member)} entities")
        return self.member

    @property
    def union_name(self) -> str:
        """The GraphQL name of a union connection's node type."""
        if self.union is not None:
            return self.union
        field = self.field[:1].upper() + self.field[1:]
        return self.parent.name + (field[:-1] if field.endswith("s") else field)

    def sort_prefix(self, ids: Ids) -> str:
        """The text every member's sort key starts with under the parent's ``ids`` (members' ids): the Query's
        ``begins_with``, empty for none. A union's is what all its members' prefixes share."""
        if not self.is_union:
            return self.member_shape.sk.prefix(ids)
        return _shared_prefix([shape.sk.prefix(ids) for shape in self.shapes])

    @property
    def shapes(self) -> tuple[KeyShape, ...]:
        """Each member's key shape in ``index``: one for a plain collection."""
        if not self.is_union:
            return (self.member_shape,)
        return tuple(entity.keys[self.index] for entity in self.members)

    @property
    def field(self) -> str:
        """The GraphQL field on the parent's type: the part of ``name`` after the dot."""
        return self.name.partition(".")[2]

    def member_ids(self, parent_ids: Ids) -> Ids:
        """The parent's ids, and under the names the members' keys give them (``owner`` for an account's
        ``name``): what the members' partition and sort-key prefix are formatted from."""
        if not self.partition:
            return parent_ids
        # With roles named, a parent's id that a member holds under the same name for itself (a fork's own ``owner``
        # under its original's) is not the member's: only the partition's ids and the levels come from the parent.
        own = frozenset().union(*(one.all_id_fields for one in self.members))
        own -= {*self.member_shape.pk.fields, *self.levels}
        return {
            **{name: value for name, value in parent_ids.items() if name not in own},
            **{mine: parent_ids[theirs] for mine, theirs in self.partition.items() if theirs in parent_ids},
        }

    def parent_key(self, member_ids: Ids) -> dict[str, str]:
        """The parent's table key from one member's ids."""
        back = {theirs: mine for mine, theirs in self.partition.items()}
        return {name: member_ids[back.get(name, name)] for name in self.parent.id_fields}

    @property
    def parent_fields(self) -> tuple[str, ...]:
        """The members' ids that hold the parent's table key."""
        back = {theirs: mine for mine, theirs in self.partition.items()}
        return tuple(back.get(name, name) for name in self.parent.id_fields)

    def knows_parent(self, member_ids: Ids) -> bool:
        return all(name in member_ids for name in self.parent_fields)

    @property
    def member_shape(self) -> KeyShape:
        """The members' key shape in ``index``: what the Query's partition and sort-key prefix are made from. A
        union's first member's, whose partition key every member shares (its sort-key prefix is ``sort_prefix``)."""
        if self.shape is not None:
            return self.shape
        return self.members[0].keys[self.index]

    def target_ids(self, ids: Ids) -> dict[str, str]:
        """The target's table key from an edge item's ids."""
        assert self.target is not None
        return {name: ids[self.ids.get(name, name)] for name in self.target.id_fields}

    @property
    def shards(self) -> int:
        """How many partitions the members spread over: the shard segment of their partition key in ``index``
        (``WS#{workspaceId}#{taskId%8}``: 8), 1 for a collection of one partition. A page of a sharded collection
        is one Query per shard, sent at once and merged in sort order."""
        return self.member_shape.pk.shards


@dataclass(frozen=True)
class Copy:
    """Duplicated parent data: each member of ``collection`` holds a copy of the parent's ``source`` attribute in
    its own ``attribute`` (an author's name on each of its books), so it is served with no read of the parent.

    Creates fill the copy from the parent; a change of the parent's attribute through the gateway rewrites the
    copies, in bounded batches that resume where an interrupted rewrite stopped.
    """

    collection: Collection
    attribute: str
    source: str


@dataclass(frozen=True)
class Link:
    """A to-one relation: the target's ids are all among the source's ids, so it is one batched point read.

    ``ids`` says which id of the source supplies each id of the target, by role (``{"name": "owner"}``: the
    target's ``name`` is the source's ``owner``); ids not named are taken from the source's id of the same name.
    """

    name: str
    source: Entity
    target: Entity
    description: str | None = None
    ids: Mapping[str, str] = field(default_factory=dict)

    @property
    def field(self) -> str:
        return self.name.partition(".")[2]

    def target_ids(self, ids: Ids) -> dict[str, str] | None:
        """The target's table key from the source's ids; None when the source lacks one (a sparse index's)."""
        mapped = self.ids
        out = {}
        for name in self.target.id_fields:
            value = ids.get(mapped.get(name, name))
            if value is None:
                return None
            out[name] = value
        return out


@dataclass(frozen=True)
class Lookup:
    """A root field that finds one ``entity`` by the ids of its keys in a secondary ``index``, for a caller who
    lacks ids of its table key (an invoice by its ``invoiceId`` when its table key also holds the ``orderId``): one
    Query on the index with both keys equal. Its arguments are the ids of that index's key shape.

    When the selection asks for the first page of a collection in the same index whose members sort next to the
    entity (a shipment, then its items), the same Query reads them too."""

    name: str
    entity: Entity
    index: str
    description: str | None = None

    @property
    def shape(self) -> KeyShape:
        return self.entity.keys[self.index]

    @property
    def arguments(self) -> tuple[tuple[str, str], ...]:
        """(argument, id) pairs: the ids of the index's key shape, partition key first."""
        fields = dict.fromkeys((*self.shape.pk.fields, *self.shape.sk.fields))
        return tuple((graphql_name(name), name) for name in fields)


@dataclass(frozen=True)
class Root:
    """A root query field: one entity by its table key (``many``: a list of them by their one id), or, with no
    entity, any entity by its global id (``node`` and ``nodes``). ``arguments`` pairs argument names with ids."""

    entity: Entity | None
    many: bool
    arguments: tuple[tuple[str, str], ...]


def lower_camel(name: str) -> str:
    return name[:1].lower() + name[1:]


_Candidate = tuple[Entity, tuple[tuple[Index, tuple[KeyShape, ...]], ...]]
"""An entity to try an item against, with the index keys that must agree with its table key."""


@dataclass(frozen=True)
class Model:
    table: str
    indexes: tuple[Index, ...]
    entities: tuple[Entity, ...]
    collections: tuple[Collection, ...] = ()
    links: tuple[Link, ...] = ()
    copies: tuple[Copy, ...] = ()
    expires_attribute: str | None = None
    """The attribute (epoch seconds) by which DynamoDB's time to live removes short-lived items."""
    lookups: tuple[Lookup, ...] = ()
    """Root fields that find an entity through a secondary index (see :class:`Lookup`)."""
    _indexes: dict[str | None, Index] = field(init=False, repr=False, compare=False)
    _candidates: tuple[_Candidate, ...] = field(init=False, repr=False, compare=False)
    _by_heads: dict[tuple[str, str], tuple[_Candidate, ...]] = field(init=False, repr=False, compare=False)
    _by_name: dict[str, Entity] = field(init=False, repr=False, compare=False)
    _shared: frozenset[Entity] = field(init=False, repr=False, compare=False)
    _recognition: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _unread: tuple[object, ...] = field(init=False, repr=False, compare=False)
    """``_ABSENT`` once per name of ``_recognition``: the default of each of them, read in one ``map``."""
    _recognised: Callable[[tuple[Any, ...]], tuple[Entity, dict[str, str]] | None] = field(
        init=False, repr=False, compare=False
    )
    _key_types: dict[str, KeyType] = field(init=False, repr=False, compare=False)
    table_key_of: Callable[[Mapping[str, Any]], tuple[Any, ...]] = field(init=False, repr=False, compare=False)
    """An item's table key values as ``key`` writes them (as text): what a read is matched with the key it asked.
    For text keys, ``operator.itemgetter`` of them: no cost per item beyond the look-up."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_key_types", _key_types(self.indexes))
        object.__setattr__(self, "table_key_of", self._table_key_reader())
        object.__setattr__(self, "_shared", _validate(self))
        indexes = {index.name: index for index in self.indexes}
        # A partition entity has no item, so no item is ever recognised as one.
        candidates = [
            (entity, tuple((indexes[name], entity.shapes(name)) for name in entity.keys if name is not None))
            for entity in self.entities
            if not entity.partition
        ]
        # Recognising an item parses only the entities whose partition and sort keys can start like the item's:
        # in a partition of a parent and its members, each item is tried against its own entity alone.
        pk_heads = {one for entity in self.entities if (one := entity.primary.pk.head) is not None}
        sk_heads = {one for entity in self.entities if (one := entity.primary.sk.head) is not None}
        by_heads = {(pk, sk): _candidates_for(candidates, pk, sk) for pk in pk_heads for sk in sk_heads}
        object.__setattr__(self, "_indexes", indexes)
        object.__setattr__(self, "_candidates", tuple(candidates))
        object.__setattr__(self, "_by_heads", by_heads)
        object.__setattr__(self, "_by_name", {entity.name: entity for entity in self.entities})
        # What recognising an item reads of it: every index's keys, every constant, and the stored copies that keep
        # the case of ids the keys fold.
        recognition = [name for index in self.indexes for name in index.attributes]
        recognition += [name for entity in self.entities for name in entity.identity]
        recognition += [name for entity in self.entities for name in entity.stored_ids.values()]
        object.__setattr__(self, "_recognition", tuple(dict.fromkeys(recognition)))
        object.__setattr__(self, "_unread", (_ABSENT,) * len(self._recognition))
        object.__setattr__(self, "_recognised", lru_cache(maxsize=RECOGNISED)(self._recognise_read))

    def index(self, name: str | None) -> Index:
        return self._indexes[name]

    # --- the graph ------------------------------------------------------------------------------------------

    @cached_property
    def relations(self) -> dict[str, Collection | Link]:
        """Every relation by its name, ``<Type>.<field>``: what a field of an entity's type reads."""
        out: dict[str, Collection | Link] = {collection.name: collection for collection in self.collections}
        out.update((link.name, link) for link in self.links)
        return out

    @cached_property
    def roots(self) -> dict[str, Root]:
        """The root query fields: ``node``/``nodes``, each entity by its table key, and by a list of its one id."""
        out = {"node": Root(None, False, (("id", ""),)), "nodes": Root(None, True, (("ids", ""),))}
        for entity in self.entities:
            if entity.internal:
                continue
            name = lower_camel(entity.name)
            out[name] = Root(entity, False, tuple((graphql_name(field), field) for field in entity.id_fields))
            if len(entity.id_fields) == 1:
                (only,) = entity.id_fields
                out[f"{name}s"] = Root(entity, True, ((f"{graphql_name(only)}s", only),))
        return out

    @cached_property
    def root_collections(self) -> dict[str, Collection]:
        """The collections listed from the root by their parent's ids, by their root field's name."""
        return {collection.root: collection for collection in self.collections if collection.root is not None}

    def entity(self, name: str) -> Entity | None:
        return self._by_name.get(name)

    def with_table(self, table: str) -> Model:
        return replace(self, table=table)

    # --- key building -------------------------------------------------------------------------------------

    def key(self, entity: Entity, ids: Ids) -> dict[str, str]:
        """The table key of one item, as text (a number's decimal digits, binary's base64): ``stored`` gives the
        values DynamoDB holds."""
        table = self.index(None)
        if table.sk is None:
            return {table.pk: entity.primary.pk.format(ids)}
        return {table.pk: entity.primary.pk.format(ids), table.sk: entity.primary.sk.format(ids)}

    @property
    def key_types(self) -> Mapping[str, KeyType]:
        """The key attributes of the table and its indexes that are not text (S), by name: numbers and binary."""
        return self._key_types

    def stored(self, key: Mapping[str, Any]) -> dict[str, Any]:
        """Key attributes given as text as DynamoDB holds them: a number key's value as a Decimal, a binary one's
        as bytes, any other as it is."""
        types = self._key_types
        if not types:
            return dict(key)
        return {name: key_value(types[name], value) if name in types else value for name, value in key.items()}

    def _table_key_reader(self) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
        table = next((index for index in self.indexes if index.name is None), Index(None, "", ""))  # else refused
        if table.sk is None:  # a table keyed by its partition key alone: its items' sort key is the empty text
            pk = table.pk
            if pk not in self._key_types:
                return lambda item: (item[pk], "")
            return lambda item: (self.id_text(pk, item[pk]), "")
        read: Callable[[Mapping[str, Any]], tuple[Any, ...]] = itemgetter(table.pk, table.sk)
        if table.pk not in self._key_types and table.sk not in self._key_types:
            return read
        names = table.pk, table.sk
        return lambda item: tuple(map(self.id_text, names, read(item)))

    def id_text(self, name: str, value: Any) -> Any:
        """A key attribute's value as read, as the text its templates parse (``stored`` undone); a value that is
        no key of its type (a fraction of a number key) as it is, which then matches no template."""
        kind = self._key_types.get(name)
        if kind is None:
            return value
        text = key_text(kind, value)
        return value if text is None else text

    def item_key(self, item: Mapping[str, Any]) -> tuple[Any, Any]:
        """An item's table key (or a key's) as a pair of texts (``table_key_of``): its sort key is ``""`` in a table
        without one."""
        return self.table_key_of(item)

    def key_of(self, pk: Any, sk: Any) -> dict[str, Any]:
        """The table key of a pair ``item_key`` gives, by attribute."""
        table = self._indexes[None]
        return {table.pk: pk} if table.sk is None else {table.pk: pk, table.sk: sk}

    def key_attributes(self, entity: Entity, ids: Ids) -> dict[str, str]:
        """Every attribute that identifies an item of ``entity``: its keys in the table and in each index (as text,
        see ``stored``), and its constants."""
        out: dict[str, str] = {}
        for keys in self.index_keys(entity, ids).values():
            out.update(keys)
        out.update(entity.identity)
        return out

    def index_keys(self, entity: Entity, ids: Ids) -> dict[str | None, dict[str, str]]:
        """The item's key attributes in the table (``None``) and in each index whose keys ``ids`` give."""
        out: dict[str | None, dict[str, str]] = {}
        for name in entity.keys:
            shape = self.shape_in(entity, name, ids)
            if shape is None:
                continue
            # Without its values, an index key is unknown (an update's) or not written (a sparse index's).
            partial = shape.sparse or not entity.indexed_attributes.isdisjoint(shape.sk.fields)
            if partial and not all(field in ids and ids[field] is not None for field in shape.fields):
                continue
            out[name] = self.index(name).keys(shape, ids)
        return out

    @cached_property
    def _numbers(self) -> dict[str, frozenset[str]]:
        """Per entity, its ids that are numbers in some key (zero-padded, or a number key's whole value): in its own
        keys, or in those of an entity a collection, a link or a numbering passes the id to or from (an issue's
        ``number``, padded in ``ISSUE#{number:07}``, is the same number in its comments'
        ``ISSUECOMMENT#...#{number}``)."""
        typed = self._typed_ids
        return self._spread(
            {
                entity.name: {*entity.padded_ids, *(n for n, t in typed[entity.name].items() if t == "N")}
                for entity in self.entities
            }
        )

    @cached_property
    def _typed_ids(self) -> dict[str, dict[str, KeyType]]:
        """Per entity, its ids that are a number or binary key's whole value, in its own keys or passed to or from
        another entity's, by type."""
        seeds: dict[str, dict[str, KeyType]] = {entity.name: {} for entity in self.entities}
        for entity in self.entities:
            for name, shapes in ((name, entity.shapes(name)) for name in entity.keys):
                index = self._indexes[name]
                for shape in shapes:
                    for template, kind in ((shape.pk, index.pk_type), (shape.sk, index.sk_type)):
                        for one in template.fields:
                            if kind != "S" and one not in entity.indexed_attributes:
                                seeds[entity.name].setdefault(one, kind)
        out: dict[str, dict[str, KeyType]] = {name: {} for name in seeds}
        for kind in ("N", "B"):
            found = self._spread({name: {one for one, t in ids.items() if t == kind} for name, ids in seeds.items()})
            for name, ids in found.items():
                out[name].update(dict.fromkeys(ids, kind))
        return out

    def id_type(self, entity: Entity, name: str) -> KeyType:
        """How ``entity``'s id ``name`` is held in a key: S (text), or the whole value of a number or binary key."""
        return self._typed_ids.get(entity.name, {}).get(name, "S")

    def _spread(self, seeds: Mapping[str, set[str]]) -> dict[str, frozenset[str]]:
        """``seeds`` (ids per entity) with every id a relation passes to or from one of them."""
        numbers = {name: set(found) for name, found in seeds.items()}
        pairs: list[tuple[Entity, Entity, Mapping[str, str]]] = []  # (one, other, {id of one: id of other})
        for collection in self.collections:
            pairs += [(member, collection.parent, collection.partition) for member in collection.members]
            if collection.target is not None:
                pairs.append((collection.entity, collection.target, {v: k for k, v in collection.ids.items()}))
        for link in self.links:
            pairs.append((link.source, link.target, {v: k for k, v in link.ids.items()}))
        changed = True
        while changed:
            changed = False
            for one, other, roles in pairs:
                for mine in one.all_id_fields:
                    theirs = roles.get(mine, mine)
                    if theirs not in other.all_id_fields:
                        continue
                    for a, x, b, y in ((one, mine, other, theirs), (other, theirs, one, mine)):
                        if x in numbers[a.name] and y not in numbers[b.name]:
                            numbers[b.name].add(y)
                            changed = True
        return {name: frozenset(found) for name, found in numbers.items()}

    def canonical(self, entity: Entity, ids: Mapping[str, str]) -> dict[str, str]:
        """``ids`` as keys read them back: a zero-padded number without its padding (``0000007`` is ``7``), so that
        every key, padded or plain, is written from one value. Text that is no number is left for the key to
        refuse; an id of a number or binary key that is not one is refused here (BadUserInput)."""
        numbers = self._numbers.get(entity.name, frozenset())
        typed = self._typed_ids[entity.name]
        if not numbers and not typed:
            return dict(ids)
        out = {
            name: str(int(value)) if name in numbers and value.isascii() and value.isdigit() else value
            for name, value in ids.items()
        }
        for name, kind in typed.items():
            value = out.get(name)
            if value is not None:
                out[name] = key_text(kind, key_value(kind, value, graphql_name(name))) or value
        return out

    def shape_in(self, entity: Entity, index: str | None, ids: Ids) -> KeyShape | None:
        """The shape in ``index`` of the item these ids name: of several variants, the one that uses the most of
        the ids given (a fork's, holding its original's owner, over an original's), the first on a tie; None when
        none has all its ids."""
        shape = entity.keys.get(index)
        if index not in entity.variants:
            return shape
        known = [one for one in entity.shapes(index) if all(ids.get(field) is not None for field in one.fields)]
        return max(known, key=lambda one: len(one.fields), default=None)

    def item(self, entity: Entity, ids: Ids, attributes: Mapping[str, Any]) -> Item:
        """A whole item: the entity's key attributes in every index (as text, see ``stored``), then its
        attributes."""
        values = indexed_values(entity, attributes)
        return {**attributes, **self.key_attributes(entity, {**ids, **values} if values else ids)}

    def position_fields(self, collection: Collection) -> list[str]:
        """The key attributes DynamoDB needs to resume a Query on ``collection`` after an item."""
        names = [*self.index(None).attributes]
        if collection.index is not None:
            names += self.index(collection.index).attributes
        # An index may reuse a table key attribute (the business design's typeGsi inverts the table key): named once.
        return list(dict.fromkeys(names))

    # --- recognising items --------------------------------------------------------------------------------

    def recognise(self, item: Mapping[str, Any], partial: bool = False) -> tuple[Entity, dict[str, str]] | None:
        """The entity an item belongs to and its ids, from its table key's shape and discriminator; None for unknown
        shapes, and for an item that could be more than one entity (logged).

        Index keys never decide what an item is: an item may be absent from any index (it lacks a key attribute of
        it), and its ids are then those its other keys hold. The keys of an index it is in must agree with its
        table key, or it is no item of that entity (see ``_secondary_ids``).

        ``partial`` accepts a key without its discriminator (what a write names).

        What the attributes recognition reads were recognised as is kept (the last ``RECOGNISED`` of them): items
        read again, by this request or another, are not parsed again. Items of no entity are recognised anew each
        time, so that an ambiguous one is logged wherever it is met.
        """
        if not partial:
            try:
                found = self._recognised(tuple(map(item.get, self._recognition, self._unread)))
            except TypeError:  # an attribute that cannot be a key (a list, a map): recognised without keeping it
                found = None
            if found is not None:
                return found[0], dict(found[1])
        return self._recognise(item, partial)

    def _recognise_read(self, read: tuple[Any, ...]) -> tuple[Entity, dict[str, str]] | None:
        """``recognise`` of the attributes it reads, in ``_recognition``'s order (``_ABSENT`` where missing)."""
        return self._recognise(
            {name: value for name, value in zip(self._recognition, read, strict=True) if value is not _ABSENT}
        )

    def _recognise(self, item: Mapping[str, Any], partial: bool = False) -> tuple[Entity, dict[str, str]] | None:
        if self._key_types:  # number and binary keys are parsed as the text their ids are
            item = {**item, **{name: self.id_text(name, item[name]) for name in self._key_types if name in item}}
        table = self._indexes[None]
        pk, sk = item.get(table.pk), _sort_key(item, table)
        if not isinstance(pk, str) or not isinstance(sk, str):
            return None
        heads = head(pk), head(sk)
        found = self._by_heads.get(heads)
        if found is None:  # a head no template has: only templates that start with an id can match
            found = _candidates_for(self._candidates, *heads)
        match: tuple[Entity, dict[str, str]] | None = None
        for entity, secondary in found:
            ids = _parse_shape(entity.primary, pk, sk)
            if ids is None:
                continue
            if entity.identity and not _holds(item, entity.identity, partial):
                continue
            ids = _secondary_ids(item, ids, secondary, entity.folded_ids)
            if ids is None:
                if entity in self._shared:
                    continue
                return None
            if entity.stored_ids:
                _restore_case(item, ids, entity)
            if entity not in self._shared:
                # Only entities that share a key shape can both match: the first match of any other is the one.
                return entity, ids
            if match is not None:
                log.warning(
                    "skipping an item that could be %s or %s: %s=%r %s=%r",
                    match[0].name,
                    entity.name,
                    table.pk,
                    pk,
                    table.sk,
                    sk,
                )
                return None
            match = entity, ids
        return match

    def ids_of(self, entity: Entity, item: Item) -> dict[str, str] | None:
        """The item's ids if it is an ``entity``; logs and returns None for any other shape."""
        if entity.partition:  # never recognised among items: its object is its key, read by its own shape
            table = self._indexes[None]
            ids = _parse_shape(entity.primary, item.get(table.pk), _sort_key(item, table))
            return self.expected_ids(entity, item, None if ids is None else (entity, ids))
        return self.expected_ids(entity, item, self.recognise(item))

    def expected_ids(
        self, entity: Entity, item: Item, found: tuple[Entity, dict[str, str]] | None
    ) -> dict[str, str] | None:
        """``ids_of`` for an item already recognised as ``found``."""
        if found is None or found[0] is not entity:
            self.skipped(item, f"of unexpected shape where {entity.name} was expected")
            return None
        return found[1]

    def mismatch(self, entity: Entity, item: Item, found: tuple[Entity, dict[str, str]] | None) -> DataMismatch | None:
        """The error for an item that has ``entity``'s table key shape (read at an entity's own key, or in a page of
        its members) but, recognised as ``found``, reads as no entity: a discriminator or index keys that contradict
        the declaration. None for an item that is ``entity``, another entity the declaration names, or of a key
        shape ``entity`` does not have (skipped, as items of shapes no declaration names are)."""
        if found is not None:
            return None
        ids = self.key_ids(entity, item)
        if ids is None:
            return None
        return DataMismatch(
            f"the item at {_shown(self.json_key(item))} is not the {entity.name} its key names:"
            f" {self._why(entity, item, ids)}",
            entity=entity.name,
            key=self.json_key(item),
        )

    def key_ids(self, entity: Entity, item: Item) -> dict[str, str] | None:
        """The ids of ``entity`` its table key template reads in the item's table key; None when the key has
        another shape, and for a partition entity (it has no item)."""
        if entity.partition:
            return None
        pk, sk = self.table_key_of(item) if self._has_table_key(item) else (None, None)
        return _parse_shape(entity.primary, pk, sk)

    def _has_table_key(self, item: Item) -> bool:
        return all(name in item for name in self._indexes[None].attributes)

    def _why(self, entity: Entity, item: Item, ids: dict[str, str]) -> str:
        for attribute, value in entity.identity.items():
            if item.get(attribute) != value:
                return f"its {attribute} holds {item.get(attribute)!r} where the declaration has {value!r}"
        secondary = next(one for candidate, one in self._candidates if candidate is entity)
        for index, shapes in secondary:
            if _secondary_ids(item, dict(ids), ((index, shapes),), entity.folded_ids) is None:
                held = ", ".join(f"{name}={item.get(name)!r}" for name in index.attributes)
                return f"its keys in {index.name} ({held}) do not agree with its table key"
        return "it could be more than one entity"

    def json_key(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """An item's table key, by attribute name, as JSON (numbers as numbers, binary in base64)."""
        return {name: values.plain_json(item.get(name)) for name in self._indexes[None].attributes}

    def skipped(self, item: Item, why: str) -> None:
        """Log an item left out of an answer (never served as another entity), by its table key."""
        table = self.index(None)
        log.warning("skipping an item %s: %s", why, {name: item.get(name) for name in table.attributes})

    def parent_sorts_with_members(self, collection: Collection, ascending: bool | None = None) -> bool:
        """Whether one Query, read ``ascending`` (the collection's declared order when None), returns the parent and
        then its members: the parent sorts next to them, on the side the read starts from. A question of the model
        alone, asked for every page a request plans: answered once per collection and order."""
        key = (collection.name, ascending)
        answer = self._sorting.get(key)
        if answer is None:
            answer = self._sorting[key] = self._parent_sorts_with_members(collection, ascending)
        return answer

    @cached_property
    def _sorting(self) -> dict[tuple[str, bool | None], bool]:
        return {}

    def _parent_sorts_with_members(self, collection: Collection, ascending: bool | None) -> bool:
        parent_shape = collection.parent.keys.get(collection.index)
        if collection.parent.partition or collection.is_union:  # no item to read at the head, or no one prefix
            return False
        if self.index(collection.index).sk is None:  # a partition's items come in no order a parent could head
            return False
        if parent_shape is None or parent_shape.pk != _partition_as_parent(collection):
            return False
        # A parent outside the index, or in it under another of its shapes (a fork under its original), would be
        # missed by the Query, and taken for absent.
        if parent_shape.sparse or collection.index in collection.parent.variants:
            return False
        parent_sk = parent_shape.sk.literal_prefix
        member_prefix = collection.member_shape.sk.literal_prefix
        if parent_sk.startswith(member_prefix) or member_prefix.startswith(parent_sk):
            return False
        if (parent_sk < member_prefix) != (collection.ascending if ascending is None else ascending):
            return False
        # Items of another shape between the parent and its members would take the places the Query's Limit keeps
        # for members, and a second Query, a round later, would have to fetch the rest: the parent is then read
        # beside the members' Query instead, at 2 calls in 1 round whatever the data.
        low, high = sorted((parent_sk, member_prefix))
        return not any(
            _anonymous(shape.pk) == _anonymous(parent_shape.pk) and _sorts_between(shape.sk.literal_prefix, low, high)
            for entity in self.entities
            if collection.index in entity.keys
            for shape in entity.shapes(collection.index)
            if shape not in (parent_shape, collection.member_shape) and _slot(shape) != _slot(parent_shape)
        )


def key_value(kind: KeyType, text: str, argument: str | None = None) -> Any:
    """An id's text as a key of type ``kind`` holds it: a whole number as a Decimal, binary (base64 text) as bytes;
    BadUserInput, on ``argument``, for text that is neither."""
    if kind == "N":
        try:
            number = Decimal(text)
        except InvalidOperation:
            number = None
        if number is None or not number.is_finite() or number != number.to_integral_value():
            raise BadUserInput(f"{argument or 'a number key'} must be a whole number, not {text!r}", argument=argument)
        return number
    if kind == "B":
        try:
            return b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise BadUserInput(
                f"{argument or 'a binary key'} must be base64, not {text!r}", argument=argument
            ) from None
    return text


def key_text(kind: KeyType, value: Any) -> str | None:
    """A key's stored value as its id's text: a whole number in plain decimal digits (``1700000000123``), binary
    as base64; None for a value that is not one (a fraction, text in a number key)."""
    if kind == "N":
        if isinstance(value, bool) or not isinstance(value, Decimal | int):
            return None
        number = Decimal(value)
        if not number.is_finite() or number != number.to_integral_value():
            return None
        return str(int(number))
    if kind == "B":
        # boto3's Binary, bytes and bytearray all give their bytes to bytes().
        if isinstance(value, str) or not (hasattr(value, "__bytes__") or isinstance(value, bytes | bytearray)):
            return None
        return b64encode(bytes(value)).decode()
    return value if isinstance(value, str) else None


def _key_types(indexes: Sequence[Index]) -> dict[str, KeyType]:
    """The key attributes that are not text, by name; ValueError for an attribute declared with two types."""
    kinds: dict[str, tuple[KeyType, str | None]] = {}
    for index in indexes:
        for name, kind in ((index.pk, index.pk_type), (index.sk, index.sk_type)):
            if name is None:  # an index keyed by its partition key alone
                continue
            if kind not in KEY_TYPES:
                raise ValueError(f"index {index.name!r}: {name} has the key type {kind!r}, not one of S, N, B")
            known = kinds.setdefault(name, (kind, index.name))
            if known[0] != kind:
                raise ValueError(
                    f"{name} is a key of index {known[1]!r} as {known[0]} and of index {index.name!r} as {kind}: one"
                    " attribute has one type; declare the same type in both"
                )
    return {name: kind for name, (kind, _) in kinds.items() if kind != "S"}


def _partition_as_parent(collection: Collection) -> KeyTemplate:
    """The members' partition key template with each id under the parent's name for it (``ACCOUNT#{owner}`` is
    ``ACCOUNT#{username}`` under a user): the parent's own template in that index when its item heads the
    partition."""
    template = collection.member_shape.pk
    if not collection.partition:
        return template
    renamed = _PLACEHOLDER_NAME.sub(
        lambda match: "{" + collection.partition.get(match.group(1), match.group(1)), template.pattern
    )
    return KeyTemplate(renamed, template.separator)


def _anonymous(template: KeyTemplate) -> tuple[str, str]:
    """A template without its ids' names: templates equal so can name one partition (``ACCOUNT#{username}`` and
    ``ACCOUNT#{orgName}``)."""
    return _PLACEHOLDER_NAME.sub("{", template.pattern), template.separator


def _slot(shape: KeyShape) -> tuple[str, str, str]:
    """A key shape with its ids named by order of appearance: shapes equal so put their items at one key (a user's
    ``ACCOUNT#{username}``/``ACCOUNT#{username}`` and an organization's ``ACCOUNT#{orgName}``/...), where only one
    item can be: one of them cannot sort beside the other."""
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return "{" + names.setdefault(match.group(1), f"_{len(names)}")

    pk = _PLACEHOLDER_NAME.sub(rename, shape.pk.pattern)
    return pk, _PLACEHOLDER_NAME.sub(rename, shape.sk.pattern), shape.pk.separator + shape.sk.separator


def _sorts_between(prefix: str, low: str, high: str) -> bool:
    """Whether a key that starts with ``prefix`` can sort strictly between ``low`` and keys that start with
    ``high``: its prefix lies between them, or is a prefix of ``low`` itself (an id follows, of any value)."""
    return low < prefix < high or (low.startswith(prefix) and prefix < high)


def _candidates_for(candidates: Sequence[_Candidate], pk_head: str, sk_head: str) -> tuple[_Candidate, ...]:
    """The entities whose keys can have these heads (a template that starts with an id can have any)."""
    return tuple(
        candidate
        for candidate in candidates
        if candidate[0].primary.pk.head in (pk_head, None) and candidate[0].primary.sk.head in (sk_head, None)
    )


def _holds(item: Mapping[str, Any], identity: Mapping[str, str], partial: bool) -> bool:
    """Whether the item holds every constant of an entity (``partial``: every one it carries)."""
    return all(item.get(name) == value or (partial and name not in item) for name, value in identity.items())


def _restore_case(item: Mapping[str, Any], ids: dict[str, str], entity: Entity) -> None:
    """Ids that keys fold, in the case their stored copies keep (``Portland HQ`` for ``portland hq``), where the
    copy folds to the key's value."""
    for name, attribute in entity.stored_ids.items():
        stored, case = item.get(attribute), entity.folded_ids[name]
        if isinstance(stored, str) and name in ids and fold(stored, case) == fold(ids[name], case):
            ids[name] = stored


def _secondary_ids(
    item: Mapping[str, Any],
    ids: dict[str, str],
    secondary: tuple[tuple[Index, tuple[KeyShape, ...]], ...],
    folded: Mapping[str, Case],
) -> dict[str, str] | None:
    """The table key's ``ids`` with those the item's index keys hold; None when an index's keys contradict them
    (an id some key folds is compared in that case).

    DynamoDB puts an item in an index exactly when it holds every key attribute of that index, and that is all it
    says: any item may be absent from any index. In an index it is in, its keys must have one of the entity's
    shapes there and agree with its table key. Of an index it is not in, it may hold one key attribute (a game
    keeps its ``map``, the partition key, and loses ``open_timestamp``, the sort key, when it starts): the ids that
    attribute holds are read where it has its template's shape and agrees, and nothing else is asked of it.
    """
    for index, shapes in secondary:
        pk, sk = item.get(index.pk), _sort_key(item, index)
        if pk is None or sk is None:
            if pk is not None or sk is not None:
                _held_ids(ids, shapes, pk, sk)
            continue
        for shape in shapes:
            more = _parse_shape(shape, pk, sk)
            if more is not None and all(ids.get(name, value) == value for name, value in more.items()):
                ids.update(more)
                break
            if more is not None and folded and _agree_folded(ids, more, shape, folded):
                break
        else:
            return None
    return ids


def _agree_folded(ids: dict[str, str], more: dict[str, str], shape: KeyShape, folded: Mapping[str, Case]) -> bool:
    """Whether an index key's ids agree with ``ids`` once folded where a key folds them; if so they join ``ids``,
    an id this shape writes as given replacing its folded reading."""
    as_given = set(shape.fields) - set(shape.pk.cases) - set(shape.sk.cases)
    for name, value in more.items():
        known = ids.get(name, value)
        if known != value and (name not in folded or fold(known, folded[name]) != fold(value, folded[name])):
            return False
    ids.update({name: value for name, value in more.items() if name not in ids or name in as_given})
    return True


def _sort_key(item: Mapping[str, Any], index: Index) -> Any:
    """The item's sort key in ``index``: the empty text in an index without one (its shapes' ``NO_SORT_KEY``)."""
    return "" if index.sk is None else item.get(index.sk)


def _held_ids(ids: dict[str, str], shapes: tuple[KeyShape, ...], pk: object, sk: object) -> None:
    """Add to ``ids`` those of the one key attribute of an index the item holds (``pk`` or ``sk``, the other None),
    from the first shape it has that agrees with ``ids``."""
    for shape in shapes:
        template, value = (shape.pk, pk) if pk is not None else (shape.sk, sk)
        more = template.parse(value) if isinstance(value, str) else None
        if more is not None and all(ids.get(name, one) == one for name, one in more.items()):
            ids.update(more)
            return


def _parse_shape(shape: KeyShape, pk: object, sk: object) -> dict[str, str] | None:
    if not isinstance(pk, str) or not isinstance(sk, str):
        return None
    # Written out rather than with any() and merges: this runs for every item read.
    ids = shape.pk.parse(pk)
    if ids is None:
        return None
    sk_ids = shape.sk.parse(sk)
    if sk_ids is None:
        return None
    for name, value in sk_ids.items():
        if ids.setdefault(name, value) != value:
            return None
    return ids


def _mistakable(a: Entity, b: Entity) -> bool:
    """Whether one item's table key could have both entities' shapes: each key string meets both templates, judged
    exactly on what each field may hold (``{orderId}`` never holds ``#``, ``{n:05}`` only digits). The two keys of a
    self-keyed entity (``c#{id}`` twice) are one string, which then meets all four templates."""
    ka, kb = a.primary, b.primary
    if ka.pk == ka.sk or kb.pk == kb.sk:
        return ka.pk.meets(ka.sk, kb.pk, kb.sk)
    return ka.pk.meets(kb.pk) and ka.sk.meets(kb.sk)


def _validate(model: Model) -> frozenset[Entity]:
    """Refuse what cannot be served; the entities that share a key shape with another, told apart by their
    discriminators."""
    names = [index.name for index in model.indexes]
    if None not in names or len(set(names)) != len(names):
        raise ValueError("a model has the table's key (index None) and uniquely named indexes")
    indexes = {index.name: index for index in model.indexes}
    for index in model.indexes:
        if index.local:
            _validate_local(index, indexes[None])
    entity_names = [entity.name for entity in model.entities]
    if len(set(entity_names)) != len(entity_names):
        raise ValueError("entity names must be unique")
    for entity in model.entities:
        _validate_type_name(entity)
    for entity in model.entities:
        if None not in entity.keys:
            raise ValueError(f"{entity.name}: every entity has a table key")
        for index_name, shape in entity.keys.items():
            if index_name not in names:
                raise ValueError(f"{entity.name}: unknown index {index_name!r}")
            _validate_shards(entity, shape)
            for one in entity.shapes(index_name):
                _validate_sort_key(entity, indexes[index_name], one)
                if indexes[index_name].local and one.pk != entity.primary.pk:
                    raise ValueError(
                        f"{entity.name}: {index_name!r} is a local index, keyed by the table's partition key: its shape"
                        f" has the table key's partition template, KeyShape.of({entity.primary.pk.pattern!r},"
                        f" {one.sk.pattern!r})"
                    )
        _validate_key_attributes(model, entity)
        _validate_typed_keys(indexes, entity)
    shared: set[Entity] = set()
    stored = [entity for entity in model.entities if not entity.partition]  # no item of a partition is mistaken
    for i, a in enumerate(stored):
        for b in stored[i + 1 :]:
            if _mistakable(a, b):
                _validate_told_apart(a, b)
                shared.update((a, b))
    owners: list[tuple[str, Entity]] = [(c.name, c.parent) for c in model.collections]
    owners += [(link.name, link.source) for link in model.links]
    for name, owner in owners:
        type_name, _, field_name = name.partition(".")
        if type_name != owner.name or not field_name.isidentifier():
            raise ValueError(f"{name}: a relation is named <{owner.name}>.<field>")
    relation_names = [name for name, _ in owners]
    if len(set(relation_names)) != len(relation_names):
        raise ValueError("relation names must be unique")
    # Reads through an unknown index are refused below, naming the relation.
    for collection in model.collections:
        if collection.index in indexes:
            _validate_projection(collection.name, indexes[collection.index], indexes[None], collection.members)
    for lookup in model.lookups:
        if lookup.index in indexes:
            _validate_projection(f"lookup {lookup.name!r}", indexes[lookup.index], indexes[None], (lookup.entity,))
    for collection in model.collections:
        read = indexes.get(collection.index)
        if collection.consistent and read is not None and read.name is not None and not read.local:
            raise ValueError(
                f"{collection.name}: {collection.index!r} is a global secondary index, which DynamoDB reads eventually"
                f" consistent only: drop consistent=True, or read it from a local index (Index(..., local=True))"
            )
        if collection.counter is not None and collection.counter not in collection.parent.attributes:
            raise ValueError(f"{collection.name}: the counter {collection.counter!r} is not an attribute of the parent")
        if collection.is_union:
            _validate_union(model, collection)
            continue
        if collection.counter is not None:
            _validate_counter(collection, collection.counter)
        if collection.entity.partition or (collection.target is not None and collection.target.partition):
            raise ValueError(f"{collection.name}: {collection.entity.name} has no items to list")
        if collection.index not in collection.entity.keys:
            raise ValueError(
                f"{collection.name}: {collection.entity.name} has no keys in index {collection.index!r};"
                " reading it would need a Scan"
            )
        member_shape = collection.member_shape
        if member_shape not in collection.entity.shapes(collection.index):
            raise ValueError(f"{collection.name}: its shape is none of {collection.entity.name}'s in that index")
        _validate_partition(collection, member_shape)
        sparse = {collection.partition.get(name, name) for name in member_shape.pk.fields}
        sparse &= collection.parent.optional_id_fields
        if sparse:
            raise ValueError(
                f"{collection.name}: the partition key {member_shape.pk.pattern!r} needs {sorted(sparse)}, which"
                f" {collection.parent.name} holds only in a sparse index: declare that index's keys not sparse"
            )
        if collection.counter is not None and member_shape.sparse:
            raise ValueError(
                f"{collection.name}: {collection.entity.name} is sparse in {collection.index!r}, so no counter can"
                " follow its members: drop counter= or declare the member's keys there not sparse"
            )
        if collection.target is not None:
            _validate_edges(collection, collection.target, member_shape)
        _validate_levels(collection, member_shape)
        _validate_range(collection, member_shape)
        if collection.range is not None and indexes[collection.index].sk_type == "B":
            raise ValueError(
                f"{collection.name}: range={collection.range!r} on a binary sort key, whose order is its bytes' and"
                " not its base64 text's: drop range="
            )
        if collection.shards > 1 and (collection.levels or collection.index is not None):
            # A GSI's ExclusiveStartKey holds a table key too, which no one position gives for every shard.
            raise ValueError(f"{collection.name}: a sharded collection is read from the table's key, without levels")
    reads: dict[tuple[Entity, Entity, tuple[tuple[str, str], ...]], str] = {}
    for link in model.links:
        roles = _validate_roles(link.name, link.ids, link.source, link.target)
        if link.target is link.source and all(name == role for name, role in roles):
            raise ValueError(
                f"{link.name}: reads {link.target.name} by its own ids, so it is always the {link.source.name} itself;"
                f" say which id holds the other's with ids={{{link.target.id_fields[0]!r}: '<id of the other>'}}"
            )
        same = reads.setdefault((link.source, link.target, roles), link.name)
        if same != link.name:
            raise ValueError(
                f"{same} and {link.name} both read {link.target.name} by {dict(roles)} (target id: source id), so"
                " they always answer the same object: map each one's ids by role with ids="
            )
    for copy in model.copies:
        _validate_copy(model, copy)
    _validate_folded(model)
    key_names = {name for index in model.indexes for name in index.attributes}
    for entity in model.entities:
        clash = sorted(key_names & set(entity.identity))
        if clash:
            raise ValueError(f"{entity.name}: {clash[0]!r} is a key attribute, not a constant: drop it from constants")
    for entity in model.entities:
        if isinstance(entity.minted, Numbering):
            _validate_numbering(model, entity, entity.minted)
    # Each root field's name, and what has it: a refusal names the owner.
    taken = {lower_camel(entity.name): f"{entity.name}'s root field" for entity in model.entities}
    taken |= {f"{lower_camel(entity.name)}s": f"{entity.name}'s list by ids" for entity in model.entities}
    taken |= {"node": "the global id field", "nodes": "the global ids field"}
    for lookup in model.lookups:
        _validate_lookup(model, lookup, taken)
        taken[lookup.name] = f"the lookup {lookup.name}"
    for collection in model.collections:
        if collection.root is not None:
            _validate_root(collection, collection.root, taken)
            taken[collection.root] = f"{collection.name}'s root connection"
    return frozenset(shared)


def _validate_key_attributes(model: Model, entity: Entity) -> None:
    """A declared attribute that is also an index's key attribute is that key itself (``{LastPaymentDate}``, or the
    id it copies): a key written from any other template would store a second value in the same attribute."""
    indexes = {index.name: index for index in model.indexes}  # validated before the model keeps them
    for name, shapes in ((name, entity.shapes(name)) for name in entity.keys if name is not None):
        index = indexes[name]
        for shape in shapes:
            for attribute, template in zip(index.attributes, (shape.pk, shape.sk), strict=False):
                spec = entity.declared.get(attribute)
                if spec is not None and template.pattern not in (f"{{{attribute}}}", f"{{{spec.from_id}}}"):
                    raise ValueError(
                        f"{entity.name}: {attribute!r} is a declared attribute and the key attribute of {name!r},"
                        f" written from {template.pattern!r}: one attribute cannot hold both; drop {attribute!r}"
                        f" from the attributes, or write the key as '{{{attribute}}}'"
                    )


def _validate_type_name(entity: Entity) -> None:
    """An entity's name is its GraphQL type's: a GraphQL name, and none the surface defines itself."""
    if entity.internal:
        return
    if not _TYPE_NAME.fullmatch(entity.name):
        raise ValueError(
            f"{entity.name}: an entity's name is its GraphQL type's, so it is a letter then letters, digits or _;"
            " rename the entity (the stored items do not hold its name)"
        )
    if entity.name in SURFACE_TYPE_NAMES:
        raise ValueError(
            f"{entity.name}: the GraphQL schema already has a type named {entity.name!r} of its own; rename the"
            f" entity (e.g. Account{entity.name}: the stored items do not hold its name, a discriminator's value"
            " stays as it is)"
        )


def _validate_typed_keys(indexes: Mapping[str | None, Index], entity: Entity) -> None:
    """A number or binary key holds one value and no text: each of the entity's templates on one is a single plain
    field (``{ts}``), an id or, in a secondary index's sort key, an INT attribute of a number key."""
    for name, shapes in ((name, entity.shapes(name)) for name in entity.keys):
        index = indexes[name]
        for shape in shapes:
            keys = ((index.pk, index.pk_type, shape.pk, "pk"), (index.sk, index.sk_type, shape.sk, "sk"))
            for attribute, kind, template, part in keys:
                # A partition's sort key is never written; an index without a sort key has no template there.
                if kind == "S" or attribute is None or (entity.partition and part == "sk"):
                    continue
                _validate_typed_template(entity, index, attribute, kind, template, part)


def _validate_typed_template(
    entity: Entity, index: Index, attribute: str, kind: KeyType, template: KeyTemplate, part: str
) -> None:
    where = f"{entity.name}: {attribute} is a {'number' if kind == 'N' else 'binary'} key ({kind})"
    where += "" if index.name is None else f" of index {index.name!r}"
    one = template.fields[0] if template.fields else "id"
    if template.is_constant:  # one item's key (a series' head at 0, the gateway's records): a value of the type
        try:
            constant = key_text(kind, key_value(kind, template.pattern))
        except BadUserInput:
            constant = None
        if constant == template.pattern:
            return
    if template.pattern != f"{{{one}}}":
        raise ValueError(
            f"{where}, which holds one value and no text, so its template is one field alone (or one constant"
            f" {'whole number' if kind == 'N' else 'base64 value'}), not"
            f" {template.pattern!r}: write {part}='{{{one}}}' (YAML: {part}: '{{{one}}}'), or declare {attribute} text"
            f" ({part}_type='S'; YAML: {part}_type: S)"
        )
    spec = entity.declared.get(one)
    if spec is not None and spec.from_id is None and (kind != "N" or spec.type != "INT"):
        raise ValueError(
            f"{where}: it holds the attribute {one}, so {one} is a number: declare it INT"
            f" ({one!r}: 'INT'; YAML: {one}: INT)"
            if kind == "N"
            else f"{where}: it holds ids only, and {one} is an attribute: make it an id by dropping it from attributes"
        )


def _validate_counter(collection: Collection, counter: str) -> None:
    """A member count is a whole number only the gateway writes: one a client could set would be served as
    ``totalCount`` whatever it holds."""
    spec = collection.parent.declared[counter]
    where = f"{collection.name}: the counter {collection.parent.name}.{counter}"
    fix = f"declare it {counter!r}: Attribute('INT', writable=False) (YAML: {counter}: {{type: INT, writable: false}})"
    if spec.type != "INT" or spec.text:
        stored = f"{spec.type} stored as text" if spec.text else spec.type
        raise ValueError(f"{where} is {stored}, and a count is a whole number the gateway keeps: {fix}")
    if spec.writable or spec.from_id is not None or spec.on_create is not None:
        raise ValueError(
            f"{where} is written by clients (or copied), so totalCount would answer whatever was set: only the"
            f" gateway writes a counter; {fix}"
        )
    if spec.default not in (None, 0):
        raise ValueError(f"{where} counts members from 0, not from its default {spec.default!r}: drop default=")
    member = collection.entity
    unknown = [name for name in collection.parent_fields if name not in member.all_id_fields]
    if unknown:
        # A member's write moves its parent's count in the same transaction: it must name the parent's key alone.
        raise ValueError(
            f"{where} is moved by each {member.name}'s write, which must name its {collection.parent.name}'s key,"
            f" but no key of {member.name} holds {', '.join(unknown)}: add them to {member.name}'s keys (or"
            f" map them by role with partition=), or drop counter="
        )


def _validate_root(collection: Collection, name: str, taken: Mapping[str, str]) -> None:
    """A root connection has a root field name of its own, and lists served entities."""
    if not name.isidentifier():
        raise ValueError(f"{collection.name}: its root field {name!r} is no GraphQL name: give root= a name of its own")
    if name in taken:
        raise ValueError(
            f"{collection.name}: its root field {name!r} is taken by another root field ({taken[name]}): give root= a"
            " name of its own"
        )
    arguments = RANGE_CLASHES | {graphql_name(one) for one in (*collection.levels, collection.range) if one}
    clashes = sorted(graphql_name(one) for one in collection.parent.id_fields if graphql_name(one) in arguments)
    if clashes:
        raise ValueError(
            f"{collection.name}: the root field {name!r} would take {clashes} twice, as the {collection.parent.name}'s"
            " ids and as connection arguments: list it under its parent only (drop root=)"
        )
    ends = (collection.parent, *collection.members, collection.target)
    internal = [one.name for one in ends if one and one.internal]
    if internal:
        raise ValueError(
            f"{collection.name}: {', '.join(internal)} is internal, so the connection is not served: drop root="
        )


def _validate_lookup(model: Model, lookup: Lookup, taken: Mapping[str, str]) -> None:
    """A lookup reads one index key, formatted whole from its arguments, of an entity that has keys there."""
    entity, where = lookup.entity, f"lookup {lookup.name!r}"
    if entity not in model.entities or entity.internal:
        raise ValueError(f"{where}: {entity.name} is not a served entity of the model")
    if not lookup.name.isidentifier() or lookup.name in taken:
        raise ValueError(f"{where}: a root field needs a name of its own (taken: the entities' and other lookups')")
    if lookup.index not in entity.keys or lookup.index is None:
        raise ValueError(
            f"{where}: {entity.name} has no keys in index {lookup.index!r}: a lookup reads a secondary index the"
            " entity has keys in"
        )
    shape = lookup.shape
    values = entity.indexed_attributes & shape.fields
    if values:
        raise ValueError(
            f"{where}: {sorted(values)} in {shape.sk.pattern!r} are values, not ids: a lookup names one item by ids"
        )
    if shape.pk.shards > 1:
        raise ValueError(f"{where}: {shape.pk.pattern!r} is sharded; a lookup reads one partition")
    if set(shape.fields) >= set(entity.id_fields):
        raise ValueError(
            f"{where}: its ids {sorted(shape.fields)} hold {entity.name}'s whole table key: the root field"
            f" {lower_camel(entity.name)!r} reads it by key, without a Query"
        )


def _validate_minted(entity: Entity) -> None:
    """A minted id is made by the gateway: text (a time or a ULID) is never written where a key holds a number."""
    minted = entity.minted
    if not isinstance(minted, Numbering) and minted not in ("time", "ulid"):
        raise ValueError(f"{entity.name}: minted={minted!r}: an id is minted as 'time', 'ulid' or a Numbering")
    if entity.mint is None:
        if minted != "time":
            raise ValueError(f"{entity.name}: minted= says how an id is minted; name that id with mint=")
        return
    dated = [one.pattern for shape in entity._all_shapes for one in (shape.pk, shape.sk) if entity.mint in one.dates]
    if dated:
        raise ValueError(
            f"{entity.name}.{entity.mint}: a minted id is no date, and {dated[0]!r} writes it as one: write it"
            " {" + entity.mint + "}, or let creates give it (drop mint=)"
        )
    padded = [shape.pk.pattern for shape in entity._all_shapes if entity.mint in shape.pk.numbers]
    padded += [shape.sk.pattern for shape in entity._all_shapes if entity.mint in shape.sk.numbers]
    if padded and not isinstance(minted, Numbering):
        raise ValueError(
            f"{entity.name}.{entity.mint}: a {minted} id is text, and {padded[0]!r} writes it as a zero-padded"
            " number: write it {" + entity.mint + "}, or mint it from a counter (minted=Numbering(...))"
        )


def _validate_numbering(model: Model, entity: Entity, numbering: Numbering) -> None:
    """A number is taken from a counter the gateway keeps on a parent item that the new item's ids name."""
    where = f"{entity.name}.{entity.mint}: numbered from {numbering.parent}.{numbering.counter}"
    parent = next((one for one in model.entities if one.name == numbering.parent), None)
    if parent is None or parent.partition or parent.internal:
        raise ValueError(f"{where}: {numbering.parent} is no entity of the model with items to hold the counter")
    spec = parent.declared.get(numbering.counter)
    if spec is None or spec.type not in ("INT", "N") or spec.writable or spec.text:
        raise ValueError(
            f"{where}: the counter must be a number the gateway keeps on {parent.name}: declare"
            f" {numbering.counter!r}: Attribute('INT', writable=False) among {parent.name}'s attributes"
        )
    counted = [c.name for c in model.collections if c.parent is parent and c.counter == numbering.counter]
    if counted:
        raise ValueError(f"{where}: that attribute counts {counted[0]}'s members; a sequence needs its own")
    unknown = sorted(set(numbering.ids) - set(parent.id_fields))
    if unknown:
        raise ValueError(f"{where}: ids maps {unknown}, which are not ids of {parent.name}'s table key")
    given = entity.all_id_fields - {entity.mint}
    missing = [
        f"{name}={numbering.ids.get(name, name)}"
        for name in parent.id_fields
        if numbering.ids.get(name, name) not in given
    ]
    if missing:
        raise ValueError(
            f"{where}: its other ids lack {parent.name}'s {', '.join(missing)}, so no parent item is known to"
            f" number it from: put {parent.name}'s ids in {entity.name}'s keys, name the id that holds each with"
            " ids={'<parent id>': '<id>'}, or mint it as 'time' or 'ulid'"
        )


def _validate_told_apart(a: Entity, b: Entity) -> None:
    """Two entities whose table keys could be the same string are told apart by a constant attribute's value."""
    told, other = a.identity, b.identity
    if any(name in other and other[name] != value for name, value in told.items()):
        return
    keys = f"{a.primary.pk.pattern!r}/{a.primary.sk.pattern!r} and {b.primary.pk.pattern!r}/{b.primary.sk.pattern!r}"
    raise ValueError(
        f"{a.name} and {b.name} have key shapes that can be mistaken for each other ({keys}): give their keys"
        " different literal text, or give both a discriminator (or a constant) on the same attribute with different"
        f" values (discriminator=('EntityType', {a.name.lower()!r}) and ('EntityType', {b.name.lower()!r}))"
    )


def _validate_stamp(spec: Attribute) -> None:
    """A time the gateway keeps is written as its type holds it: text as ISO-8601, a number as epoch seconds or
    milliseconds (a millisecond epoch is past what an INT holds)."""
    if spec.on_create != "now" and spec.on_update is None:
        if spec.clock is not None:
            raise ValueError("clock= says how a time the gateway keeps is written: give on_create= or on_update='now'")
        return
    if spec.on_create is not None and spec.on_update is not None:
        raise ValueError("on_update='now' stamps creates too: drop on_create=")
    if spec.required or spec.default is not None or spec.text or spec.enum is not None:
        raise ValueError("a time the gateway keeps has no required=, default=, text= or enum=")
    clocks: dict[AttributeType, tuple[Clock | None, ...]] = {
        "S": (None, "iso"),
        "N": ("seconds", "milliseconds"),
        "INT": ("seconds",),
    }
    if spec.clock not in clocks.get(spec.type, ()):
        raise ValueError(
            f"a time kept as {spec.type} is written with clock= one of"
            f" {[one for one in clocks.get(spec.type, ()) if one]}: an S as clock='iso', an N as clock='seconds' or"
            " 'milliseconds' (milliseconds are past what an INT holds: declare it 'N')"
        )


def _validate_constants(entity: Entity) -> None:
    """Constants are text the gateway writes, under names of their own: no declared attribute, no discriminator."""
    for name, value in entity.constants.items():
        where = f"{entity.name}: the constant {name!r}"
        if not isinstance(value, str) or not value:
            raise ValueError(f"{where} holds text, as every item stores it: constants={{{name!r}: '1'}}")
        if name in entity.attributes:
            raise ValueError(f"{where} is written by the gateway, not a declared attribute: drop it from attributes")
        if entity.discriminator is not None and entity.discriminator[0] == name:
            raise ValueError(f"{where} is the discriminator's attribute too: declare it once, in one of them")


def _validate_folded(model: Model) -> None:
    """An id served folded (no key the item always has writes it as given, no stored copy keeps its case) is never
    passed to a key that writes it as given: the key formatted from ``us`` would not be the stored ``US`` one, and
    the read would find nothing."""
    for entity in model.entities:
        both = [
            name
            for name in sorted(entity.served_folded)
            if entity.folded_ids[name] == "lower" and _folds_up(entity, name)
        ]
        if both:
            raise ValueError(
                f"{entity.name}.{both[0]}: its keys write it lower-cased in one place and upper-cased in another,"
                f" so neither serves it: keep its case in a stored copy ({both[0]}: Attribute('S',"
                f" from_id={both[0]!r}))"
            )
    pairs: list[tuple[str, Entity, Entity, Mapping[str, str]]] = []  # (relation, from, to, {to's id: from's id})
    for collection in model.collections:
        for member in collection.members:
            pairs.append((collection.name, collection.parent, member, collection.partition))
            pairs.append((collection.name, member, collection.parent, {v: k for k, v in collection.partition.items()}))
        if collection.target is not None:
            pairs.append((collection.name, collection.entity, collection.target, collection.ids))
    pairs += [(link.name, link.source, link.target, link.ids) for link in model.links]
    for relation, source, target, roles in pairs:
        for name in target.all_id_fields:
            given = roles.get(name, name)
            if given not in source.served_folded or given not in source.all_id_fields:
                continue
            plain = [
                template.pattern
                for shape in target._all_shapes
                for template in (shape.pk, shape.sk)
                if name in template.fields and name not in template.cases
            ]
            if plain:
                case = source.folded_ids[given]
                raise ValueError(
                    f"{relation}: {source.name}'s keys hold {given} {case}-cased only, and {target.name}'s key"
                    f" {plain[0]!r} holds {name} as given, so the {case}-cased id would find nothing there: keep its"
                    f" case in a stored copy on {source.name} ({given}: Attribute('S', from_id={given!r})), or write"
                    f" it {{{name}:{case}}} in {plain[0]!r}"
                )


def _folds_up(entity: Entity, name: str) -> bool:
    return any(template.cases.get(name) == "upper" for shape in entity._all_shapes for template in (shape.pk, shape.sk))


_KEY_ATTRIBUTE_TYPES = ("S", "DATE", "INT")


def indexed_values(entity: Entity, attributes: Mapping[str, Any]) -> dict[str, str]:
    """The values among ``attributes`` that ``entity``'s index keys hold, as key text; BadUserInput for one that a
    key segment cannot hold (a separator, a control character), before any request."""
    return {
        name: validate_id(str(attributes[name]), graphql_name(name))
        for name in entity.indexed_attributes
        if attributes.get(name) is not None
    }


def _validate_indexed_attributes(entity: Entity, index: str | None, shape: KeyShape) -> None:
    """An attribute in a key is a value an index is sorted by: in a secondary index's sort key only, of a type
    that is text in a key, and present whenever the item is in the index."""
    where = f"{entity.name}: {{name}} is an attribute, in the key {{pattern!r}}"
    for name in (*shape.pk.fields, *(shape.sk.fields if index is None else ())):
        if name in entity.indexed_attributes or (name in entity.declared and entity.declared[name].from_id is None):
            pattern = shape.pk.pattern if name in shape.pk.fields else shape.sk.pattern
            raise ValueError(
                where.format(name=name, pattern=pattern)
                + ": an attribute may only be in a secondary index's sort key (the table key is the item's identity,"
                " a partition is found from ids); drop it from the attributes to make it an id"
            )
    for name in shape.sk.fields:
        spec = entity.declared.get(name)
        if spec is None or spec.from_id is not None:
            continue
        where_ = where.format(name=name, pattern=shape.sk.pattern)
        if spec.type not in _KEY_ATTRIBUTE_TYPES or spec.shape is not None:
            raise ValueError(f"{where_}: a key holds text, so it is one of {_KEY_ATTRIBUTE_TYPES}, not {spec.type}")
        if not spec.writable:
            raise ValueError(f"{where_}: the gateway keeps it (writable=False) without moving the item in {index!r}")
        if not shape.sparse and not spec.required and spec.on_create is None and spec.on_update is None:
            raise ValueError(
                f"{where_}: every item is in {index!r}, so every item needs it: declare it required=True, or the"
                " index's keys sparse=True"
            )


def _validate_roles(
    relation: str, ids: Mapping[str, str], source: Entity, target: Entity
) -> tuple[tuple[str, str], ...]:
    """Which id of ``source`` supplies each id of ``target``: (target id, source id), checked to exist."""
    unknown = set(ids) - set(target.id_fields)
    if unknown:
        raise ValueError(f"{relation}: ids maps {sorted(unknown)}, which are not ids of {target.name}'s table key")
    roles = tuple((name, ids.get(name, name)) for name in target.id_fields)
    missing = [f"{name}={role}" for name, role in roles if role not in source.all_id_fields]
    if missing:
        raise ValueError(
            f"{relation}: the target's ids must be among the source's ids, and {source.name} has no"
            f" {', '.join(missing)}: name the id of {source.name} that holds each with ids={{'<target id>': '<id>'}}"
        )
    return roles


def _validate_partition(collection: Collection, shape: KeyShape) -> None:
    """The members' partition is known from the parent's ids, by role where ``partition`` says, by name elsewhere;
    with roles named, a parent's id that only shares its name with a member's is refused, not matched."""
    parent = collection.parent
    unknown = set(collection.partition) - set(shape.pk.fields)
    if unknown:
        raise ValueError(f"{collection.name}: partition maps {sorted(unknown)}, not ids of {shape.pk.pattern!r}")
    missing = [
        f"{name}={collection.partition.get(name, name)}"
        for name in shape.pk.fields
        if collection.partition.get(name, name) not in parent.all_id_fields
    ]
    if missing:
        raise ValueError(
            f"{collection.name}: the partition key must be known from the parent's ids, and {parent.name} has no"
            f" {', '.join(missing)}: name the id of {parent.name} that holds each with"
            " partition={'<member id>': '<parent id>'}"
        )
    for member in collection.members if collection.partition else ():
        clash = parent.all_id_fields & set(shape.pk.fields) - set(collection.partition)
        if clash:
            raise ValueError(
                f"{collection.name}: {sorted(clash)} name ids of both {parent.name} and {member.name}, and partition"
                " maps others by role: map these too (partition={'<member id>': '<parent id>'}) or rename one"
            )


def _validate_edges(collection: Collection, target: Entity, shape: KeyShape) -> None:
    """Edge items carry the target's ids, and not the ones their partition fixes: every edge would be the same."""
    try:
        roles = _validate_roles(collection.name, collection.ids, collection.entity, target)
    except ValueError as error:
        raise ValueError(f"{error} (edge items must carry the target's ids)") from None
    if all(role in shape.pk.fields for _, role in roles):
        raise ValueError(
            f"{collection.name}: every edge reads {target.name} by {dict(roles)}, which the partition"
            f" {shape.pk.pattern!r} fixes, so every edge would be the same {target.name}: name the edge's id that"
            " holds the target's with ids={'<target id>': '<edge id>'}"
        )


def _shared_prefix(texts: Sequence[str]) -> str:
    """The longest text every one of ``texts`` starts with."""
    first, last = min(texts), max(texts)
    size = next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last)))
    return first[:size]


_NOT_ON_UNIONS = (
    ("target", "edges to a target"),
    ("counter", "a counter (its members are counted by kind)"),
    ("levels", "levels"),
    ("filters", "filters (each kind has its own attributes)"),
    ("shape", "a shape"),
    ("range", "a range"),
)


def _validate_union_declaration(collection: Collection) -> None:
    """What a union connection is declared with: two entities or more, once each, and none of the options that
    read or count one entity's members (each is refused here, naming the option to drop)."""
    members = collection.members
    if len(members) < 2 or len(set(members)) != len(members):
        raise ValueError(
            f"{collection.name}: a union connection lists two entities or more, each once; for one entity, give it"
            " as member= alone"
        )
    for option, what in _NOT_ON_UNIONS:
        if getattr(collection, option):
            raise ValueError(
                f"{collection.name}: a union connection of {', '.join(one.name for one in members)} has no {what}:"
                f" drop {option}=, or declare a collection of one entity for it"
            )
    name = collection.union_name
    if not name.isidentifier() or name[:1].islower():
        raise ValueError(f"{collection.name}: the union's type name {name!r} is no GraphQL type name: give union=")


def _validate_union(model: Model, collection: Collection) -> None:
    """A union is one Query of the parent's partition: its members share that partition key, have their items in
    the index, and every entity whose items can sort in the range read is one of them. Otherwise the Query would
    read items it cannot serve, and a page's Limit would count them."""
    where, index = collection.name, collection.index
    if collection.union_name in {entity.name for entity in model.entities}:
        raise ValueError(f"{where}: its union's type name {collection.union_name!r} is an entity's: give union=")
    for member in collection.members:
        if member.partition:
            raise ValueError(f"{where}: {member.name} has no items to list: drop it from the union")
        if index not in member.keys:
            raise ValueError(
                f"{where}: {member.name} has no keys in index {index!r}: a union reads one partition of one index;"
                " drop it from the union"
            )
        if index is not None and member.variants.get(index):
            raise ValueError(
                f"{where}: {member.name} has variant shapes in {index!r}: list it in a collection of its own"
            )
    first = collection.member_shape
    for member, shape in zip(collection.members, collection.shapes, strict=True):
        if shape.pk.pattern != first.pk.pattern or shape.pk.separator != first.pk.separator:
            raise ValueError(
                f"{where}: {member.name}'s partition key {shape.pk.pattern!r} is not"
                f" {collection.members[0].name}'s {first.pk.pattern!r}: a union lists members of one partition"
            )
    if first.pk.shards > 1:
        raise ValueError(f"{where}: {first.pk.pattern!r} is sharded; a union reads one partition")
    _validate_partition(collection, first)
    sparse = {collection.partition.get(name, name) for name in first.pk.fields} & collection.parent.optional_id_fields
    if sparse:
        raise ValueError(
            f"{where}: the partition key {first.pk.pattern!r} needs {sorted(sparse)}, which"
            f" {collection.parent.name} holds only in a sparse index: declare that index's keys not sparse"
        )
    _validate_union_complete(model, collection)


def _validate_union_complete(model: Model, collection: Collection) -> None:
    """Every entity whose items can be in the partition and sort after the members' shared prefix is a member,
    the parent's own item too: judged on the templates' literal text, so a key the ids may make differ is counted
    as possible."""
    partition = collection.member_shape.pk
    shared = _shared_prefix([shape.sk.literal_prefix for shape in collection.shapes])
    for entity in model.entities:
        if entity in collection.members or entity.partition or collection.index not in entity.keys:
            continue
        for shape in entity.shapes(collection.index):
            if not shape.pk.meets(partition):
                continue
            head = shape.sk.pattern if shape.sk.is_constant else shape.sk.literal_prefix
            if head.startswith(shared) or shared.startswith(head):
                sk = f"{shape.pk.pattern!r}/{shape.sk.pattern!r}"
                raise ValueError(
                    f"{collection.name}: {entity.name}'s items ({sk}) can sort among the union's members in"
                    f" {partition.pattern!r}, so its Query would read them and a page would count them: add"
                    f" {entity.name} to the union's members, or give the members' sort keys a shared prefix it"
                    " does not have"
                )


SERVED_WITH_EVERY_ITEM = ("version",)
"""What every object is served with besides its declared attributes: the version a write expects."""


def _validate_projection(where: str, index: Index, table: Index, entities: tuple[Entity, ...]) -> None:
    """A read through an index serves its members from the index alone: what it does not project would be served
    as null, so it is refused. Every index projects the table's keys and its own."""
    if index.projection == "ALL":
        return
    projected = set() if index.projection == "KEYS_ONLY" else set(index.projection)
    keys = {*table.attributes, *index.attributes}
    wanted = [
        *(name for one in entities for name in one.declared),
        *(one.discriminator[0] for one in entities if one.discriminator is not None),
        *SERVED_WITH_EVERY_ITEM,
    ]
    missing = sorted(set(wanted) - projected - keys)
    if missing:
        listed = ", ".join(repr(name) for name in sorted(projected | set(missing)))
        raise ValueError(
            f"{where}: index {index.name!r} does not project {missing}, which it would serve as null: project them"
            f" (projection=({listed}) in Python, projection: [{listed.replace(chr(39), '')}] in a file), or project"
            " ALL; reading the rest from the table is not supported yet"
        )


def _validate_local(index: Index, table: Index) -> None:
    """A local index shares the table's partition key and sorts its partitions by another attribute."""
    if index.name is None or table.sk is None or index.pk != table.pk or index.sk in (None, table.sk):
        raise ValueError(
            f"index {index.name!r}: a local index has the table's partition key and a sort key of its own, in a table"
            f" with a sort key: Index({index.name!r}, {table.pk!r}, '<another sort key attribute>', local=True)"
        )


def _validate_sort_key(entity: Entity, index: Index, shape: KeyShape) -> None:
    """A shape has a sort key template exactly when its index has a sort key attribute."""
    where = "the table" if index.name is None else f"index {index.name!r}"
    if index.sk is None and shape.sorted:
        raise ValueError(
            f"{entity.name}: {where} has a partition key alone ({index.pk!r}), so its key shape has no sort key:"
            f" KeyShape.of({shape.pk.pattern!r}) without {shape.sk.pattern!r}, or give the index its sort key"
            f" attribute (Index({index.name!r}, {index.pk!r}, '<sort key attribute>'))"
        )
    if index.sk is not None and not shape.sorted:
        raise ValueError(
            f"{entity.name}: {where} sorts by {index.sk!r}, so its key shape needs a sort key template:"
            f" KeyShape.of({shape.pk.pattern!r}, '<template of {index.sk}>')"
        )


def _validate_shards(entity: Entity, shape: KeyShape) -> None:
    """A shard is picked by an id of the sort key: the sort key then tells apart, and orders, items of every shard,
    so a sharded page merges its Queries by sort key alone and one sort key resumes each of them."""
    if shape.sk.sharded_by is not None:
        raise ValueError(f"{entity.name}: a shard segment belongs in the partition key, not in {shape.sk.pattern!r}")
    sharded_by = shape.pk.sharded_by
    if sharded_by is not None and sharded_by not in shape.sk.fields:
        raise ValueError(f"{entity.name}: {shape.pk.pattern!r} shards by {sharded_by!r}, which its sort key lacks")


def _validate_levels(collection: Collection, shape: KeyShape) -> None:
    """Levels are the sort key's ids right after those the parent fixes, and the member's own id comes last."""
    if not collection.levels:
        return
    if {graphql_name(level) for level in collection.levels} & {"first", "after", "last", "before"}:
        raise ValueError(f"{collection.name}: a level may not be named like a pagination argument")
    fields = shape.sk.fields
    fixed = [name for name in fields if name in collection.parent.all_id_fields]
    if list(fields[: len(fixed)]) != fixed:
        raise ValueError(f"{collection.name}: the parent's ids must lead the sort key {shape.sk.pattern!r}")
    free = fields[len(fixed) :]
    if collection.levels != free[: len(collection.levels)] or len(collection.levels) >= len(free):
        raise ValueError(
            f"{collection.name}: levels {collection.levels!r} must be the ids of {shape.sk.pattern!r} that follow"
            " the parent's, in order, with the member's own id after them"
        )


RANGE_CLASHES = frozenset({"first", "after", "last", "before", "order", "where"})
"""The connection arguments a range argument, or a root connection's parent id, may not be named like."""


def _validate_range(collection: Collection, shape: KeyShape) -> None:
    """A range is read by one key condition: on the sort key's last field (as is, or a padded number), after text
    the parent's ids fix."""
    name = collection.range
    if name is None:
        return
    pattern = shape.sk.pattern
    where = f"{collection.name}: range={name!r}"
    if name not in shape.sk.fields:
        raise ValueError(f"{where} is not a field of the members' sort key {pattern!r}")
    if not re.fullmatch(r".*\{" + re.escape(name) + r"(?::(?:0[1-9][0-9]*|date))?\}", pattern):
        raise ValueError(
            f"{where}: the sort key {pattern!r} must end with {{{name}}} (or a zero-padded {{{name}:05}}, or a"
            f" {{{name}:date}}), with nothing after it, for a range of its values to be a range of keys"
        )
    if collection.shards > 1:
        raise ValueError(f"{where}: a range is read from one partition")
    # Levels fix the ids before it when given, and a range is refused without them (``key_range``).
    before = [one for one in shape.sk.fields if one != name and one not in collection.levels]
    unknown = [one for one in before if collection.partition.get(one, one) not in collection.parent.all_id_fields]
    if unknown:
        raise ValueError(
            f"{where}: {sorted(unknown)} come before it in {pattern!r} and the parent does not fix them, so the"
            " range would not be one stretch of keys: make them levels (levels=(...)), given with the range"
        )
    if graphql_name(name) in RANGE_CLASHES:
        raise ValueError(f"{where}: the argument would be named like a connection argument")


def _validate_copy(model: Model, copy: Copy) -> None:
    collection = copy.collection
    if collection.is_union:
        raise ValueError(
            f"{copy.collection.name}: a union connection keeps no copies; copy {copy.source!r} through a collection"
            " of one entity"
        )
    where = f"{collection.entity.name}.{copy.attribute}"
    if collection not in model.collections:
        raise ValueError(f"{where}: copies through {collection.name}, which is not a collection of the model")
    target = collection.entity.declared.get(copy.attribute)
    source = collection.parent.declared.get(copy.source)
    if target is None or source is None:
        raise ValueError(f"{where}: both the copy and {collection.parent.name}.{copy.source} must be declared")
    if target.is_input or target.type != source.type:
        raise ValueError(f"{where}: a copy is not an input (writable=False) and has its source's type")


def attribute_values(entity: Entity, item: Item) -> dict[str, Any]:
    """The entity's declared attributes as plain values, absent ones None; ``DataMismatch`` for a value the
    declaration cannot serve."""
    return {name: served_value(spec, item.get(name), f"{entity.name}.{name}") for name, spec in entity.declared.items()}


def served_value(spec: Attribute, value: Any, where: str) -> Any:
    """A stored value as served: numbers as int or float, maps of a shape as dicts of served values, lists as
    lists. A value the declaration cannot serve (of another type, an enum value outside the set) raises
    ``DataMismatch`` naming ``where``; the caller adds the item's key."""
    if value is None:
        return None
    kind = spec.type
    if kind == "JSON":
        return values.plain_json(value)
    if spec.text and isinstance(value, str):
        number = values.number_from_text(value)
        if number is None:
            raise DataMismatch(f"{where} holds {_shown_value(value)}, which is no number")
        value = number
    if not _has_type(value, kind):
        raise DataMismatch(f"{where} holds {_kind_of(value)} {_shown_value(value)} where {kind} is declared")
    if spec.enum is not None and value not in spec.choices:
        raise DataMismatch(
            f"{where} holds {_shown_value(value)}, which is not one of its declared values {sorted(spec.choices)}"
        )
    if kind == "INT":
        return int(value)
    if kind == "N":
        return int(value) if value == value.to_integral_value() else float(value)
    if kind == "M" and spec.shape is not None:
        return {
            name: served_value(field, value.get(name), f"{where}.{name}") for name, field in spec.shape.declared.items()
        }
    if kind == "L" and spec.each is not None:
        return [served_value(spec.each, one, f"{where}[{i}]") for i, one in enumerate(value)]
    if kind == "BS":
        return values.binary_set_json(value)
    if kind in _SET_ELEMENTS and spec.each is not None:
        return [served_value(spec.each, one, f"{where}[{i}]") for i, one in enumerate(sorted(value))]
    return value


def _has_type(value: object, kind: AttributeType) -> bool:
    match kind:
        case "S":
            return isinstance(value, str)
        case "DATE":
            return isinstance(value, str) and parse_date(value) is not None
        case "N":
            return isinstance(value, Decimal)
        case "INT":
            return isinstance(value, Decimal) and value == value.to_integral_value() and int(value) in INT_RANGE
        case "BOOL":
            return isinstance(value, bool)
        case "L":
            return isinstance(value, list)
        case "M":
            return isinstance(value, dict)
        case "SS":
            return isinstance(value, set) and all(isinstance(one, str) for one in value)
        case "NS":
            return isinstance(value, set) and all(isinstance(one, Decimal) for one in value)
        case "JSON":
            return True
        case "BS":
            return values.is_binary_set(value)


def _kind_of(value: Any) -> str:
    """What a stored value is, in a message's words."""
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Decimal):
        return "a number"
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, set | frozenset):
        return "a set"
    return "binary"


def _shown_value(value: Any) -> str:
    """A stored value in a message: short, whatever it holds."""
    shown = repr(values.plain_json(value))
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _shown(key: Mapping[str, Any]) -> str:
    return " ".join(f"{name}={value!r}" for name, value in key.items())


def parse_date(text: str) -> date | None:
    """The calendar date a DATE attribute stores as ``YYYY-MM-DD``; None for any other text."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None
