"""Single-table designs as plain data, items for them, and a plain-Python reference for what serving them means.

Nothing here imports the gateway: a design is entities with key templates (literal text, plain ids, plain or
zero-padded numbers, dates; ``#`` or other separators; prefixes glued to a field), optional discriminators, sparse
GSI keys, shared key shapes, and one-to-many collections in a shared partition or in a GSI, some under a parent that
has no item of its own; links that read their target's ids from source fields of other names (roles); attributes
stored as sets, free-form JSON and numbers kept as text. With ``values``, key values as model libraries write them:
ids folded to lower or upper case in every key (their case kept, or not, in a stored copy named like the id),
constant attributes on every item of an entity (ElectroDB's ``__edb_e__``/``__edb_v__``) with items of the same key
shape that lack one or hold another value (another version), and enums whose stored values are no GraphQL names
(``in-progress``, ``2fa``). With ``index_keys``, DynamoDB's membership of an index: sparse members some of whose
items hold the index's partition key without its sort key (outside the index, their own entity all the same), and a
GSI whose sort key is a number (``N``) that holds a member's number alone, ordered as numbers.

The reference decides which designs are ambiguous (two entities whose table keys can be the same item and no
discriminator tells apart; links that cannot tell which item they mean), recognises items, decodes stored attributes
on its own, and answers lookups, links, collection pages both ways and ranges over a date or padded-number sort segment.

``designs(today=True)`` draws from the part of this space today's declaration can express: ``#``-separated
templates of plain ids, no discriminators, no sparse keys, every entity told apart by the literal words of its keys.
"""

from __future__ import annotations

import base64
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from typing import Any, Literal

from hypothesis import strategies as st

Item = dict[str, Any]
Value = str | int | date
Kind = Literal["id", "num", "date"]
Case = Literal["lower", "upper"]
AttributeKind = Literal["S", "N", "SS", "NS", "BS", "JSON", "NTEXT", "ENUM", "NAMED_ENUM"]
"""How an attribute is stored: text, a number, a string, number or binary set, free-form JSON (an open map, a list,
...), a number kept as text (``"Price": "100"``), or text of an enum (``ENUMS``)."""

_DATE = r"[1-9][0-9]{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
"""A date as the designs write it: days 29 to 31 are left out, so that every string of this shape is a date."""
ID_ALPHABET = "-.09AZ_az~é"
"""Ids are key segments verbatim; a small alphabet crossing byte order, and ``-`` that dates use too."""
TODAY_SEPARATOR = "#"
OTHER_SEPARATORS = "|/"
DIGITS = frozenset("0123456789")
WORDS = ("A", "AB", "B", "META", "PROJ", "TASK", "USER", "a", "ord", "p", "sh", "shp")
"""Literal words of templates: some are prefixes of others (``sh``/``shp``, ``A``/``AB``), some are id-like."""
STORED_ATTRIBUTES: dict[str, tuple[AttributeKind, str]] = {
    "tags": ("SS", "tags"),
    "sizes": ("NS", "sizes"),
    "hashes": ("BS", "hashes"),
    "details": ("JSON", "details"),
    "Price": ("NTEXT", "price"),
    "like_count": ("N", "likeCount"),
}
"""Attributes stored as sets, JSON and numbers as text, each with the name GraphQL gives it (stored names that are not
GraphQL names: ``Price`` is ``price``, ``like_count`` is ``likeCount``)."""
ROLES = ("owner", "member", "author")
"""Words for the fields a link reads its target's ids from, when they are not the target's own names."""
HEADS = ("A", "AB", "B", "C", "D", "ITEM", "META", "NOTE", "ORG", "PROJ", "TASK", "USER", "WS", "ord", "p", "sh", "shp")
"""Words today's designs give each template's head, one per template: enough for four entities."""
ENUMS: dict[AttributeKind, tuple[str, dict[str, str], dict[str, str]]] = {
    "ENUM": ("stage", {}, {"draft": "draft", "in-review": "in_review", "2fa": "_2fa", "on hold": "on_hold"}),
    "NAMED_ENUM": (
        "status",
        {"2fa": "TWO_FACTOR"},
        {"open": "open", "in-progress": "in_progress", "2fa": "TWO_FACTOR"},
    ),
}
"""Enum attributes: the attribute, the GraphQL names the declaration gives (``enum_names``), and the name each
stored value is served as, written out here: a value that is a GraphQL name as it is, others with their runs of other
characters as ``_`` and a ``_`` before a leading digit, unless the declaration names them."""
NUMERIC_INDEX = "GSI2"
NUMERIC_INDEX_KEYS = ("GSI2PK", "GSI2SK")
CONSTANTS = ("__edb_e__", "__edb_v__")
"""The constant attributes an entity may hold (ElectroDB's entity name and version)."""


# --- templates --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """Where a field's value goes in a key: a number is written plain or zero-padded to ``pad`` digits, an id as
    given or folded to a ``case``."""

    field: str
    pad: int = 0
    case: Case | None = None


Part = str | Slot


@dataclass(frozen=True)
class Template:
    """A key string: literal text and slots, e.g. ``("ORD#", Slot("orderId", 5))`` is ``ORD#00042``."""

    parts: tuple[Part, ...]

    @property
    def slots(self) -> tuple[Slot, ...]:
        return tuple(part for part in self.parts if isinstance(part, Slot))

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(slot.field for slot in self.slots)

    @property
    def literal_prefix(self) -> str:
        """The text every key of this template starts with: the literal text before the first slot."""
        out = ""
        for part in self.parts:
            if isinstance(part, Slot):
                break
            out += part
        return out

    @property
    def separator(self) -> str:
        """The character its ids may not hold besides ``#``: the other separator its literal text uses, if any."""
        literal = "".join(part for part in self.parts if isinstance(part, str))
        return next((one for one in OTHER_SEPARATORS if one in literal), TODAY_SEPARATOR)

    def text(self) -> str:
        """The template as a declaration might spell it: ``ORD#{orderId:05}``."""
        return "".join(
            part
            if isinstance(part, str)
            else "{" + part.field + (f":0{part.pad}" if part.pad else f":{part.case}" if part.case else "") + "}"
            for part in self.parts
        )

    def format(self, values: Mapping[str, Value]) -> str:
        return "".join(part if isinstance(part, str) else _write(part, values[part.field]) for part in self.parts)

    def parse(self, key: str, kinds: Mapping[str, Kind]) -> dict[str, Value] | None:
        """The values in ``key``, or None when it does not have this shape."""
        regex = "".join(
            re.escape(part) if isinstance(part, str) else f"({_slot_regex(part, kinds[part.field], self.separator)})"
            for part in self.parts
        )
        match = re.fullmatch(regex, key)
        if match is None:
            return None
        out: dict[str, Value] = {}
        for slot, text in zip(self.slots, match.groups(), strict=True):
            if slot.case is not None and fold(text, slot.case) != text:
                return None  # not what the template writes: it writes every id of that slot folded
            value = _read(text, kinds[slot.field])
            if out.setdefault(slot.field, value) != value:
                return None
        return out


