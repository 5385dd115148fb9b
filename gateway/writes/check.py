"""``tablegraph check``: a declaration held against a live table, from its description and from its items."""

from __future__ import annotations

import asyncio
import base64
import difflib
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from gateway.design import values
from gateway.design.declaration import WriteModel
from gateway.design.keys import head
from gateway.design.model import Attribute, Entity, Index, Item, KeyShape, Model, served_value
from gateway.design.segments import fold
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.store import Store
from gateway.dynamo.streams import LEASE_PK
from gateway.errors import GatewayError
from gateway.writes import building

Progress = Callable[[str, int, int], None]
"""Told (phase, done, total) as the work goes; ``total`` may be an estimate while scanning."""

Severity = Literal["error", "warning"]

EXAMPLES = 5
"""Example keys kept per finding, by default."""
SEGMENTS = 4
"""Parallel segments of the Scan of ``--full``."""
NEAR = 0.6
"""How alike a key's head and a template's must be to be named as a likely typo (difflib's ratio)."""

KEY_KINDS = frozenset({"table-keys", "key-type", "index-missing", "index-keys", "index-kind", "projection"})
"""Schema findings of a table whose keys (or projections) contradict the declaration: ``serve`` refuses to start on
them, as reads would serve nulls the table contradicts."""


@dataclass
class Finding:
    """Items (or the table itself) that disagree with the declaration in one way, with what to do about it."""

    kind: str
    subject: str
    """What disagrees: an index, an entity's attribute, a shape of key."""
    problem: str
    fix: str
    severity: Severity = "error"
    count: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)
    """Up to ``Report.examples`` of ``{"key": {...}}``, with a ``detail`` where items differ in how they differ."""

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "subject": self.subject,
            "problem": self.problem,
            "fix": self.fix,
            "count": self.count,
            "examples": self.examples,
        }


@dataclass
class Report:
    """What a check found, grouped: one finding per kind, subject and problem."""

    table: str
    full: bool
    examples: int = EXAMPLES
    scanned: int = 0
    complete: bool = False
    """Whether every item of the table was read (always with ``full``; a sample of a small table too)."""
    described: int = 0
    """DynamoDB's estimate of the table's item count (refreshed about every six hours)."""
    _found: dict[tuple[str, str, str], Finding] = field(default_factory=dict)

    def add(
        self,
        kind: str,
        subject: str,
        problem: str,
        fix: str,
        key: Mapping[str, Any] | None = None,
        detail: str | None = None,
        severity: Severity = "error",
    ) -> None:
        finding = self._found.setdefault((kind, subject, problem), Finding(kind, subject, problem, fix, severity))
        finding.count += 1
        if key is not None and len(finding.examples) < self.examples:
            example: dict[str, Any] = {"key": {name: _plain(value) for name, value in key.items()}}
            if detail is not None:
                example["detail"] = detail
            finding.examples.append(example)

    @property
    def findings(self) -> list[Finding]:
        """Errors first, then by kind and subject."""
        return sorted(self._found.values(), key=lambda one: (one.severity != "error", one.kind, one.subject))

    @property
    def errors(self) -> list[Finding]:
        return [one for one in self.findings if one.severity == "error"]

    def kinds(self) -> Counter[str]:
        """How many items (or schema mismatches) each kind of finding counts."""
        counts: Counter[str] = Counter()
        for one in self._found.values():
            counts[one.kind] += one.count
        return counts

    def as_json(self) -> dict[str, Any]:
        """The stable shape of ``check --json`` (docs/cli.md)."""
        return {
            "table": self.table,
            "mode": "full" if self.full else "sample",
            "scanned": self.scanned,
            "complete": self.complete,
            "clean": not self.errors,
            "counts": dict(sorted(self.kinds().items())),
            "findings": [one.as_json() for one in self.findings],
        }


# --- the table's description ------------------------------------------------------------------------------------


def declared_keys(index: Index) -> list[tuple[str, str, str]]:
    """(attribute, HASH or RANGE, DynamoDB type) of ``index`` as declared."""
    keys: list[tuple[str, str, str]] = [(index.pk, "HASH", index.pk_type)]
    if index.sk is not None:
        keys.append((index.sk, "RANGE", index.sk_type))
    return keys


