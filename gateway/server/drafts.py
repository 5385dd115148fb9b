"""Declarations drafted from examples: a NoSQL Workbench model's facets and sample items, or a table's sample.

Key templates are inferred from the sample values (``c#12345`` is the literal ``c`` and an id, ``2026-01-05`` a
date); what examples cannot tell (relations, orders, counters) is written as commented suggestions to complete.
"""

from __future__ import annotations

import re
from base64 import b64decode
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import pairwise
from typing import Any

import yaml

from gateway.design.keys import SEPARATOR
from gateway.design.model import KeyType, key_text
from gateway.design.values import is_binary_set
from gateway.dynamo.sampling import KeySchema
from gateway.server.declaration_file import SCHEMA_PATH, TABLE_KEYS, DeclarationFileError, parse

Item = dict[str, Any]


DISCRIMINATORS = ("EntityType", "entityType", "entity_type", "_type", "__typename", "type", "kind")
"""Attribute names taken first for the one that tells item types apart."""
_UPPER_LITERAL = re.compile(r"[A-Z][A-Z0-9_]*")
_LOWER_LITERAL = re.compile(r"[a-z]{1,4}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SEPARATORS = re.compile(r"([#|/])")
"""Where keys are seen to split: ``#``, and the ``|`` and ``/`` that other designs write between segments."""
_GLUED = re.compile(r"([A-Za-z]+)([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]+)")
"""A key that starts with a word glued to a number or a date (``ord00042``, ``shp2026-01-05``): the letters are
literal text. After a separator such a segment is read as one id (``ORG#o1``), as ids there often look like that."""


class _Flow(dict[str, Any]):
    """A small mapping written on one line (``{pk: c#{customerId}, sk: c#{customerId}}``), as people write them."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(
    _Flow, lambda dumper, data: dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)
)


@dataclass
class SampleGroup:
    """The sample items of one item type, and what the source says of them besides."""

    name: str
    items: list[Item]
    discriminator: tuple[str, str] | None = None
    types: Mapping[str, str] = field(default_factory=dict)
    """Attribute types a model declares (a Workbench model's ``NonKeyAttributes``), by attribute name."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Names a model gives the key attributes' values (a Workbench facet's ``KeyAttributeAlias``)."""


@dataclass
class Draft:
    text: str
    """The YAML declaration, suggestions as comments."""
    inferred: list[str]
    missed: list[str]


@dataclass
class _Slot:
    """A field of a key template: where it sits, and its values by item."""

    attribute: str
    position: int
    prefix: str | None
    values: dict[int, str]
    name: str = ""

    @property
    def date(self) -> bool:
        return all(_DATE.fullmatch(value) for value in self.values.values())

    @property
    def number(self) -> bool:
        return all(_NUMBER.fullmatch(value) for value in self.values.values())


@dataclass
class _Entity:
    group: SampleGroup
    templates: dict[str, list[str | _Slot]]
    """Key attribute: its segments, literals and slots (one slot object per field, shared by the keys holding it)."""
    joints: dict[str, tuple[str, ...]]
    """Key attribute: the separators between its segments."""
    sparse: set[str]
    fields: list[_Slot]

    @property
    def name(self) -> str:
        return self.group.name

    def pattern(self, attribute: str) -> str:
        texts = [part if isinstance(part, str) else "{" + part.name + "}" for part in self.templates[attribute]]
        return texts[0] + "".join(joint + text for joint, text in zip(self.joints[attribute], texts[1:], strict=True))

    def separator(self, attributes: Iterable[str]) -> str | None:
        """The separator other than ``#`` the templates of ``attributes`` need declared: the one that stands
        between two of their fields where no ``#`` does (ids hold no separator, so each key has one reading)."""
        needed: set[str] = set()
        for attribute in attributes:
            parts, joints = self.templates.get(attribute, []), self.joints.get(attribute, ())
            slots = [n for n, part in enumerate(parts) if isinstance(part, _Slot)]
            for start, end in pairwise(slots):
                between = [joint for joint in joints[start:end] if joint]
                if between and SEPARATOR not in between:
                    needed.add(between[0])
        return min(needed) if needed else None


def _shape(value: str) -> tuple[list[str], tuple[str, ...]]:
    """A key's segments, and the separators between them."""
    parts = _SEPARATORS.split(value)
    return parts[::2], tuple(parts[1::2])


def pascal(name: str) -> str:
    words = _WORD.findall(name) or [name]
    return "".join(word[:1].upper() + word[1:] for word in words)


def _literal_like(segment: str, last: bool, repeated: bool = False) -> bool:
    """Upper-case words are literals; short lower-case ones too, but last in a key only where several items repeat
    them (``ord``), as an id in last place is often such a word."""
    lower = (not last or repeated) and bool(_LOWER_LITERAL.fullmatch(segment))
    return bool(_UPPER_LITERAL.fullmatch(segment)) or lower


def _key_attributes(keys: KeySchema) -> list[tuple[str | None, str, str | None]]:
    return [(None, keys.pk, keys.sk), *((name, pk, sk) for name, (pk, sk) in keys.indexes.items())]


def _typed(keys: KeySchema, index: _Flow) -> _Flow:
    """An index's keys with the type of each that is not text (``sk_type: N``), as AttributeDefinitions says."""
    for part in ("pk", "sk"):
        kind = keys.types.get(index[part]) if part in index else None
        if kind is not None:
            index[f"{part}_type"] = kind
    return index


def find_discriminator(items: Sequence[Item], keys: KeySchema) -> str | None:
    """The text attribute every item holds and whose values name a handful of types, if there is one."""
    if not items:
        return None
    stored = {name for _, pk, sk in _key_attributes(keys) for name in (pk, sk) if name}
    common = set(items[0]).intersection(*items[1:]) - stored
    texts = [name for name in common if all(isinstance(item[name], str) for item in items)]
    ordered = [name for name in DISCRIMINATORS if name in texts] + sorted(set(texts) - set(DISCRIMINATORS))
    for name in ordered:
        kinds = {item[name] for item in items}
        # A value most items hold alone names the item (a title, a label), not its type.
        if 1 < len(kinds) <= len(items) // 2 or (name in DISCRIMINATORS and len(kinds) >= 1):
            return name
    return None


def groups_of(items: Sequence[Item], keys: KeySchema) -> list[SampleGroup]:
    """Items grouped into types: by their discriminator's value when they hold one, else by their keys' shape. Some
    tables write a type attribute on some item types only: named as one (``EntityType``), it wins over an attribute
    every item holds that merely repeats; the items without it are grouped by shape."""
    if keys.types:
        items = [_keys_as_text(item, keys.types) for item in items]
    told = find_discriminator(items, keys)
    if told not in DISCRIMINATORS:
        named = [name for name in DISCRIMINATORS if any(isinstance(item.get(name), str) for item in items)]
        told = named[0] if named else told
    keyed = [item for item in items if keys.pk in item]
    grouped: dict[str, list[Item]] = {}
    rest: list[Item] = []
    for item in keyed:
        kind = item.get(told) if told is not None else None
        if isinstance(kind, str):
            grouped.setdefault(kind, []).append(item)
        else:
            rest.append(item)
    typed = [SampleGroup(pascal(kind), members, (str(told), kind)) for kind, members in grouped.items()]
    return typed + [SampleGroup("", members) for members in _by_shape(rest, keys)]


def _keys_as_text(item: Item, types: Mapping[str, KeyType]) -> Item:
    """``item`` with its number and binary keys as the text of their ids (digits, base64), which templates hold."""
    out = dict(item)
    for name, kind in types.items():
        if name in out:
            out[name] = key_text(kind, out[name]) or out[name]
    return out


def _by_shape(items: Sequence[Item], keys: KeySchema) -> list[list[Item]]:
    """Items of one table-key shape: as many segments in each key, and the same text where every item has
    literal-looking text. A last segment is literal only where some items repeat it (ids differ from item to item;
    ``META`` does not)."""
    attributes = [name for name in (keys.pk, keys.sk) if name]

    def segments(item: Item) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(_shape(str(item.get(name, "")))[0]) for name in attributes)

    def joints(item: Item) -> tuple[tuple[str, ...], ...]:
        return tuple(_shape(str(item.get(name, "")))[1] for name in attributes)

    coarse: dict[tuple[tuple[str, ...], ...], list[Item]] = {}
    for item in items:
        coarse.setdefault(joints(item), []).append(item)
    out: list[list[Item]] = []
    for shape, members in coarse.items():
        widths = [len(one) + 1 for one in shape]
        # Positions that tell types apart: where every value is a word, or (True) where some glue one to a number.
        literal: list[tuple[int, int, bool]] = []
        for a, width in enumerate(widths):
            for position in range(width):
                last = position == width - 1
                seen = [segments(item)[a][position] for item in members]
                distinct = set(seen)
                repeated = len(distinct) == 1 or len(distinct) < len(seen)
                constant = len(distinct) == 1 and len(seen) > 1
                if position == 0 and any(_GLUED.fullmatch(one) for one in distinct):
                    literal.append((a, position, True))
                elif all(_literal_like(one, last, constant) for one in distinct) and (not last or repeated):
                    literal.append((a, position, False))
        fine: dict[tuple[str, ...], list[Item]] = {}
        for item in members:
            parts = segments(item)
            heads = tuple(_head(parts[a][n]) if glued else parts[a][n] for a, n, glued in literal)
            fine.setdefault(heads, []).append(item)
        out += fine.values()
    return out


def _head(segment: str) -> str:
    """What items of one type share in a segment where some glue a word to a number or date: that word."""
    glued = _GLUED.fullmatch(segment)
    return "" if glued is None else glued.group(1)


def _glued(values: Iterable[str]) -> str | None:
    """The word every value glues to its number or date, if there is one."""
    heads = {match.group(1) if (match := _GLUED.fullmatch(value)) else None for value in values}
    return heads.pop() if len(heads) == 1 else None


def _entity(group: SampleGroup, keys: KeySchema, missed: list[str]) -> _Entity:
    templates: dict[str, list[str | _Slot]] = {}
    joints: dict[str, tuple[str, ...]] = {}
    sparse: set[str] = set()
    fields: list[_Slot] = []
    for index, pk, sk in _key_attributes(keys):
        holding = [i for i, item in enumerate(group.items) if pk in item and (sk is None or sk in item)]
        if not holding:
            continue
        if index is not None and len(holding) < len(group.items):
            sparse.update(name for name in (pk, sk) if name)
        for attribute in (pk, sk):
            if attribute is None:
                continue
            values = {i: str(group.items[i][attribute]) for i in holding}
            counts = Counter(_shape(value)[1] for value in values.values())
            between, _ = counts.most_common(1)[0]
            width = len(between) + 1
            if len(counts) > 1:
                missed.append(
                    f"{group.name or 'an item type'}: {attribute} has values of several shapes; drafted"
                    f" the most common one, the others are variants to declare by hand"
                )
                values = {i: value for i, value in values.items() if _shape(value)[1] == between}
            split = {i: _shape(value)[0] for i, value in values.items()}
            parts: list[str | _Slot] = []
            glues: list[str] = []
            for position in range(width):
                if position:
                    glues.append(between[position - 1])
                seen = {i: segments[position] for i, segments in split.items()}
                constant = len(set(seen.values())) == 1
                word = _glued(seen.values()) if position == 0 else None
                value = next(iter(seen.values()))
                if word is None and constant and _literal_like(value, position == width - 1, len(seen) > 1):
                    parts.append(value)
                    continue
                if word is not None:
                    parts.append(word)
                    glues.append("")
                    seen = {i: value[len(word) :] for i, value in seen.items()}
                prefix = parts[-1] if parts and isinstance(parts[-1], str) else None
                slot = _Slot(attribute, position, prefix, seen)
                same = next((one for one in fields if _same_values(one.values, seen)), None)
                if same is None:
                    fields.append(slot)
                    same = slot
                parts.append(same)
            templates[attribute] = parts
            joints[attribute] = tuple(glues)
    return _Entity(group, templates, joints, sparse, fields)


def _same_values(a: Mapping[int, str], b: Mapping[int, str]) -> bool:
    common = a.keys() & b.keys()
    return bool(common) and all(a[i] == b[i] for i in common)


def _words(name: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(name)]


def _keys(pk: str, sk: str | None) -> _Flow:
    """A partition key and a sort key, as an index or a key shape writes them: without ``sk`` where there is none
    (a table or an index keyed by its partition key alone)."""
    return _Flow(pk=pk) if sk is None else _Flow(pk=pk, sk=sk)


def _lower_camel(name: str) -> str:
    return name[:1].lower() + name[1:]


def _name_entities(entities: list[_Entity], keys: KeySchema) -> None:
    """Types without a discriminator are named after their keys' literal text: ``PROJ#{…}`` is ``Proj``."""
    taken: set[str] = {entity.name for entity in entities if entity.name}
    for entity in entities:
        if entity.name:
            continue
        pk = entity.templates.get(keys.pk, [])
        sk = entity.templates.get(keys.sk or "", [])
        own = [part for part in sk if isinstance(part, _Slot) and part not in pk]
        source = sk if own else pk
        literal = next((part for part in source if isinstance(part, str)), None) or "Item"
        name = pascal(literal.lower())
        n = 2
        while name in taken:
            name, n = f"{pascal(literal.lower())}{n}", n + 1
        taken.add(name)
        entity.group.name = name


def _owners(entities: list[_Entity], keys: KeySchema) -> dict[str, str]:
    """Which entity a key prefix belongs to: the one whose own id follows it in its table key."""
    owners: dict[str, str] = {}
    later: list[tuple[str, str]] = []
    for entity in entities:
        pk = entity.templates.get(keys.pk, [])
        sk = entity.templates.get(keys.sk or "", [])
        own = [part for part in sk if isinstance(part, _Slot) and part not in pk]
        if own:
            if own[-1].prefix:
                later.append((own[-1].prefix, entity.name))
        elif pk and isinstance(pk[-1], _Slot) and pk[-1].prefix:
            owners.setdefault(pk[-1].prefix, entity.name)
    for prefix, name in later:
        owners.setdefault(prefix, name)
    return owners


def _name_fields(entity: _Entity, owners: Mapping[str, str], words: Sequence[str], keys: KeySchema) -> None:
    taken: set[str] = set()
    entity_words = _words(entity.name) or ["item"]
    for slot in entity.fields:
        name: str | None = _named_by_attribute(entity, slot, keys) or _named_by_alias(entity, slot)
        if name is None and slot.date:
            word = entity_words[0]
            name = f"{word}{'d' if word.endswith('e') else 'ed'}At"
        if name is None and slot.prefix is not None:
            owner = owners.get(slot.prefix)
            if owner is not None:
                name = f"{_lower_camel(owner)}Id"
            else:
                found = next((w for w in words if w.startswith(slot.prefix.lower())), None)
                name = f"{found or slot.prefix.lower()}Id"
        base = name or f"{entity_words[0]}Key"
        unique, n = base, 2
        while unique in taken:
            unique, n = f"{base}{n}", n + 1
        taken.add(unique)
        slot.name = unique


def _named_by_attribute(entity: _Entity, slot: _Slot, keys: KeySchema) -> str | None:
    """A plain attribute that holds the same value as the key (``username`` beside ``USER#{username}``)."""
    if slot.date:
        return None
    stored = {name for _, pk, sk in _key_attributes(keys) for name in (pk, sk) if name}
    items = entity.group.items
    for name in sorted(set().union(*(item.keys() for item in items)) - stored):
        if all(isinstance(items[i].get(name), str) and items[i][name] == value for i, value in slot.values.items()):
            return name
    return None


def _named_by_alias(entity: _Entity, slot: _Slot) -> str | None:
    alias = entity.group.aliases.get(slot.attribute)
    single = sum(isinstance(part, _Slot) for part in entity.templates[slot.attribute]) == 1
    if alias is None or not single or alias == slot.attribute or not re.fullmatch(r"[A-Za-z_][\w]*", alias):
        return None
    return _lower_camel(alias)


def _attribute(values: list[Any], declared: str | None) -> str | dict[str, Any]:
    if declared in ("M", "L"):
        return "JSON"
    if all(isinstance(value, bool) for value in values):
        return "BOOL"
    if all(isinstance(value, str) for value in values):
        if values and all(_NUMBER.fullmatch(value) for value in values):
            kind = "INT" if all("." not in value and abs(int(value)) < 2**31 for value in values) else "N"
            return _Flow(type=kind, text=True)
        if values and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) for value in values):
            return "DATE"
        return "S"
    if all(isinstance(value, Decimal) for value in values):
        integral = all(value == value.to_integral_value() and abs(value) < 2**31 for value in values)
        return "INT" if integral else "N"
    if all(isinstance(value, set) for value in values):
        return _set_type(values)
    return "JSON"


def _set_type(sets: list[set[Any]]) -> str:
    """A set's type from its elements: a set of mixed elements is no set type, so it is JSON (served as it is)
    rather than a string set that would serve it null."""
    elements = [one for value in sets for one in value]
    if all(isinstance(one, str) for one in elements):
        return "SS"
    if all(isinstance(one, Decimal) for one in elements):
        return "NS"
    return "BS" if all(is_binary_set(value) for value in sets) else "JSON"


def draft(groups: Sequence[SampleGroup], keys: KeySchema, table: str) -> Draft:
    """The declaration the sample items suggest, with what was inferred and what was not."""
    inferred: list[str] = []
    missed: list[str] = []
    entities = [_entity(group, keys, missed) for group in groups if group.items]
    _name_entities(entities, keys)
    owners = _owners(entities, keys)
    words = sorted({word for entity in entities for word in _words(entity.name)}, key=len)
    for entity in entities:
        _name_fields(entity, owners, words, keys)
    stored = {name for _, pk, sk in _key_attributes(keys) for name in (pk, sk) if name}
    data: dict[str, Any] = {"table": table, "keys": _typed(keys, _keys(keys.pk, keys.sk))}
    if keys.indexes:
        data["indexes"] = {name: _typed(keys, _keys(pk, sk)) for name, (pk, sk) in keys.indexes.items()}
    declared: dict[str, Any] = {}
    for entity in entities:
        out: dict[str, Any] = {"keys": {}}
        for index, pk, sk in _key_attributes(keys):
            if pk not in entity.templates or (sk is not None and sk not in entity.templates):
                continue
            shape = _keys(entity.pattern(pk), entity.pattern(sk) if sk else None)
            if pk in entity.sparse:
                shape["sparse"] = True
            separator = entity.separator(name for name in (pk, sk) if name)
            if separator is not None:
                shape["separator"] = separator
            out["keys"][TABLE_KEYS if index is None else index] = shape
            where = TABLE_KEYS if index is None else index
            templates = " / ".join(shape[name] for name in ("pk", "sk") if name in shape)
            inferred.append(f"{entity.name}: {where} keys {templates}")
        if entity.group.discriminator is not None:
            attribute, value = entity.group.discriminator
            out["discriminator"] = _Flow(attribute=attribute, value=value)
            inferred.append(f"{entity.name}: told apart by {attribute} = {value!r}")
        for slot in entity.fields:
            kind = "a date" if slot.date else "a number" if slot.number else None
            if kind:
                inferred.append(f"{entity.name}.{slot.name}: {kind}, kept as key text")
        ids = {slot.name for slot in entity.fields}
        skip = stored | ({entity.group.discriminator[0]} if entity.group.discriminator else set())
        names = sorted(set().union(*(item.keys() for item in entity.group.items)) - skip)
        attributes: dict[str, Any] = {}
        for name in names:
            if name in ids:
                attributes[name] = _Flow(type="S", from_id=name)
                continue
            values = [item[name] for item in entity.group.items if item.get(name) is not None]
            attributes[name] = _attribute(values, entity.group.types.get(name))
        if attributes:
            out["attributes"] = attributes
        declared[entity.name] = out
    data["entities"] = declared
    suggestions = _checks(entities) + _suggestions(entities, keys)
    missed += [
        "relations: collections and links are suggested as comments, never declared",
        "orders: every suggested collection reads ascending; say ascending: false where newest comes first",
        "counters: none are drafted; declare an INT attribute with writable: false and name it as a counter",
    ]
    text = (
        f"# yaml-language-server: $schema={SCHEMA_PATH.as_uri()}\n"
        "# A draft: check the names, then uncomment the relations that hold.\n"
        + yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)
        + "".join(f"{line}\n" for line in suggestions)
    )
    try:
        parse(text, "the draft")
    except DeclarationFileError as error:
        missed.append(f"the draft does not build yet: {error}")
        text += _unbuilt(str(error))
    return Draft(text, inferred, missed)


def _checks(entities: Sequence[_Entity]) -> list[str]:
    """Keys a sample cannot vouch for: a whole key that is one field, in a type told apart by shape alone. Where
    some of its values are words (``sh``, ``a``), items of several types may have been taken for one."""
    lines: list[str] = []
    for entity in entities:
        if entity.group.discriminator is not None:
            continue
        for attribute, parts in entity.templates.items():
            if len(parts) == 1 and isinstance(parts[0], _Slot):
                seen = ", ".join(sorted(set(parts[0].values.values()))[:3])
                lines += [
                    f"# Check {entity.name}: its {attribute} is one field with no literal text ({seen}, ...). If some",
                    "# of these values are words rather than ids, the sample held several item types here: declare",
                    "# each with its literal text, or give each a discriminator value.",
                ]
    return ["", *lines] if lines else []


def _unbuilt(error: str) -> str:
    """The reason a draft does not build, written into it: the sample could not tell its item types apart."""
    lines = [
        "",
        "# This draft does not build yet: the sample could not tell these item types apart.",
        *(f"# {line}" for line in error.splitlines()),
        "# Check their key templates (a word glued to an id that starts with letters reads as part of the id:",
        "# write the word before the {field}) or give each a discriminator value.",
    ]
    return "".join(f"{line}\n" for line in lines)


def _suggestions(entities: Sequence[_Entity], keys: KeySchema) -> list[str]:
    """Collections where one entity's partition template is another's, and the parent-less partitions."""
    partitions: dict[str, list[tuple[_Entity, str | None]]] = {}
    for entity in entities:
        for index, pk, _ in _key_attributes(keys):
            if pk in entity.templates:
                partitions.setdefault(entity.pattern(pk), []).append((entity, index))
    lines: list[str] = []
    collections: list[str] = []
    orphans: list[str] = []
    for pattern, holders in partitions.items():
        parents = [entity for entity, _ in holders if _parent_of(entity, pattern, keys)]
        members = [(entity, index) for entity, index in holders if entity not in parents]
        if not members:
            continue
        if not parents:
            orphans.append(f"#   {pattern}: {', '.join(sorted({entity.name for entity, _ in members}))}")
            continue
        parent = parents[0]
        for member, index in members:
            collections += [
                f"#   {parent.name}.{_lower_camel(member.name)}s:",
                f"#     parent: {parent.name}",
                f"#     member: {member.name}",
                *([f"#     index: {index}"] if index is not None else []),
                "#     ascending: true",
            ]
    if collections:
        lines += ["", "# Suggested: members that share a partition with a parent (check each one).", "# collections:"]
        lines += collections
    if orphans:
        lines += ["", "# Partitions no item of their own heads: collections without a parent, to declare by hand."]
        lines += orphans
    return lines


def _parent_of(entity: _Entity, pattern: str, keys: KeySchema) -> bool:
    """Whether ``entity`` heads the partition: its keys in some index are that partition, and their sort key adds
    no id (``sh#{shipmentId}`` / ``sh#{shipmentId}``)."""
    for _, pk, sk in _key_attributes(keys):
        if pk not in entity.templates or entity.pattern(pk) != pattern:
            continue
        held = entity.templates[pk]
        if not any(isinstance(part, _Slot) and part not in held for part in entity.templates.get(sk or "", [])):
            return True
    return False


# --- NoSQL Workbench ------------------------------------------------------------------------------------------------


def _plain(value: Mapping[str, Any]) -> Any:
    """A value in DynamoDB's typed JSON (``{"S": "x"}``) as plain Python."""
    (kind, raw), *_ = value.items()
    match kind:
        case "S":
            return str(raw)
        case "N":
            return Decimal(str(raw))
        case "BOOL":
            return bool(raw)
        case "NULL":
            return None
        case "M":
            return {key: _plain(one) for key, one in raw.items()}
        case "L":
            return [_plain(one) for one in raw]
        case "SS":
            return set(raw)
        case "NS":
            return {Decimal(str(one)) for one in raw}
        case "BS":
            return {b64decode(one) for one in raw}
    return raw


def _items(rows: Iterable[Mapping[str, Any]]) -> list[Item]:
    return [
        {key: _plain(value) if isinstance(value, dict) and len(value) == 1 else value for key, value in row.items()}
        for row in rows
    ]


def _workbench_keys(table: Mapping[str, Any]) -> KeySchema:
    def pair(keys: Mapping[str, Any]) -> tuple[str, str | None]:
        sort = keys.get("SortKey")
        return keys["PartitionKey"]["AttributeName"], sort["AttributeName"] if sort else None

    pk, sk = pair(table["KeyAttributes"])
    indexes = {index["IndexName"]: pair(index["KeyAttributes"]) for index in table.get("GlobalSecondaryIndexes", [])}
    return KeySchema(pk, sk, indexes)


def from_workbench(document: Mapping[str, Any]) -> tuple[Draft, str]:
    """The draft of a Workbench model's first table, and that table's name. ValueError for another document."""
    tables = document.get("DataModel")
    if not isinstance(tables, list) or not tables:
        raise ValueError("not a NoSQL Workbench data model: it has no DataModel list of tables")
    table = tables[0]
    try:
        keys = _workbench_keys(table)
    except (KeyError, TypeError):
        raise ValueError("the model's table has no KeyAttributes with a PartitionKey") from None
    types = {one["AttributeName"]: one["AttributeType"] for one in table.get("NonKeyAttributes", [])}
    facets = table.get("TableFacets", [])
    groups: list[SampleGroup] = []
    for facet in facets:
        alias = facet.get("KeyAttributeAlias", {})
        aliases = {
            attribute: alias[name]
            for attribute, name in ((keys.pk, "PartitionKeyAlias"), (keys.sk, "SortKeyAlias"))
            if attribute and name in alias
        }
        groups.append(SampleGroup(pascal(facet["FacetName"]), _items(facet.get("TableData", [])), None, types, aliases))
    if not groups:
        groups = groups_of(_items(table.get("TableData", [])), keys)
        for group in groups:
            group.types = types
    _tell_apart(groups, keys)
    result = draft(groups, keys, table.get("TableName", "table"))
    empty = [group.name for group in groups if not group.items]
    result.missed += [f"{name}: the facet has no sample items, so no key templates" for name in empty]
    return result, table.get("TableName", "table")


def _tell_apart(groups: list[SampleGroup], keys: KeySchema) -> None:
    """Facets' discriminator: an attribute each facet's items hold with one value, a different one per facet."""
    if any(group.discriminator for group in groups):
        return
    found = find_discriminator([item for group in groups for item in group.items], keys)
    if found is None:
        return
    for group in groups:
        kinds = {item.get(found) for item in group.items}
        if len(kinds) == 1 and isinstance(next(iter(kinds)), str):
            group.discriminator = (found, str(next(iter(kinds))))