def _write(slot: Slot, value: Value) -> str:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int):
        return f"{value:0{slot.pad}d}" if slot.pad else str(value)
    return value if slot.case is None else fold(value, slot.case)


def fold(text: str, case: Case) -> str:
    return text.lower() if case == "lower" else text.upper()


def _slot_regex(slot: Slot, kind: Kind, separator: str) -> str:
    """What a slot holds: a date; a number (zero-padded to at least ``pad`` digits); an id, any text but ``#`` and
    the template's separator (ids of other tools' items are not limited to the alphabet ids are drawn from)."""
    if kind == "date":
        return _DATE
    if kind == "num":
        return f"[0-9]{{{slot.pad},}}" if slot.pad else "[1-9][0-9]*"
    return "[^" + re.escape(TODAY_SEPARATOR + separator) + "]+"


def _read(text: str, kind: Kind) -> Value:
    if kind == "num":
        return int(text)
    if kind == "date":
        return date.fromisoformat(text)
    return text


# --- the design -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyPair:
    pk: Template
    sk: Template

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.pk.fields, *self.sk.fields)))


@dataclass(frozen=True)
class EntityDesign:
    """An item type: its key templates per index (None: the table), the value its items carry in the design's type
    attribute (None: none), the indexes whose keys its items carry only sometimes, and plain attributes.

    A ``virtual`` entity has no item of its own: it is the partition its members share (the Online Shop's order, whose
    partition holds its lines, invoice and shipments); only its partition key template means anything.

    ``constants`` are attributes every item of the entity holds besides its discriminator; ``copies`` the ids its keys
    fold whose case its items keep in an attribute named like the id (ElectroDB's ``storeId: "Portland HQ"``)."""

    name: str
    keys: Mapping[str | None, KeyPair]
    discriminator: str | None = None
    sparse: frozenset[str] = frozenset()
    attributes: Mapping[str, AttributeKind] = field(default_factory=dict)
    virtual: bool = False
    constants: Mapping[str, str] = field(default_factory=dict)
    copies: frozenset[str] = frozenset()
    partial: frozenset[str] = frozenset()
    """Sparse indexes whose partition key some of its items hold without the sort key: outside the index all the
    same, as DynamoDB has it (a started game keeps its ``map`` and loses its ``open_timestamp``)."""

    @property
    def ids(self) -> tuple[str, ...]:
        """The fields of the table key: what identifies one item."""
        return self.keys[None].fields

    @property
    def fields(self) -> frozenset[str]:
        """Every field its keys hold, in the table and in each index: what its items can tell."""
        return frozenset(name for pair in self.keys.values() for name in pair.fields)

    @property
    def self_keyed(self) -> bool:
        """Whether its partition and sort key are one template (``c#<id>`` and ``c#<id>``)."""
        return self.keys[None].pk == self.keys[None].sk


@dataclass(frozen=True)
class CollectionDesign:
    """The ``member`` items of ``parent`` in ``index``, in key order (``ascending``) or reversed."""

    name: str
    parent: str
    member: str
    index: str | None = None
    ascending: bool = True

    @property
    def field(self) -> str:
        return self.name.partition(".")[2]


@dataclass(frozen=True)
class LinkDesign:
    """A to-one relation: the ``target`` item whose ids are the ``source`` item's fields named in ``roles`` (target
    id -> source field: ``{"e0Id": "owner1A"}`` reads the E0 whose id is the source's ``owner1A``)."""

    name: str
    source: str
    target: str
    roles: Mapping[str, str]

    @property
    def field(self) -> str:
        return self.name.partition(".")[2]


@dataclass(frozen=True)
class Design:
    table_keys: tuple[str, str]
    indexes: Mapping[str, tuple[str, str]]
    """Each GSI's key attribute names."""
    kinds: Mapping[str, Kind]
    """Every field's kind; one field name means one thing across the design."""
    entities: tuple[EntityDesign, ...]
    collections: tuple[CollectionDesign, ...] = ()
    type_attribute: str = "EntityType"
    links: tuple[LinkDesign, ...] = ()
    numeric: frozenset[str] = frozenset()
    """The GSIs whose sort key is a number (``N``): each member's template there is its number alone."""

    def entity(self, name: str) -> EntityDesign:
        return next(entity for entity in self.entities if entity.name == name)

    def identity(self, entity: EntityDesign) -> dict[str, str]:
        """The attributes every item of ``entity`` holds with one value: its discriminator and its constants."""
        told = {} if entity.discriminator is None else {self.type_attribute: entity.discriminator}
        return {**told, **entity.constants}

    @property
    def folded(self) -> dict[str, Case]:
        """The fields written folded, and to which case: one field is folded alike in every key that holds it."""
        return {
            slot.field: slot.case
            for entity in self.entities
            for pair in entity.keys.values()
            for template in (pair.pk, pair.sk)
            for slot in template.slots
            if slot.case is not None
        }

    def attribute_names(self, index: str | None) -> tuple[str, str]:
        return self.table_keys if index is None else self.indexes[index]


# --- the reference: ambiguity -----------------------------------------------------------------------------------------

_Edge = tuple[frozenset[str], int]
_DATE_PARTS: tuple[tuple[str, ...], ...] = (
    ("123456789", "0123456789", "0123456789", "0123456789"),
    ("-",),
    ("0", "123456789"),
    ("1", "012"),
    ("-",),
    ("0", "123456789"),
    ("1", "0123456789"),
    ("2", "012345678"),
)
"""A date's language as alternatives of character classes: ``_DATE`` below, every string of which is a real date."""