def _narrower(index: Index, projection: Mapping[str, Any]) -> str | None:
    """What the table's index lacks of the declared projection (None when it holds at least that)."""
    kind = projection.get("ProjectionType", "ALL")
    declared = index.projection
    if kind == "ALL" or declared == "KEYS_ONLY":
        return None
    shown = "ALL" if declared == "ALL" else f"INCLUDE {list(declared)}"
    if kind == "KEYS_ONLY" or declared == "ALL":
        return f"projects {kind} where {shown} is declared"
    missing = sorted(set(declared) - set(projection.get("NonKeyAttributes", [])))
    return f"projects INCLUDE without {missing} where {shown} is declared" if missing else None


def check_description(description: Mapping[str, Any], model: Model, report: Report) -> None:
    """Add to ``report`` where a DescribeTable answer's ``Table`` disagrees with ``model``: the keys, names and types
    of the table and each declared index, their projections, and the stream that subscriptions read."""
    types = {one["AttributeName"]: one["AttributeType"] for one in description.get("AttributeDefinitions", [])}
    gsis = {one["IndexName"]: one for one in description.get("GlobalSecondaryIndexes", [])}
    lsis = {one["IndexName"]: one for one in description.get("LocalSecondaryIndexes", [])}
    _check_keys(report, "the table", model.index(None), description.get("KeySchema", []), types)
    for index in model.indexes:
        if index.name is None:
            continue
        subject = f"index {index.name}"
        if index.name in lsis and index.name not in gsis:
            report.add(
                "index-kind",
                subject,
                "is a local secondary index in the table, declared as a global one",
                "a local index shares the table's partition key: declare it as the table has it, or make a global "
                "index of that name",
            )
            continue
        gsi = gsis.get(index.name)
        if gsi is None:
            report.add(
                "index-missing",
                subject,
                "is declared but the table has no such index",
                f"create it (`tablegraph create-table` makes a new table with every declared index), name the table's "
                f"index in the declaration (the table has: {', '.join(sorted(gsis)) or 'none'}), or drop the index "
                "and every key declared in it",
            )
            continue
        _check_keys(report, subject, index, gsi.get("KeySchema", []), types)
        problem = _narrower(index, gsi.get("Projection", {}))
        if problem is not None:
            report.add(
                "projection",
                subject,
                problem + ": items read through it would lack attributes the declaration reads there",
                "declare the projection the index has (projection=...; YAML: projection: ...), or create the index"
                " anew with the declared one (DynamoDB cannot change a projection)",
            )
    stream = description.get("StreamSpecification") or {}
    if not stream.get("StreamEnabled") or stream.get("StreamViewType") not in ("NEW_AND_OLD_IMAGES", "NEW_IMAGE"):
        report.add(
            "streams",
            "the table",
            "has no stream with item images: subscriptions are refused",
            "turn on the table's stream with NEW_AND_OLD_IMAGES (UpdateTable StreamSpecification)",
            severity="warning",
        )


def _check_keys(
    report: Report, subject: str, index: Index, schema: Iterable[Mapping[str, str]], types: Mapping[str, str]
) -> None:
    kind = "table-keys" if index.name is None else "index-keys"
    actual = {one["KeyType"]: one["AttributeName"] for one in schema}
    declared = declared_keys(index)
    for attribute, role, type_ in declared:
        found = actual.get(role)
        if found is None:
            report.add(
                kind,
                subject,
                f"has no {_ROLE[role]} where {attribute!r} is declared",
                f"declare {subject} with the table's keys: {_keys_text(actual)}",
            )
        elif found != attribute:
            report.add(
                kind,
                subject,
                f"has the {_ROLE[role]} {found!r} where {attribute!r} is declared",
                f"declare {subject} with the table's keys: {_keys_text(actual)}",
            )
        elif types.get(found, type_) != type_:
            report.add(
                "key-type",
                subject,
                f"its {_ROLE[role]} {found!r} is of type {types[found]} where {type_} is declared",
                f"declare {found!r} as the table types it ({types[found]})",
            )
    if "RANGE" in actual and len(declared) == 1:
        report.add(
            kind,
            subject,
            f"has the sort key {actual['RANGE']!r} where none is declared",
            f"declare {subject} with the table's keys: {_keys_text(actual)}",
        )


_ROLE = {"HASH": "partition key", "RANGE": "sort key"}


def _keys_text(keys: Mapping[str, str]) -> str:
    return ", ".join(f"{_ROLE[role]} {name!r}" for role, name in sorted(keys.items())) or "none"


# --- the items --------------------------------------------------------------------------------------------------


_checking: ContextVar[bool] = ContextVar("tablegraph_checking", default=False)


class _Quiet(logging.Filter):
    """Drops the design's lines about items it skips or values it serves as null while a check reads them: the
    check reports each of them, grouped, and a sample at start-up would otherwise log one line per item."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _checking.get()


_QUIET = _Quiet()


@contextmanager
def _quietly() -> Iterator[None]:
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("gateway.design"):
            logging.getLogger(name).addFilter(_QUIET)  # once: a filter is added only if absent
    token = _checking.set(True)
    try:
        yield
    finally:
        _checking.reset(token)


@dataclass
class _Parent:
    entity: Entity
    key: dict[str, Any]
    seen: dict[str, Any]


class ItemCheck:
    """Every item seen must be one entity, hold what its attributes declare, have index keys of its shapes, copies
    equal to its ids and, when every item was seen, counters equal to its members' count (``counters``)."""

    def __init__(self, declaration: WriteModel, report: Report) -> None:
        self._writes = declaration
        self._model = declaration.model
        self._report = report
        self._table = self._model.index(None)
        self._members: Counter[tuple[tuple[str, str], str]] = Counter()
        self._parents: dict[tuple[str, str], _Parent] = {}

    def see(self, items: list[Item]) -> None:
        with _quietly():
            self._see(items)

    def _see(self, items: list[Item]) -> None:
        self._members.update(building.member_counts(self._writes, items))
        for item in items:
            self._report.scanned += 1
            if item.get(self._table.pk) == LEASE_PK:
                continue  # the gateway's own
            found = self._model.recognise(item)
            if found is None:
                self._unrecognised(item)
                continue
            entity, ids = found
            self._attributes(item, entity)
            self._index_keys(item, entity, ids)
            self._copies(item, entity, ids)
            counters = self._writes.children_of(entity)
            if counters:
                seen = {counted.attribute: item.get(counted.attribute) for counted in counters}
                self._parents[building.model_key(self._model, entity, ids)] = _Parent(entity, self._key(item), seen)

    def counters(self) -> None:
        """Compare each parent's counters with its members' count: only meaningful once every item was seen."""
        for key, parent in self._parents.items():
            for attribute, stored in parent.seen.items():
                counted = self._members[key, attribute]
                subject = f"{parent.entity.name}.{attribute}"
                if stored is None:
                    self._report.add(
                        "counter-absent",
                        subject,
                        "is absent: the item was written by another tool",
                        "run `tablegraph recount` to set every counter",
                        parent.key,
                        f"{counted} counted",
                        severity="warning",
                    )
                elif not isinstance(stored, Decimal) or stored != counted:
                    self._report.add(
                        "counter",
                        subject,
                        "differs from the number of its members",
                        "run `tablegraph recount` when nothing writes (a tool that adds or removes members "
                        "without the gateway must keep the counter too)",
                        parent.key,
                        f"holds {_plain(stored)}, {counted} counted",
                    )

    def _key(self, item: Item) -> dict[str, Any]:
        names = [self._table.pk] if self._table.sk is None else [self._table.pk, self._table.sk]
        return {name: item.get(name) for name in names}

    # --- an item no entity recognises: why ---------------------------------------------------------------------

    def _unrecognised(self, item: Item) -> None:
        model, table, key = self._model, self._table, self._key(item)
        pk, sk = item.get(table.pk), "" if table.sk is None else item.get(table.sk)
        shaped = [
            (entity, ids)
            for entity in model.entities
            if not entity.partition and (ids := _parse(entity.primary, pk, sk)) is not None
        ]
        told = [(entity, ids) for entity, ids in shaped if _discriminated(entity, item)]
        whole = [(entity, ids) for entity, ids in told if self._index_problem(item, entity, ids, True) is None]
        if len(whole) > 1 or (not told and len(shaped) > 1 and not _holds_discriminator(shaped, item)):
            names = " and ".join(entity.name for entity, _ in (whole if len(whole) > 1 else shaped))
            attribute = next((e.discriminator[0] for e, _ in shaped if e.discriminator is not None), "EntityType")
            self._report.add(
                "ambiguous",
                names,
                f"the item has the table key of {names}, and nothing tells which",
                f"store the discriminator {attribute!r} on every such item with its entity's value",
                key,
            )
            return
        if told:
            entity, ids = told[0]
            index_problem = self._index_problem(item, entity, ids, True)
            if index_problem is not None:
                self._index_finding(entity, *index_problem, key)
                return
            self._report.add(
                "unrecognised",
                entity.name,
                f"the item has {entity.name}'s keys and is not recognised as one",
                "declare the keys the item holds",
                key,
            )
            return
        if shaped:
            entity = shaped[0][0]
            attribute, value = entity.discriminator or ("", "")
            stored = item.get(attribute)
            if stored is None:
                problem = f"the item has {entity.name}'s keys but no {attribute!r}"
                fix = f"store {attribute}={value!r} on {entity.name}'s items"
            else:
                problem = f"discriminator value {_plain(stored)!r} where {value!r} is declared"
                declare = _both(
                    f"discriminator=({attribute!r}, {stored!r})",
                    f"discriminator: {{attribute: {attribute}, value: {stored}}}",
                )
                case = isinstance(stored, str) and stored.lower() == value.lower()
                fix = (
                    f"declare {declare}: the items write it in that case"
                    if case
                    else f"declare {declare} if these are {entity.name}s, or declare the entity they are"
                )
            self._report.add("discriminator", f"{entity.name}.{attribute}", problem, fix, key)
            return
        self._report.add(
            "unrecognised",
            _shape_of(table, pk, sk),
            "no declared entity has this table key",
            self._near_miss(pk, sk) or "declare the entity these items are, or correct their keys",
            key,
        )

    def _near_miss(self, pk: Any, sk: Any) -> str | None:
        """The entity whose table key the item's has on one side, and nearly on the other: a typo, where one is."""
        if not isinstance(pk, str) or not isinstance(sk, str):
            return None
        for entity in self._model.entities:
            if entity.partition or entity.internal:
                continue
            shape = entity.primary
            pk_fits, sk_fits = shape.pk.parse(pk) is not None, shape.sk.parse(sk) is not None
            if pk_fits == sk_fits:
                continue
            template, value = (shape.sk, sk) if pk_fits else (shape.pk, pk)
            if difflib.SequenceMatcher(None, head(value), head(template.pattern)).ratio() >= NEAR:
                return (
                    f"the key is close to {entity.name}'s {shape.pk.pattern!r} / {shape.sk.pattern!r}: correct the "
                    "items' keys, or the declared template if the items are right"
                )
        return None

    # --- what a recognised item holds ----------------------------------------------------------------------------

    def _attributes(self, item: Item, entity: Entity) -> None:
        for name, spec in entity.declared.items():
            for where, kind, problem, fix in _value_problems(spec, item.get(name), f"{entity.name}.{name}"):
                self._report.add(kind, where, problem, fix, self._key(item), _detail(item.get(name)))

    def _index_keys(self, item: Item, entity: Entity, ids: dict[str, str]) -> None:
        problem = self._index_problem(item, entity, ids)
        if problem is not None:
            self._index_finding(entity, *problem, self._key(item))

    def _index_problem(
        self, item: Item, entity: Entity, ids: Mapping[str, str], required: bool = False
    ) -> tuple[str, str, str] | None:
        """(index, problem, fix) for the first declared index whose keys the item holds and that do not parse as
        one of the entity's shapes there, or that disagree with its table key; with ``required``, also one whose
        keys a non-sparse shape needs and the item lacks."""
        for name in entity.keys:
            if name is None:
                continue
            index = self._model.index(name)
            shapes = entity.shapes(name)
            names = [index.pk] if index.sk is None else [index.pk, index.sk]
            if not all(attribute in item for attribute in names):
                # Out of the index, as DynamoDB defines it: a finding only where recognition required the keys.
                if shapes[0].sparse or not required:
                    continue
                return (
                    name,
                    f"the item lacks {' and '.join(names)}, where every {entity.name} is declared in it",
                    f"declare {entity.name}'s keys in {name} {_both('sparse=True', 'sparse: true')} if its items may "
                    "leave the index, or write the keys",
                )
            pk = self._model.id_text(index.pk, item.get(index.pk))
            sk = "" if index.sk is None else self._model.id_text(index.sk, item.get(index.sk))
            for shape in shapes:
                more = _parse(shape, pk, sk)
                if more is not None and _agrees(shape, more, ids):
                    break
            else:
                patterns = " or ".join(f"{s.pk.pattern!r} / {s.sk.pattern!r}" for s in shapes)
                return (
                    name,
                    f"the item's {index.pk}/{index.sk} are not {entity.name}'s shape there ({patterns}), or "
                    "disagree with its table key",
                    f"correct the items' {name} keys, or declare the template they are written in",
                )
        return None

    def _index_finding(self, entity: Entity, index: str, problem: str, fix: str, key: Mapping[str, Any]) -> None:
        self._report.add("index-key", f"{entity.name} in {index}", problem, fix, key)

    def _copies(self, item: Item, entity: Entity, ids: Mapping[str, str]) -> None:
        canonical = self._model.canonical(entity, ids)
        for name, spec in entity.declared.items():
            stored = item.get(name)
            if spec.from_id is None or stored is None or spec.from_id not in ids:
                continue
            text = _plain(stored)
            if str(text) not in (ids[spec.from_id], canonical[spec.from_id]):
                self._report.add(
                    "copy",
                    f"{entity.name}.{name}",
                    f"the stored copy differs from the id {spec.from_id!r} in the item's key",
                    "rewrite the copies from the keys (the key is the item's identity; GraphQL serves the id from it)",
                    self._key(item),
                    f"holds {text!r}, the key says {ids[spec.from_id]!r}",
                )