def _automaton(
    template: Template, kinds: Mapping[str, Kind], universe: frozenset[str]
) -> tuple[list[list[_Edge]], int]:
    """An automaton of the template's language over ``universe`` (the characters that can tell keys apart): each
    state's edges (chars, next state), and the final state."""
    states: list[list[_Edge]] = [[]]

    def chain(start: int, classes: Sequence[str | frozenset[str]], end: int | None = None) -> int:
        """Edges through ``classes`` from ``start`` (to ``end`` if given); the state reached."""
        at = start
        for n, chars in enumerate(classes):
            last = n == len(classes) - 1
            if last and end is not None:
                target = end
            else:
                states.append([])
                target = len(states) - 1
            states[at].append((frozenset(chars), target))
            at = target
        return at

    def alternatives(start: int, options: Sequence[Sequence[str]]) -> int:
        states.append([])
        end = len(states) - 1
        for option in options:
            chain(start, option, end)
        return end

    at = 0
    for part in template.parts:
        if isinstance(part, str):
            at = chain(at, list(part))
        elif kinds[part.field] == "id":
            chars = universe - {TODAY_SEPARATOR, template.separator}
            if part.case is not None:
                chars = frozenset(char for char in chars if fold(char, part.case) == char)
            at = chain(at, [chars])
            states[at].append((chars, at))
        elif kinds[part.field] == "num" and part.pad:
            at = chain(at, [DIGITS] * part.pad)
            states[at].append((DIGITS, at))
        elif kinds[part.field] == "num":
            at = chain(at, ["123456789"])
            states[at].append((DIGITS, at))
        else:
            year, dash, month_a, month_b, _, day_a, day_b, day_c = _DATE_PARTS
            at = chain(at, [*year, *dash])
            at = chain(alternatives(at, (month_a, month_b)), dash)
            at = alternatives(at, (day_a, day_b, day_c))
    return states, at


def common_key(templates: Sequence[Template], kinds: Mapping[str, Kind]) -> str | None:
    """A key string every template can parse, or None when their languages do not meet (a product automaton)."""
    universe = frozenset(ID_ALPHABET) | DIGITS | _all_chars(templates) | frozenset(TODAY_SEPARATOR + OTHER_SEPARATORS)
    automata = [_automaton(template, kinds, universe) for template in templates]
    start = tuple(0 for _ in automata)
    final = tuple(end for _, end in automata)
    came: dict[tuple[int, ...], tuple[tuple[int, ...], str] | None] = {start: None}
    todo = deque([start])
    while todo:
        state = todo.popleft()
        if state == final:
            out = ""
            step = came[state]
            while step is not None:
                state, char = step
                out = char + out
                step = came[state]
            return out
        moves: list[tuple[frozenset[str], tuple[int, ...]]] = [(universe, ())]
        for (automaton, _), at in zip(automata, state, strict=True):
            moves = [(chars & edge, (*to, nxt)) for chars, to in moves for edge, nxt in automaton[at] if chars & edge]
        for chars, nxt in moves:
            if nxt not in came:
                # "1" where it may: a witness date reads 1111-11-11, a real date.
                came[nxt] = (state, "1" if "1" in chars else min(chars))
                todo.append(nxt)
    return None


def _all_chars(templates: Sequence[Template]) -> frozenset[str]:
    return frozenset("".join(part for template in templates for part in template.parts if isinstance(part, str)))


def told_apart(design: Design, a: EntityDesign, b: EntityDesign) -> bool:
    """Whether an attribute both entities' items hold with one value each tells them apart."""
    mine, theirs = design.identity(a), design.identity(b)
    return any(name in theirs and theirs[name] != value for name, value in mine.items())


def shared_table_key(design: Design, a: EntityDesign, b: EntityDesign) -> tuple[str, str] | None:
    """A table key both entities' templates parse, or None. A self-keyed entity's two keys are one string, so the
    key then meets all four templates; otherwise each key meets its two (no field repeats across one entity's table
    key but in a self-keyed one, so values never conflict)."""
    ka, kb = a.keys[None], b.keys[None]
    if a.self_keyed or b.self_keyed:
        both = common_key([ka.pk, ka.sk, kb.pk, kb.sk], design.kinds)
        return None if both is None else (both, both)
    pk = common_key([ka.pk, kb.pk], design.kinds)
    sk = common_key([ka.sk, kb.sk], design.kinds)
    return None if pk is None or sk is None else (pk, sk)


def ambiguities(design: Design) -> list[tuple[str, str, tuple[str, str]]]:
    """The pairs of entities one item could belong to, each with such an item's table key."""
    out = []
    stored = [entity for entity in design.entities if not entity.virtual]
    for i, a in enumerate(stored):
        for b in stored[i + 1 :]:
            key = shared_table_key(design, a, b)
            if key is not None and not told_apart(design, a, b):
                out.append((a.name, b.name, key))
    return out


def link_ambiguities(design: Design) -> list[tuple[str, str]]:
    """The links that cannot tell which item they mean, each with why: one whose source's items do not hold a field it
    reads the target's ids from, one that reads its own source's ids into the same entity (it is always the item
    itself), and one that reads what an earlier link of its source reads (the same object by the same fields, so one
    of them misses the role it was meant to have)."""
    out = []
    seen: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
    for link in design.links:
        reads = tuple(sorted((name, link.roles.get(name, name)) for name in design.entity(link.target).ids))
        lacking = [field for _, field in reads if field not in design.entity(link.source).fields]
        if lacking:
            out.append((link.name, f"{link.source} holds no {lacking}"))
        elif link.source == link.target and all(name == field for name, field in reads):
            out.append((link.name, "always its source itself"))
        elif (link.source, link.target, reads) in seen:
            out.append((link.name, "reads what an earlier link reads"))
        seen.add((link.source, link.target, reads))
    return out


# --- the reference: items and answers ---------------------------------------------------------------------------------


def table_values(design: Design, entity: EntityDesign, item: Item) -> dict[str, Value] | None:
    """The values an item's table key and type attribute give if it has ``entity``'s shape: what identifies it."""
    return values_of(design, replace(entity, keys={None: entity.keys[None]}), item)


def values_of(design: Design, entity: EntityDesign, item: Item) -> dict[str, Value] | None:
    """The item's values if it is an ``entity``: its table key parses, it holds the entity's discriminator and each of
    its constants, and each index key it declares is there (unless sparse: then both of its attributes are there, or
    the item is outside that index) and agrees; None otherwise. Folded ids are as the keys hold them."""
    if any(item.get(name) != value for name, value in design.identity(entity).items()):
        return None
    values: dict[str, Value] = {}
    for index, pair in entity.keys.items():
        pk_name, sk_name = design.attribute_names(index)
        pk, sk = item.get(pk_name), item.get(sk_name)
        if (pk is None or sk is None) and index in entity.sparse:
            # In an index exactly when it holds every key attribute of it; a partition key held outside it still
            # gives the ids its template holds (a started game's ``map``).
            held = pair.pk.parse(pk, design.kinds) if isinstance(pk, str) else None
            for name, value in (held or {}).items():
                values.setdefault(name, value)
            continue
        if index in design.numeric and isinstance(sk, int | Decimal) and not isinstance(sk, bool) and sk == int(sk):
            sk = str(int(sk))  # a number key holds a whole number: its digits are what the template reads
        if not isinstance(pk, str) or not isinstance(sk, str):
            return None
        for template, key in ((pair.pk, pk), (pair.sk, sk)):
            parsed = template.parse(key, design.kinds)
            if parsed is None:
                return None
            for name, value in parsed.items():
                if values.setdefault(name, value) != value:
                    return None
    return values


def recognise(design: Design, item: Item) -> list[str]:
    """Every entity the item can be: exactly one for any item of an unambiguous design."""
    return [
        entity.name for entity in design.entities if not entity.virtual and values_of(design, entity, item) is not None
    ]


def make_item(
    design: Design,
    entity: EntityDesign,
    values: Mapping[str, Value],
    indexed: frozenset[str],
    stored: Mapping[str, Any] | None = None,
) -> Item:
    """An item as a client writes it: its table key, the keys of the indexes in ``indexed`` (or every index it
    declares that is not sparse), its discriminator and attributes: text and numbers made from its key, the others
    as ``stored`` gives them (absent where it gives none)."""
    item: Item = {}
    for index, pair in entity.keys.items():
        if index is not None and index in entity.sparse and index not in indexed:
            continue
        pk_name, sk_name = design.attribute_names(index)
        item[pk_name] = pair.pk.format(values)
        item[sk_name] = values[pair.sk.fields[0]] if index in design.numeric else pair.sk.format(values)
    item.update(design.identity(entity))
    for name, kind in entity.attributes.items():
        if kind == "S":
            item[name] = f"{entity.name}:{name}:{item[design.table_keys[1]]}"
        elif kind == "N":
            item[name] = len(item)
        elif stored is not None and stored.get(name) is not None:
            item[name] = stored[name]
    return item


_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A number as people write one in text: ASCII digits, an optional sign, point and exponent."""


def served(kind: AttributeKind, value: Any) -> Any:
    """A stored attribute as GraphQL serves it, decoded here on its own: a set as a list in its elements' order (text
    by code point, which is UTF-8 byte order; numbers by value; binary by bytes, each in base64), JSON with numbers as
    numbers, a number kept as text as that number (null when the text is no number, beside a DATA_MISMATCH error),
    an enum's text by its GraphQL name; absent is null."""
    if value is None:
        return None
    if kind in ENUMS:
        return ENUMS[kind][2][value]
    if kind == "SS":
        return sorted(value, key=lambda text: text.encode())
    if kind == "NS":
        return [_number(one) for one in sorted(value)]
    if kind == "BS":
        return [base64.b64encode(bytes(one)).decode() for one in sorted(bytes(one) for one in value)]
    if kind == "JSON":
        return _json(value)
    if kind == "NTEXT":
        text = value.strip()
        return _number(Decimal(text)) if _NUMBER_TEXT.fullmatch(text) else None
    return value


def _number(number: Decimal | int) -> int | float:
    return int(number) if number == int(number) else float(number)


def _json(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _json(one) for key, one in value.items()}
    if isinstance(value, list):
        return [_json(one) for one in value]
    if isinstance(value, Decimal):
        return _number(value)
    return value


@dataclass(frozen=True)
class Page:
    """One page of a connection: its members in the order served, and its pageInfo flags."""

    members: list[Item]
    has_previous: bool
    has_next: bool