def _agrees(shape: KeyShape, more: Mapping[str, str], ids: Mapping[str, str]) -> bool:
    """Whether an index key's ids are the item's, compared as the key writes them (``{id:lower}`` folds the id that
    recognition restored from its stored copy)."""
    cases = {**shape.pk.cases, **shape.sk.cases}
    for key, value in more.items():
        known = ids.get(key, value)
        if (fold(known, cases[key]) if key in cases else known) != value:
            return False
    return True


def _parse(shape: KeyShape, pk: Any, sk: Any) -> dict[str, str] | None:
    if not isinstance(pk, str) or not isinstance(sk, str):
        return None
    ids = shape.pk.parse(pk)
    more = shape.sk.parse(sk)
    if ids is None or more is None or any(ids.setdefault(k, v) != v for k, v in more.items()):
        return None
    return ids


def _discriminated(entity: Entity, item: Item) -> bool:
    return entity.discriminator is None or item.get(entity.discriminator[0]) == entity.discriminator[1]


def _holds_discriminator(shaped: list[tuple[Entity, dict[str, str]]], item: Item) -> bool:
    return any(entity.discriminator is not None and entity.discriminator[0] in item for entity, _ in shaped)


def _shape_of(table: Index, pk: Any, sk: Any) -> str:
    """Keys grouped by what templates read first: the text before the first separator of each."""

    def shown(value: Any) -> str:
        return f"{head(value)}#…" if isinstance(value, str) and "#" in value else repr(_plain(value))

    return f"{table.pk}={shown(pk)} {table.sk}={shown(sk)}"