class Reference:
    """Answers over the items of one unambiguous design; items of no entity (``strays``) are never served."""

    def __init__(self, design: Design, items: Sequence[Item]) -> None:
        self.design = design
        self.items = list(items)
        self.of: dict[int, tuple[str, dict[str, Value]]] = {}
        self.strays: list[Item] = []
        for n, item in enumerate(self.items):
            found = recognise(design, item)
            if not found:
                self.strays.append(item)
                continue
            (name,) = found
            values = values_of(design, design.entity(name), item)
            assert values is not None
            self.of[n] = (name, values)

    def ids(self, item: Item) -> dict[str, Value]:
        """The item's ids as served: a folded id from the copy its entity keeps of it, when the item holds one that
        folds to the key's value; otherwise as the key holds it."""
        name, values = self.of[self.items.index(item)]
        entity = self.design.entity(name)
        out = {one: values[one] for one in entity.ids}
        for one, case in self.design.folded.items():
            copy = item.get(one)
            if one in entity.copies and one in out and isinstance(copy, str) and fold(copy, case) == out[one]:
                out[one] = copy
        return out

    def lookup(self, entity: str, ids: Mapping[str, Value]) -> Item | None:
        """The entity's item with those ids, given in any case where its keys fold them."""
        folded = self.design.folded
        ids = {k: fold(v, folded[k]) if k in folded and isinstance(v, str) else v for k, v in ids.items()}
        found = [
            item
            for n, item in enumerate(self.items)
            if n in self.of and self.of[n][0] == entity and all(self.of[n][1][k] == v for k, v in ids.items())
        ]
        assert len(found) <= 1, f"two {entity} items with ids {ids}"
        return found[0] if found else None

    def linked(self, link: LinkDesign, item: Item) -> Item | None:
        """The item a link of ``item`` reads: the target whose ids are the item's role fields; None when the item
        lacks one of them, or no target has those ids."""
        values = self.of[self.items.index(item)][1]
        wanted = {name: values.get(field) for name, field in link.roles.items()}
        if any(value is None for value in wanted.values()):
            return None
        return self.lookup(link.target, wanted)

    def instances(self, entity: str) -> list[dict[str, Value]]:
        return [values for name, values in self.of.values() if name == entity]

    def halfway(self, entity: str) -> list[dict[str, Value]]:
        """The values of the entity's items that hold an index's partition key without its sort key: outside it."""
        pairs = [self.design.indexes[index] for index in self.design.entity(entity).partial]
        return [
            values
            for n, (name, values) in self.of.items()
            if name == entity and any(pk in self.items[n] and sk not in self.items[n] for pk, sk in pairs)
        ]

    def strays_shaped_like(self, entity: str) -> list[dict[str, Value]]:
        """The table-key values of items of no entity whose table key has ``entity``'s shape, as their keys hold them
        (another version's; one whose key holds an id in a case its template does not write)."""
        shape = replace(unfolded(self.design.entity(entity)), discriminator=None, constants={})
        found = [table_values(self.design, shape, item) for item in self.strays]
        return [values for values in found if values is not None]

    def parents(self, collection: CollectionDesign) -> list[dict[str, Value]]:
        """The parents to ask a collection of: the parent's items, or for a virtual parent the partitions its members
        name (it has no item to find them by)."""
        parent = self.design.entity(collection.parent)
        if not parent.virtual:
            return self.instances(parent.name)
        fields = self.design.entity(collection.member).keys[collection.index].pk.fields
        found = [
            {name: values[name] for name in fields}
            for values in self.instances(collection.member)
            if all(name in values for name in fields)  # a sparse member outside the index names no partition
        ]
        return [dict(one) for one in dict.fromkeys(tuple(sorted(one.items())) for one in found)]

    def strays_among(self, collection: CollectionDesign, parent: Mapping[str, Value]) -> bool:
        """Whether items of no entity sit in the partition the collection's members are read from for ``parent``:
        a Query reads them too, so they may take places its Limit keeps for members."""
        pair = self.design.entity(collection.member).keys[collection.index]
        pk_name = self.design.attribute_names(collection.index)[0]
        partition = pair.pk.format(parent)
        return any(item.get(pk_name) == partition for item in self.strays)

    def range_slot(self, collection: CollectionDesign) -> Slot | None:
        """The slot a range of the collection's members is read by, when its sort key is literal text and then one
        fixed-width value (a date, a zero-padded number): then ``BETWEEN`` on key strings is a range of values."""
        template = self.design.entity(collection.member).keys[collection.index].sk
        last = template.parts[-1]
        if len(template.slots) != 1 or not isinstance(last, Slot):
            return None
        fixed = self.design.kinds[last.field] == "date" or (self.design.kinds[last.field] == "num" and last.pad > 0)
        return last if fixed else None

    def members(
        self,
        collection: CollectionDesign,
        parent: Mapping[str, Value],
        ascending: bool,
        low: Value | None = None,
        high: Value | None = None,
    ) -> list[Item]:
        """The member items whose partition in the collection's index is the parent's, in key order: the items that
        carry both of that index's keys (sparse ones may not, or only its partition key), of the parent's ids, sorted
        by their sort key string; with ``low``/``high``, those whose range slot's value lies between them
        (inclusive)."""
        member = self.design.entity(collection.member)
        pair = member.keys[collection.index]
        pk_name, sk_name = self.design.attribute_names(collection.index)
        found = [
            item
            for n, item in enumerate(self.items)
            if n in self.of
            and self.of[n][0] == member.name
            and pk_name in item
            and sk_name in item
            and all(self.of[n][1][name] == parent[name] for name in pair.pk.fields)
        ]
        if low is not None or high is not None:
            slot = self.range_slot(collection)
            assert slot is not None, f"{collection.name} is not read by ranges"
            found = [
                item
                for item in found
                if (low is None or low <= self.of[self.items.index(item)][1][slot.field])
                and (high is None or self.of[self.items.index(item)][1][slot.field] <= high)
            ]
        # Code point order is UTF-8 byte order, DynamoDB's order of S keys.
        return sorted(found, key=lambda item: item[sk_name], reverse=not ascending)

    def page(
        self,
        collection: CollectionDesign,
        parent: Mapping[str, Value],
        size: int,
        after: int | None = None,
        before: int | None = None,
        backward: bool = False,
        ascending: bool | None = None,
    ) -> Page:
        """``first: size, after`` or ``last: size, before``; ``after``/``before`` are positions in the order."""
        members = self.members(collection, parent, collection.ascending if ascending is None else ascending)
        if backward:
            end = len(members) if before is None else before
            start = max(0, end - size)
            return Page(members[start:end], start > 0, before is not None)
        start = 0 if after is None else after + 1
        return Page(members[start : start + size], after is not None, len(members) > start + size)


# --- strategies -------------------------------------------------------------------------------------------------------


@st.composite
def _template(
    draw: st.DrawFn,
    fields: Sequence[str],
    kinds: Mapping[str, Kind],
    today: bool,
    lead: str | None = None,
    cases: Mapping[str, Case] | None = None,
) -> Template:
    """A template holding ``fields`` in order, each after a literal word (glued, or with a separator in between),
    folded where ``cases`` says."""
    separator = TODAY_SEPARATOR if today else draw(st.sampled_from(TODAY_SEPARATOR + OTHER_SEPARATORS))
    parts: list[Part] = []
    words = draw(st.lists(st.sampled_from(WORDS), min_size=len(fields), max_size=len(fields)))
    if lead is not None and words:
        words[0] = lead
    for n, (name, word) in enumerate(zip(fields, words, strict=True)):
        glued = not today and draw(st.booleans())
        parts.append(("" if n == 0 else separator) + word + ("" if glued else separator))
        pad = draw(st.sampled_from((0, 3, 5))) if kinds[name] == "num" else 0
        parts.append(Slot(name, pad, (cases or {}).get(name)))
    if not fields:
        parts.append(lead or draw(st.sampled_from(WORDS)))
    return Template(tuple(parts))


@st.composite
def designs(
    draw: st.DrawFn,
    today: bool = False,
    clash: bool = False,
    links: bool = False,
    link_mistakes: bool = False,
    stored_types: bool = False,
    values: bool = False,
    index_keys: bool = False,
) -> Design:
    """A design of 2 to 4 entities: roots keyed by their own id, each member in a collection of an earlier entity,
    in the parent's partition or in a GSI; with ``today``, in the space today's declaration can express, where every
    template starts with a word of its own unless ``clash`` draws them from three (so that some designs are
    ambiguous). ``links`` adds links that read their target by role (``_links``), ``link_mistakes`` sometimes one
    that cannot tell which item it means, ``stored_types`` attributes stored as sets, JSON and numbers as text, and
    ``values`` ids folded in every key that holds them (some kept in copies), constants and enums (``_values``), and
    ``index_keys`` sparse members whose items may hold their index's partition key without its sort key."""
    count = draw(st.integers(2, 4))
    names = [f"E{n}" for n in range(count)]
    kinds: dict[str, Kind] = {}
    cases: dict[str, Case] = {}
    for name in names:
        own = f"{name.lower()}Id"
        kinds[own] = "id" if today else draw(st.sampled_from(("id", "id", "num", "date")))
        case = draw(st.sampled_from((None, "lower", "lower", "upper"))) if values and kinds[own] == "id" else None
        if case is not None:
            cases[own] = case
    table_keys = draw(st.sampled_from((("PK", "SK"), ("pk", "sk"))))
    gsi = draw(st.sampled_from((("GSI1PK", "GSI1SK"), ("GSI1-PK", "GSI1-SK"))))
    unique = iter(draw(st.permutations(HEADS)))

    def head() -> str | None:
        if not today:
            return None
        return draw(st.sampled_from(HEADS[:3])) if clash else next(unique)

    entities: list[EntityDesign] = []
    collections: list[CollectionDesign] = []
    members: set[str] = set()
    gsi_partitions: dict[str, Template] = {}
    for n, name in enumerate(names):
        own = f"{name.lower()}Id"
        discriminator = None if today or not draw(st.booleans()) else name
        attributes: dict[str, AttributeKind] = {"label": "S"} if draw(st.booleans()) else {}
        if stored_types:
            chosen = draw(st.lists(st.sampled_from(sorted(STORED_ATTRIBUTES)), max_size=3, unique=True))
            attributes.update((one, STORED_ATTRIBUTES[one][0]) for one in chosen)
        parent = None if n == 0 or draw(st.integers(0, 3)) == 0 else entities[draw(st.integers(0, n - 1))]
        if parent is None:
            roots = [entity for entity in entities if entity.name not in members and not entity.virtual]
            if roots and not today and draw(st.booleans()):
                # The shape of an earlier root, told apart by discriminators (unless one of them has none).
                other = roots[draw(st.integers(0, len(roots) - 1))]
                kinds[own] = kinds[f"{other.name.lower()}Id"]
                if f"{other.name.lower()}Id" in cases:
                    cases[own] = cases[f"{other.name.lower()}Id"]
                else:
                    cases.pop(own, None)
                pk, sk = (_renamed(template, own) for template in (other.keys[None].pk, other.keys[None].sk))
                if other.discriminator is None and draw(st.integers(0, 3)) > 0:
                    entities[entities.index(other)] = replace(other, discriminator=other.name)
                discriminator = None if draw(st.integers(0, 3)) == 0 else name
            else:
                self_keyed = not today and draw(st.booleans())
                pk = draw(_template([own], kinds, today, head(), cases))
                sk = pk if self_keyed else draw(_template([], kinds, today, head(), cases))
            virtual = not today and draw(st.integers(0, 2)) == 0
            entity = EntityDesign(name, {None: KeyPair(pk, sk)}, discriminator, attributes=attributes, virtual=virtual)
            entities.append(draw(_values(entity)) if values and not virtual else entity)
            continue
        members.add(name)
        index = "GSI1"
        via_gsi = draw(st.booleans())
        parent_pair = parent.keys[None]
        if not via_gsi and parent.name not in members:
            keys = {None: KeyPair(parent_pair.pk, draw(_template([own], kinds, today, head(), cases)))}
            collections.append(
                CollectionDesign(f"{parent.name}.{name.lower()}s", parent.name, name, None, draw(st.booleans()))
            )
        else:
            pk = draw(_template([own], kinds, today, head(), cases))
            sk = draw(_template([], kinds, today, head(), cases))
            if index_keys and kinds[own] == "num" and draw(st.integers(0, 3)) > 0:
                # A number sort key holds the member's number alone, ordered as a number (9 before 10).
                index = NUMERIC_INDEX
                gsi_pk = draw(_template(list(parent.ids), kinds, today, head(), cases))
                gsi_sk = Template((Slot(own),))
            else:
                # A second member of one parent in GSI1 may share its partition: variant shapes in one index
                # partition.
                shared = gsi_partitions.get(parent.name)
                if shared is not None and draw(st.booleans()):
                    gsi_pk = shared
                else:
                    gsi_pk = draw(_template(list(parent.ids), kinds, today, head(), cases))
                    gsi_partitions[parent.name] = gsi_pk
                gsi_sk = draw(_template([own], kinds, today, head(), cases))
            keys = {None: KeyPair(pk, sk), index: KeyPair(gsi_pk, gsi_sk)}
            collections.append(
                CollectionDesign(f"{parent.name}.{name.lower()}s", parent.name, name, index, draw(st.booleans()))
            )
        sparse = frozenset({index}) if index in keys and not today and draw(st.booleans()) else frozenset()
        partial = sparse if index_keys and sparse and draw(st.booleans()) else frozenset()
        entity = EntityDesign(name, keys, discriminator, sparse, attributes, partial=partial)
        entities.append(draw(_values(entity)) if values else entity)
    numeric = frozenset(one for entity in entities for one in entity.keys if one == NUMERIC_INDEX)
    indexes = {"GSI1": gsi, **{one: NUMERIC_INDEX_KEYS for one in numeric}}
    design = Design(table_keys, indexes, kinds, tuple(entities), tuple(collections), numeric=numeric)
    return draw(_links(design, link_mistakes)) if links else design


@st.composite
def _values(draw: st.DrawFn, entity: EntityDesign) -> EntityDesign:
    """The entity with constants (none, its name, its version, or both), copies of some of the ids its keys fold, and
    enum attributes."""
    constants = draw(st.sampled_from(((), CONSTANTS[:1], CONSTANTS, CONSTANTS[1:])))
    folded = [slot.field for template in (entity.keys[None].pk, entity.keys[None].sk) for slot in template.slots]
    folded = [name for name in dict.fromkeys(folded) if _slot_case(entity, name) is not None]
    enums = draw(st.lists(st.sampled_from(sorted(ENUMS)), max_size=2, unique=True))
    return replace(
        entity,
        constants={name: entity.name.lower() if name == "__edb_e__" else "1" for name in constants},
        copies=frozenset(draw(st.lists(st.sampled_from(folded), unique=True)) if folded else ()),
        attributes={**entity.attributes, **{ENUMS[kind][0]: kind for kind in enums}},
    )