def _value_problems(spec: Attribute, value: Any, where: str) -> list[tuple[str, str, str, str]]:
    """(where, kind, problem, fix) for each part of a stored value the declaration cannot serve."""
    if value is None:
        return []
    if spec.type == "M" and spec.shape is not None and isinstance(value, dict):
        return [
            problem
            for name, field_ in spec.shape.declared.items()
            for problem in _value_problems(field_, value.get(name), f"{where}.{name}")
        ]
    each = spec.each
    if each is not None and isinstance(value, list | set):
        # A list's first bad element stands for the rest: one example of it per item is enough to act on.
        return [problem for one in value for problem in _value_problems(each, one, f"{where}[]")][:1]
    try:
        served = served_value(spec, value, where)
    except (GatewayError, ValueError):  # refused rather than served as null: a mismatch all the same
        served = None
    if served is not None:
        return []
    stored = _dynamo_type(value)
    if spec.enum is not None and isinstance(value, str):
        declared = ", ".join(spec.choices)
        folded = [one for one in spec.choices if one.lower() == value.lower()]
        fix = (
            f"the items write {folded[0]!r} as {value!r}: declare the enum's values as stored"
            if folded
            else f"add {value!r} to the enum, or rewrite the items"
        )
        return [(where, "enum", f"holds {value!r}, outside its enum ({declared})", fix)]
    if spec.type == "DATE" and isinstance(value, str):
        return [(where, "attribute-type", "holds text that is no YYYY-MM-DD date", "declare it S, or rewrite it")]
    if spec.text and isinstance(value, str):
        return [(where, "attribute-type", "holds text that is no number", "declare it S, or rewrite it")]
    if spec.type in ("N", "INT") and isinstance(value, str):
        declare = _both(f"Attribute({spec.type!r}, text=True)", f"{{type: {spec.type}, text: true}}")
        if values.number_from_text(value) is not None:
            fix = f"declare {declare} if the items keep the number as text, or rewrite them"
            return [(where, "attribute-type", f"holds a number as text (S) where {spec.type} is declared", fix)]
        fix = "declare it S if the items hold text there, or rewrite them"
        return [(where, "attribute-type", f"holds text (S) where {spec.type} is declared", fix)]
    if spec.type == "INT" and isinstance(value, Decimal):
        return [(where, "attribute-type", "holds a number that is no 32-bit integer", "declare it N")]
    return [
        (
            where,
            "attribute-type",
            f"holds {stored} where {spec.type} is declared",
            f"declare it {stored} as the items hold it, or rewrite them",
        )
    ]