def _slot_case(entity: EntityDesign, field: str) -> Case | None:
    return next(
        (
            slot.case
            for pair in entity.keys.values()
            for template in (pair.pk, pair.sk)
            for slot in template.slots
            if slot.field == field
        ),
        None,
    )


@st.composite
def _links(draw: st.DrawFn, design: Design, mistakes: bool) -> Design:
    """The design with 1 to 3 links from an entity to an earlier one (whose items data() makes first), that is no
    link's source: a role field joins its source's identity, so a target's ids stay those its links read. Each
    target id is read from the source's field of that name when it has one (the same id: a member's parent) or from
    a role field of its own, added to the end of the source's table sort key (``#OWNER#{owner1A}``): so a source
    often holds a field named like the target's id that a link must not read (a member's ``e0Id`` when it links to
    another E0 by ``owner1A``), and two links often read one target by different roles. With ``mistakes``, sometimes
    one link more that ``link_ambiguities`` refuses."""
    entities = {entity.name: entity for entity in design.entities}
    order = [entity.name for entity in design.entities if not entity.virtual]
    kinds = dict(design.kinds)
    made: list[LinkDesign] = []
    for k in range(draw(st.integers(1, 3))):
        sources, targets = {link.source for link in made}, {link.target for link in made}
        pairs = [
            (source, target)
            for at, source in enumerate(order)
            for target in order[:at]
            if source not in targets and target not in sources
        ]
        if not pairs:
            break
        if made and draw(st.booleans()):
            source, target = made[-1].source, made[-1].target
        else:
            source, target = draw(st.sampled_from(pairs))
        roles: dict[str, str] = {}
        for j, name in enumerate(entities[target].ids):
            by_name = name in entities[source].fields and draw(st.booleans())
            # The same roles as an earlier link of the pair would be a mistake: the last id then takes a role.
            if by_name and any(link.roles == {**roles, name: name} for link in made if link.source == source):
                by_name = False
            if by_name:
                roles[name] = name
                continue
            role = f"{draw(st.sampled_from(ROLES))}{k}{chr(ord('A') + j)}"
            kinds[role] = kinds[name]
            roles[name] = role
            pair = entities[source].keys[None]
            # The role folds as the target's id does: a key that keeps its case would get a folded id from the source.
            sk = _appended(pair.sk, f"#{role[:-2].upper()}#", Slot(role, case=design.folded.get(name)))
            entities[source] = replace(entities[source], keys={**entities[source].keys, None: KeyPair(pair.pk, sk)})
        made.append(LinkDesign(f"{source}.link{k}", source, target, roles))
    if mistakes and order and draw(st.booleans()):  # a design whose entities are all partitions has no link
        made.append(draw(_mistaken_link(made, entities, len(made))))
    return replace(
        design, kinds=kinds, entities=tuple(entities[entity.name] for entity in design.entities), links=tuple(made)
    )


def _appended(template: Template, literal: str, slot: Slot) -> Template:
    """``template`` with ``literal`` and ``slot`` after it; literal text it ends with and ``literal`` are one part."""
    head, last = template.parts[:-1], template.parts[-1]
    if isinstance(last, str):
        return Template((*head, last + literal, slot))
    return Template((*template.parts, literal, slot))


@st.composite
def _mistaken_link(draw: st.DrawFn, made: list[LinkDesign], entities: Mapping[str, EntityDesign], k: int) -> LinkDesign:
    """A link that cannot tell which item it means: a second one by an earlier link's roles, one from an entity to
    itself by its own ids, or one that reads a target's ids by their names from a source that has no such field."""
    kind = draw(st.sampled_from(("again", "itself", "unheld") if made else ("itself", "unheld")))
    if kind == "again":
        earlier = draw(st.sampled_from(made))
        return replace(earlier, name=f"{earlier.source}.link{k}")
    stored = sorted(name for name, entity in entities.items() if not entity.virtual)
    source = draw(st.sampled_from(stored))
    unheld = [name for name in stored if set(entities[name].ids) - entities[source].fields]
    target = draw(st.sampled_from(unheld)) if kind == "unheld" and unheld else source
    return LinkDesign(f"{source}.link{k}", source, target, {name: name for name in entities[target].ids})


def _renamed(template: Template, field: str) -> Template:
    return Template(tuple(part if isinstance(part, str) else replace(part, field=field) for part in template.parts))


def _spread(n: int) -> int:
    """Distinct numbers of one to four digits (``0, 19, 299, 3, 49, ...``, each one less than it is served), whose
    text order is mostly not their order: for a number key, which DynamoDB sorts as numbers."""
    return (n + 1) * (1, 10, 100)[n % 3] - 1


def _value(kind: Kind, n: int, text: str) -> Value:
    if kind == "num":
        return 1 + n
    if kind == "date":
        return date(2020, 1 + n % 12, 1 + 3 * (n // 12) % 28)
    return text


@st.composite
def _roles(
    draw: st.DrawFn,
    design: Design,
    link: LinkDesign,
    values: Mapping[str, Value],
    targets: Sequence[Mapping[str, Value]],
    n: int,
) -> dict[str, Value]:
    """Values of a link's role fields: mostly a target's ids (one that agrees with the ids the source holds by name),
    sometimes ids no target has, so that the link is null."""
    fitting = [
        one
        for one in targets
        if all(one[name] == values.get(field) for name, field in link.roles.items() if name == field)
    ]
    chosen = fitting[draw(st.integers(0, len(fitting) - 1))] if fitting and draw(st.integers(0, 3)) > 0 else None
    return {
        field: chosen[name] if chosen is not None else _value(design.kinds[field], 100 + n, "zz")
        for name, field in link.roles.items()
        if field != name
    }


_SET_TEXT = "aZé~\uffff\U0001f600"
"""Set elements cross orders: ``Z`` before ``a`` by code point; U+FFFF before an emoji in UTF-8, after it in UTF-16."""
_JSON_NUMBER = st.integers(-(10**12), 10**12).map(Decimal) | st.decimals(-1000, 1000, places=2)
_NUMBER_TRAPS = ("n/a", "", " 7 ", "1e3", "-0", ".5", "5.", "NaN", "Infinity", "0x10", "1_000", "\u0661\u0662")
"""Texts a number kept as text may hold that are no number, or are one written oddly: half of what is drawn."""
STORED_VALUES: dict[AttributeKind, st.SearchStrategy[Any]] = {
    "SS": st.sets(st.text(_SET_TEXT, min_size=1, max_size=3), min_size=1, max_size=4),
    "NS": st.sets(_JSON_NUMBER, min_size=1, max_size=4),
    "BS": st.sets(st.binary(min_size=1, max_size=3), min_size=1, max_size=4),
    "JSON": st.recursive(
        st.none() | st.booleans() | st.text(_SET_TEXT, max_size=3) | _JSON_NUMBER,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(_SET_TEXT, min_size=1, max_size=3), inner, max_size=3)
        ),
        max_leaves=6,
    ),
    "NTEXT": st.sampled_from(_NUMBER_TRAPS) | _JSON_NUMBER.map(str),
}
"""Values of the stored attribute kinds, as boto3 writes them (absent when a strategy gives None)."""