def _both(python: str, yaml: str) -> str:
    """A declaration's fix in both of its forms: the report does not know which one the declaration was written in."""
    return f"{python} (YAML: {yaml})"


def _dynamo_type(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOL"
    if isinstance(value, str):
        return "S"
    if isinstance(value, Decimal | int | float):
        return "N"
    if isinstance(value, bytes | bytearray) or (hasattr(value, "value") and isinstance(value.value, bytes)):
        return "B"
    if isinstance(value, list):
        return "L"
    if isinstance(value, dict):
        return "M"
    if isinstance(value, set):
        kinds = {_dynamo_type(one) for one in value}
        return f"{kinds.pop()}S" if len(kinds) == 1 else "a set"
    return type(value).__name__


def _plain(value: Any) -> Any:
    """A stored value as JSON holds it: numbers as int or float, binary as base64."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if hasattr(value, "value") and isinstance(value.value, bytes):  # boto3's Binary
        return base64.b64encode(value.value).decode("ascii")
    if isinstance(value, set | frozenset | list | tuple):
        return [_plain(one) for one in value]
    if isinstance(value, dict):
        return {name: _plain(one) for name, one in value.items()}
    return value


def _detail(value: Any) -> str:
    text = repr(_plain(value))
    return f"holds {text if len(text) <= 60 else text[:57] + '...'}"


# --- the checks -------------------------------------------------------------------------------------------------


def check_sample(
    description: Mapping[str, Any],
    items: list[Item],
    declaration: WriteModel,
    table: str,
    complete: bool,
    examples: int = EXAMPLES,
) -> Report:
    """The check of a description and a sample of items read from the table: its counters only when ``complete``
    (counting members needs every item)."""
    report = Report(table, full=False, examples=examples, complete=complete)
    report.described = int(description.get("ItemCount", 0))
    check_description(description, declaration.model, report)
    items_check = ItemCheck(declaration, report)
    items_check.see(items)
    if complete:
        items_check.counters()
    return report


async def check_table(
    store: Store, declaration: WriteModel, progress: Progress, examples: int = EXAMPLES, segments: int = SEGMENTS
) -> Report:
    """The check of every item, read by a Scan in ``segments`` parallel segments, offline like ``recount``."""
    description = await store.describe()
    report = Report(store.table, full=True, examples=examples, complete=True)
    report.described = int(description.get("ItemCount", 0))
    check_description(description, declaration.model, report)
    items_check = ItemCheck(declaration, report)
    ledger = Ledger()

    async def scan(segment: int) -> None:
        async for page in store.scan_pages(ledger, (segment, segments)):
            items_check.see(page)
            progress("checking", report.scanned, max(report.described, report.scanned))

    await asyncio.gather(*(scan(segment) for segment in range(segments)))
    progress("checking", report.scanned, report.scanned)
    items_check.counters()
    return report