@st.composite
def data(draw: st.DrawFn, design: Design) -> list[tuple[str, Item]]:
    """Items for a design: a few of each root, members for each collection's parents (some parents get none),
    some sparse members outside their index (some of them holding its partition key alone); ids unique within each
    entity, and an item whose table key another entity's item already holds (entities of one shape share their ids'
    namespace) is not made. Each item comes with its entity, or with "" for an item of no entity: one of an entity's
    key shape that holds another value of one of its constants or lacks it, or whose key holds an id in another case
    than its template folds to (``_strays``). Copies of folded ids mostly hold the id as given, sometimes nothing or
    another id."""
    items: list[tuple[str, Item]] = []
    taken: set[tuple[str, str]] = set()
    values_by_entity: dict[str, list[dict[str, Value]]] = {}
    by_member = {collection.member: collection for collection in design.collections}
    for entity in design.entities:
        own = f"{entity.name.lower()}Id"
        kind = design.kinds[own]
        collection = by_member.get(entity.name)
        parents: list[dict[str, Value]] = [{}] if collection is None else values_by_entity[collection.parent]
        count = draw(st.integers(0 if collection else 1, 5 if collection else 3))
        texts = draw(
            st.lists(st.text(ID_ALPHABET, min_size=1, max_size=4), min_size=count, max_size=count, unique=True)
        )
        numbers = draw(st.permutations(range(count * 3)))[:count]
        numbered = any(own in entity.keys[index].sk.fields for index in design.numeric if index in entity.keys)
        made: list[dict[str, Value]] = []
        for n in range(count):
            parent = parents[draw(st.integers(0, len(parents) - 1))] if parents else None
            if parent is None:
                break
            values = {**parent, own: _value(kind, _spread(numbers[n]) if numbered else numbers[n], texts[n])}
            for link in design.links:
                if link.source == entity.name:
                    values.update(draw(_roles(design, link, values, values_by_entity[link.target], n)))
            indexed = entity.sparse if draw(st.booleans()) else frozenset()
            stored = {name: draw(STORED_VALUES[one]) for name, one in entity.attributes.items() if one in STORED_VALUES}
            item = make_item(design, entity, values, indexed, stored)
            for index in sorted(entity.partial - indexed):
                if draw(st.booleans()):  # its partition key alone: still outside the index
                    item[design.indexes[index][0]] = entity.keys[index].pk.format(values)
            for name in sorted(entity.copies):
                copy = draw(st.sampled_from(("given", "given", "given", "absent", "other")))
                if copy != "absent":
                    item[name] = values[name] if copy == "given" else f"Q{values[name]}"
            key = (item[design.table_keys[0]], item[design.table_keys[1]])
            if entity.virtual:
                made.append(values)
            elif key not in taken:
                taken.add(key)
                made.append(values)
                items.append((entity.name, item))
            if not entity.virtual:
                stray = draw(_strays(design, entity, {**values, own: _value(kind, 50 + numbers[n], f"{texts[n]}~v2")}))
                if stray is not None and (stray[design.table_keys[0]], stray[design.table_keys[1]]) not in taken:
                    taken.add((stray[design.table_keys[0]], stray[design.table_keys[1]]))
                    items.append(("", stray))
        values_by_entity[entity.name] = made
    return items


@st.composite
def _strays(draw: st.DrawFn, design: Design, entity: EntityDesign, values: dict[str, Value]) -> Item | None:
    """Sometimes an item of ``entity``'s key shape that is no item of it (nor of any other entity): another version
    (``__edb_v__: "2"``) or entity name, or a constant missing; or ids the keys fold written in another case."""
    ways = [*(("constant",) if entity.constants else ()), *(("case",) if _folds_own(entity) else ())]
    if not ways or draw(st.integers(0, 2)) > 0:
        return None
    if draw(st.sampled_from(ways)) == "constant":
        item = make_item(design, entity, values, frozenset(design.indexes))
        name = draw(st.sampled_from(sorted(entity.constants)))
        if draw(st.booleans()):
            del item[name]
        else:
            item[name] = "2" if name == "__edb_v__" else f"{entity.constants[name]}x"
    else:
        own = f"{entity.name.lower()}Id"
        text = f"{'Q' if _slot_case(entity, own) == 'lower' else 'q'}{values[own]}"
        item = make_item(design, unfolded(entity), {**values, own: text}, frozenset(design.indexes))
    return item if not recognise(design, item) else None


def _folds_own(entity: EntityDesign) -> bool:
    """Whether the entity's own id is folded in its table key (so a key can hold it in the wrong case)."""
    own = f"{entity.name.lower()}Id"
    pair = entity.keys[None]
    return any(slot.field == own and slot.case for template in (pair.pk, pair.sk) for slot in template.slots)


def unfolded(entity: EntityDesign) -> EntityDesign:
    """The entity with keys that write every id as given."""

    def plain(template: Template) -> Template:
        return Template(tuple(part if isinstance(part, str) else replace(part, case=None) for part in template.parts))

    return replace(entity, keys={index: KeyPair(plain(pair.pk), plain(pair.sk)) for index, pair in entity.keys.items()})
