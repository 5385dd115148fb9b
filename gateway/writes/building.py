"""Write building: pure functions from an intended change to the conditional DynamoDB writes that make it safe.

Like ``plan`` for reads, nothing here sends anything: the store sends, the writer interprets the answer.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from gateway.design.declaration import Counted, WriteModel
from gateway.design.keys import Ids
from gateway.design.model import Clock, Entity, Item, KeyShape, Model, Numbering, graphql_name, indexed_values
from gateway.design.rules import Caller, Now, Rule, Transition
from gateway.design.values import SetChange
from gateway.dynamo.requests import TRANSACTION_LIMIT, Placeholders, Refused, Role, Target, WriteOp
from gateway.errors import BadUserInput

VERSION = "version"
WRITE_ID = "writeId"
"""The id of the gateway write that last created or changed the item (counters aside): when DynamoDB's answer to
a write is lost and the retry is refused, the item still carrying this write's id shows that it was applied."""
TOKEN_LIFETIME_SECONDS = 24 * 3600
CLAIM_SECONDS = 300
"""How long a token stays claimed by a mutation of several writes (a cascade) that has not finished: a retry in
that time is told it is in progress; after it (the process died), the retry runs it again."""

Outcome = Literal["applied", "refused", "unknown"]


# --- ids ------------------------------------------------------------------------------------------------------


def mint_id(now: datetime | None = None) -> str:
    """A new project or ticket id: UTC time to the microsecond, then a random suffix.

    Ids sort by creation time (``20260315T142501.123456Z-9f3ac1d2``), contain no ``#``, and sort after the
    ``2026-0042`` form of the same year, so both forms keep newest-first order together.
    """
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{moment:%Y%m%dT%H%M%S.%f}Z-{secrets.token_hex(4)}"


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80


class Ulids:
    """ULIDs (26 characters of Crockford's base32: 48 bits of UTC milliseconds, then 80 random bits), so ids sort
    by creation time to the millisecond. Within one millisecond each is the one before plus 1 (the ULID spec's
    monotonic order), so one process's ids sort in the order it minted them; two processes' ids of the same
    millisecond sort at random."""

    def __init__(self) -> None:
        self._last = (-1, 0)

    def __call__(self, now: datetime | None = None) -> str:
        millis = int((now or datetime.now(UTC)).timestamp() * 1000)
        last_millis, last_random = self._last
        if millis <= last_millis and last_random + 1 < 1 << _RANDOM_BITS:
            millis, random = last_millis, last_random + 1  # a clock that stepped back does not reorder ids either
        else:
            random = secrets.randbits(_RANDOM_BITS)
        self._last = (millis, random)
        value = millis << _RANDOM_BITS | random
        return "".join(_CROCKFORD[value >> shift & 31] for shift in range(125, -1, -5))


mint_ulid = Ulids()


def minted(entity: Entity) -> dict[str, str]:
    """The id a create of ``entity`` mints before it writes: a time or a ULID. A number is taken by the writer, in
    the create's transaction; nothing is minted for an entity without ``mint``."""
    if entity.mint is None or isinstance(entity.minted, Numbering):
        return {}
    return {entity.mint: mint_ulid() if entity.minted == "ulid" else mint_id()}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def id_copies(entity: Entity, ids: Mapping[str, str | None]) -> dict[str, Any]:
    """The stored copies (``from_id``) of the ``ids`` given, typed as declared: a number where the attribute is an
    N or INT (``"0042"`` as 42), text otherwise; None for an id removed (its copy goes with it)."""
    out: dict[str, Any] = {}
    for name, spec in entity.declared.items():
        if spec.from_id is None or spec.from_id not in ids:
            continue
        value = ids[spec.from_id]
        if value is not None and spec.type in ("N", "INT") and not spec.text:
            argument = graphql_name(spec.from_id)
            try:
                number = Decimal(value)
            except ArithmeticError:
                raise BadUserInput(f"{argument} must be a number: it is stored as one", argument=argument) from None
            if not number.is_finite() or (spec.type == "INT" and number != number.to_integral_value()):
                raise BadUserInput(f"{argument} must be a whole number: it is stored as one", argument=argument)
            out[name] = int(number) if spec.type == "INT" else number
        else:
            out[name] = value
    return out


def today(now: datetime | None = None) -> str:
    return f"{(now or datetime.now(UTC)).astimezone(UTC):%Y-%m-%d}"


def stamps(entity: Entity, creating: bool, now: datetime | None = None) -> dict[str, Any]:
    """The times a write keeps on its item: ``on_update`` ones on every create and update, ``on_create="now"`` ones
    on a create, each as its ``clock`` writes it; one instant for all of them."""
    at = (now or datetime.now(UTC)).astimezone(UTC)
    return {
        name: stamp(spec.clock, at)
        for name, spec in entity.declared.items()
        if spec.on_update == "now" or (creating and spec.on_create == "now")
    }


def stamp(clock: Clock | None, at: datetime) -> str | int:
    """``at`` as ``clock`` writes it: ISO-8601 in UTC to the millisecond (JavaScript's ``toISOString``), or whole
    seconds or milliseconds since the epoch."""
    millis = (at - _EPOCH) // timedelta(milliseconds=1)
    if clock == "milliseconds":
        return millis
    if clock == "seconds":
        return millis // 1000
    return f"{at:%Y-%m-%dT%H:%M:%S}.{at.microsecond // 1000:03d}Z"


def new_write_id() -> str:
    """A fresh id for one write, sent with every attempt of it: 64 random bits, so no two writes share one."""
    return secrets.token_hex(8)


# --- single items ---------------------------------------------------------------------------------------------


def create(
    model: Model,
    entity: Entity,
    ids: Ids,
    attributes: Mapping[str, Any],
    counters: Iterable[str],
    *,
    write_id: str,
) -> WriteOp:
    """Put a new item at version 1 with its counters at 0 and the defaults of what the gateway keeps; refused if an
    item with that key exists."""
    expr = Placeholders()
    values = {name: value for name, value in attributes.items() if value is not None}
    declared = entity.declared.items()
    kept = {name: spec.default for name, spec in declared if not spec.writable and spec.default is not None}
    item = model.item(entity, ids, {**kept, **values, VERSION: 1, **dict.fromkeys(counters, 0), WRITE_ID: write_id})
    return WriteOp(
        "Put",
        model.key(entity, ids),
        Target(entity, ids, "item"),
        item=item,
        condition=f"attribute_not_exists({expr.name(model.index(None).pk)})",
        names=expr.names,
        write_id=write_id,
        version=1,
    )


def update(
    model: Model,
    entity: Entity,
    ids: Ids,
    changes: Mapping[str, Any],
    expected_version: int | None,
    *,
    write_id: str,
    rules: Sequence[Rule | Transition] = (),
    caller: str = "",
) -> WriteOp:
    """Set (or, for None, remove) attributes and bump the version, only if the version is still the expected one
    (any version, for None) and the item meets ``rules`` (``caller`` is the subject they may compare with).

    A change of an attribute that an index's sort key holds sets that index's keys anew (``ids`` then holds the
    other values of those keys), or removes them when the value is removed (a sparse index)."""
    expr = Placeholders()
    members = {name: value for name, value in changes.items() if isinstance(value, SetChange)}
    # Ids an index's keys hold are written in those keys, and in the attributes that copy them.
    moved = {name: value for name, value in changes.items() if name in entity.movable_ids}
    changes = {name: value for name, value in changes.items() if name not in members and name not in moved}
    changes = {**changes, **id_copies(entity, moved)}
    # By attribute: an attribute that is itself an index's key (``{LastPaymentDate}`` in GSI-2's sort key) is set
    # once, as DynamoDB refuses an update naming one path twice.
    sets: dict[str, Any] = {name: value for name, value in changes.items() if value is not None}
    removes = dict.fromkeys(name for name, value in changes.items() if value is None)
    table = model.index(None)
    leaves: set[str] = set()
    for name, keys in rekeyed(model, entity, ids, {**changes, **moved}).items():
        if keys is None:
            leaves |= _leaving(model, entity, name, {**changes, **moved})
        else:
            # A key attribute of the table is never set (DynamoDB refuses it): an index may share it, unchanged.
            sets.update(model.stored({key: value for key, value in keys.items() if key not in (table.pk, table.sk)}))
    assignments = [f"{expr.name(name)} = {expr.value(value)}" for name, value in sets.items()]
    version = expr.name(VERSION)
    if expected_version is None:
        assignments.append(f"{version} = if_not_exists({version}, {expr.value(0)}) + {expr.value(1)}")
    else:
        assignments.append(f"{version} = {expr.value(expected_version + 1)}")
    assignments.append(f"{expr.name(WRITE_ID)} = {expr.value(write_id)}")
    expression = "SET " + ", ".join(assignments)
    removed = [
        expr.name(name) for name in dict.fromkeys([*removes, *sorted(leaves - set(removes))]) if name not in sets
    ]
    expression += " REMOVE " + ", ".join(removed) if removed else ""
    expression += _set_members(expr, members)
    conditions = [f"attribute_exists({expr.name(model.index(None).pk)})", *_index_keys_are(model, entity, ids, expr)]
    conditions += _room_for(expr, entity, members)
    conditions += rule_conditions(expr, rules, caller)
    if expected_version is not None:
        conditions.append(_version_is(expr, expected_version))
    return WriteOp(
        "Update",
        model.key(entity, ids),
        Target(entity, ids, "item"),
        update=expression,
        condition=" AND ".join(conditions),
        names=expr.names,
        values=expr.values,
        write_id=write_id,
        version=None if expected_version is None else expected_version + 1,
    )


def rule_conditions(expr: Placeholders, rules: Iterable[Rule | Transition], caller: str) -> list[str]:
    """The conditions of ``rules`` in a write's ConditionExpression: kept by the write itself, with no read."""
    out = []
    for rule in rules:
        for condition in rule.when:
            name = expr.name(condition.attribute)
            if condition.test == "exists":
                out.append(f"attribute_exists({name})")
            elif condition.test == "absent":
                out.append(f"attribute_not_exists({name})")
            else:
                value = caller if isinstance(condition.value, Caller) else condition.value
                if isinstance(value, float):
                    value = Decimal(str(value))
                out.append(f"{name} {condition.test} {expr.value(value)}")
    return out


def transition_changes(transition: Transition, now: datetime | None = None) -> dict[str, Any]:
    """What a transition sets (the time of the write where it says :class:`Now`) and removes (None)."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    out: dict[str, Any] = {}
    for name, value in transition.set.items():
        if isinstance(value, Now):
            seconds = moment.timestamp()
            value = {
                "iso": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "epoch": int(seconds),
                "epoch_ms": int(seconds * 1000),
            }[value.format]
        out[name] = value
    return {**out, **dict.fromkeys(transition.remove)}


def _set_members(expr: Placeholders, members: Mapping[str, SetChange]) -> str:
    """The ``ADD`` and ``DELETE`` clauses of an update's set members: DynamoDB creates a set added to that is
    absent, and removes a set whose last member is removed."""
    adds = [f"{expr.name(name)} {expr.value(set(change.add))}" for name, change in members.items() if change.add]
    deletes = [
        f"{expr.name(name)} {expr.value(set(change.remove))}" for name, change in members.items() if change.remove
    ]
    return (" ADD " + ", ".join(adds) if adds else "") + (" DELETE " + ", ".join(deletes) if deletes else "")


def _room_for(expr: Placeholders, entity: Entity, members: Mapping[str, SetChange]) -> list[str]:
    """Conditions that each set added to has room for what is added within its ``max_items`` (counted as if every
    member added were new: a set near its bound refuses members it holds already)."""
    return [
        f"(attribute_not_exists({expr.name(name)}) OR size({expr.name(name)}) <= "
        f"{expr.value(entity.declared[name].max_items - len(change.add))})"
        for name, change in members.items()
        if change.add
    ]


def overfull(entity: Entity, changes: Mapping[str, Any], old: Item) -> tuple[str, int] | None:
    """The first set among ``changes`` whose room ``old`` lacked for what is added (``_room_for``), and the size it
    is counted to reach: what an update refused by that condition was refused for."""
    for name, change in changes.items():
        if isinstance(change, SetChange) and change.add:
            size = len(old.get(name) or ()) + len(change.add)
            if size > entity.declared[name].max_items:
                return name, size
    return None


def rekeyed(model: Model, entity: Entity, ids: Ids, changes: Mapping[str, Any]) -> dict[str, dict[str, str] | None]:
    """The index keys that ``changes`` move, by index name: their new values, or None where the item leaves the index.

    ``ids`` must hold every other value of those keys: ``needs_item`` says when they are to be read first."""
    out: dict[str, dict[str, str] | None] = {}
    values: dict[str, Any] = {**ids, **changes, **indexed_values(entity, changes)}
    for name, shape in entity.keys.items():
        if name is None or changes.keys().isdisjoint(_movers(entity, shape)):
            continue
        if any(values.get(field) is None for field in shape.fields):
            out[name] = None
        else:
            out[name] = model.index(name).keys(shape, values)
    return out


def _leaving(model: Model, entity: Entity, name: str, changes: Mapping[str, Any]) -> set[str]:
    """The key attributes an update removes to take an item out of index ``name``: each that holds a value it
    removes, and the others unless the item keeps them for their own sake (a key attribute of the table, a declared
    attribute such as a log's ``Date``) or they hold an id no other key of the item holds (a game that leaves the
    open games by losing ``open_timestamp`` keeps its ``map``, the index's partition key)."""
    index, shape = model.index(name), entity.keys[name]
    table = model.index(None)
    elsewhere = set(entity.id_fields).union(*(one.fields for other, one in entity.keys.items() if other != name))
    out = set()
    for attribute, template in zip(index.attributes, (shape.pk, shape.sk), strict=False):
        holds = set(template.fields)
        removed = any(field in changes and changes[field] is None for field in holds)
        kept = attribute in (table.pk, table.sk) or attribute in entity.declared or not holds <= elsewhere
        if removed or not kept:
            out.add(attribute)
    return out


def needs_item(entity: Entity, ids: Ids, changes: Mapping[str, Any]) -> bool:
    """Whether re-keying the indexes ``changes`` move needs values neither the ids nor the changes give."""
    values = {**ids, **changes}
    return any(
        not changes.keys().isdisjoint(_movers(entity, shape)) and not all(field in values for field in shape.fields)
        for name, shape in entity.keys.items()
        if name is not None
    )


def _movers(entity: Entity, shape: KeyShape) -> frozenset[str]:
    """What an update may change in an index's keys: values its sort key orders by, and ids only sparse keys hold."""
    return (entity.indexed_attributes & set(shape.sk.fields)) | (entity.movable_ids & shape.fields)


def delete(
    model: Model,
    entity: Entity,
    ids: Ids,
    *,
    expected_version: int | None = None,
    empty_counters: Iterable[str] = (),
    role: Role = "item",
    rules: Sequence[Rule] = (),
    caller: str = "",
) -> WriteOp:
    """Delete an item that exists, carries the expected version, has every counter at 0, has these ids, and meets
    ``rules``.

    The ids in other indexes are part of the condition, so an item read earlier to learn its parent (a ticket's
    user) is deleted only if it still belongs to that parent.
    """
    expr = Placeholders()
    conditions = [f"attribute_exists({expr.name(model.index(None).pk)})", *_index_keys_are(model, entity, ids, expr)]
    conditions += rule_conditions(expr, rules, caller)
    if expected_version is not None:
        conditions.append(_version_is(expr, expected_version))
    conditions += [f"{expr.name(counter)} = {expr.value(0)}" for counter in empty_counters]
    return WriteOp(
        "Delete",
        model.key(entity, ids),
        Target(entity, ids, role),
        condition=" AND ".join(conditions),
        names=expr.names,
        values=expr.values,
    )


def adjust(
    model: Model, entity: Entity, ids: Ids, deltas: Mapping[str, int], role: Role = "parent", bounded: bool = True
) -> WriteOp:
    """Add to counters of an item; refused if the item or a counter is absent (it was never counted), or, when
    ``bounded``, if a counter would pass its declared ``maximum`` or ``minimum``."""
    expr = Placeholders()
    adds = [f"{expr.name(counter)} {expr.value(delta)}" for counter, delta in deltas.items()]
    conditions = [f"attribute_exists({expr.name(counter)})" for counter in deltas]
    for counter, delta in deltas.items():
        bound = counter_bound(entity, counter, delta) if bounded else None
        if bound is not None:
            # The count before the write, so that the count after it stays within the bound.
            conditions.append(f"{expr.name(counter)} {'<=' if delta > 0 else '>='} {expr.value(bound[0] - delta)}")
    return WriteOp(
        "Update",
        model.key(entity, ids),
        Target(entity, ids, role),
        update="ADD " + ", ".join(adds),
        condition=" AND ".join(conditions),
        names=expr.names,
        values=expr.values,
        deltas=dict(deltas),
    )


def counter_bound(entity: Entity, counter: str, delta: int) -> tuple[int, str] | None:
    """The bound a change of ``delta`` to ``entity``'s ``counter`` must keep (its ``maximum`` for an increase, its
    ``minimum`` for a decrease), with the rule's name (``Game.people.maximum``); None for an unbounded one."""
    spec = entity.declared.get(counter)
    if spec is None or delta == 0:
        return None
    side, bound = ("maximum", spec.maximum) if delta > 0 else ("minimum", spec.minimum)
    return None if bound is None else (bound, f"{entity.name}.{counter}.{side}")


def broken_bound(op: WriteOp, item: Item) -> tuple[str, str, int, int] | None:
    """The bound a refused counter update would have passed, from the item as it was: the rule's name, the counter,
    its count and the bound; None when every counter it moves had room."""
    for counter, delta in op.deltas.items():
        bound = counter_bound(op.target.entity, counter, delta)
        count = item.get(counter)
        if bound is None or count is None:
            continue
        after = int(count) + delta
        if (delta > 0 and after > bound[0]) or (delta < 0 and after < bound[0]):
            return bound[1], counter, int(count), bound[0]
    return None


def take_number(model: Model, parent: Entity, ids: Ids, numbering: Numbering, seen: int, op: WriteOp | None) -> WriteOp:
    """Move ``parent``'s counter from ``seen`` (the number it was read at) to the number a create takes, only if it
    still holds ``seen``: a create that read it at the same time as another and lost is refused, and reads again.

    ``op``: the create's other write of that parent (its member counter's ``ADD``, or a check of what the new item
    copies from it), which this one joins, since a transaction touches an item once."""
    names = {"#q0": numbering.counter, "#q1": model.index(None).pk}
    values: dict[str, Any] = {":q1": 1, ":q0": seen}
    # A counter at 0 is absent, or stored by its parent's create as its declared default.
    taken = "#q0 = :q0" if seen else "(attribute_not_exists(#q0) OR #q0 = :q0)"
    condition = f"attribute_exists(#q1) AND {taken}"
    if op is None:
        return WriteOp(
            "Update",
            model.key(parent, ids),
            Target(parent, ids, "sequence"),
            update="ADD #q0 :q1",
            condition=condition,
            names=names,
            values=values,
        )
    return replace(
        op,
        action="Update",
        target=Target(parent, ids, "sequence"),
        update=f"{op.update}, #q0 :q1" if op.update else "ADD #q0 :q1",
        condition=f"{op.condition} AND {condition}" if op.condition else condition,
        names={**op.names, **names},
        values={**op.values, **values},
    )


def numbered(model: Model, entity: Entity, ids: Ids, ops: list[WriteOp], seen: int) -> list[WriteOp]:
    """A create's writes with the counter of ``entity``'s numbering taking the number in ``ids``, joined to an
    update of the same parent item if the create makes one."""
    numbering = entity.minted
    assert isinstance(numbering, Numbering)
    parent = model.entity(numbering.parent)
    assert parent is not None
    pids = numbering.parent_ids(parent, ids)
    key = model.key(parent, pids)
    at = next((i for i, op in enumerate(ops) if op.key == key), None)
    if at is None:
        return [*ops, take_number(model, parent, pids, numbering, seen, None)]
    out = list(ops)
    out[at] = take_number(model, parent, pids, numbering, seen, out[at])
    return out


def recount(model: Model, entity: Entity, ids: Ids, counts: Mapping[str, int], seen: Mapping[str, Any]) -> WriteOp:
    """Set counters to what a count found, unless a write changed them since they were read (``seen``)."""
    expr = Placeholders()
    sets = ", ".join(f"{expr.name(counter)} = {expr.value(count)}" for counter, count in counts.items())
    conditions = [f"attribute_exists({expr.name(model.index(None).pk)})"]
    for counter in counts:
        was = seen.get(counter)
        placeholder = expr.name(counter)
        conditions.append(
            f"attribute_not_exists({placeholder})" if was is None else f"{placeholder} = {expr.value(was)}"
        )
    return WriteOp(
        "Update",
        model.key(entity, ids),
        Target(entity, ids, "counted"),
        update="SET " + sets,
        condition=" AND ".join(conditions),
        names=expr.names,
        values=expr.values,
    )


def _index_keys_are(model: Model, entity: Entity, ids: Ids, expr: Placeholders) -> list[str]:
    """Conditions that the item's index keys are what its ids say, when all of them are known (sparse ones aside)."""
    if not entity.all_id_fields - entity.optional_id_fields <= ids.keys():
        return []
    table = model.index(None)
    out = []
    for name, keys in model.index_keys(entity, ids).items():
        held = model.stored({key: value for key, value in keys.items() if key not in (table.pk, table.sk)})
        if name is None or not held:
            continue
        # An item may be absent from an index, lacking a key attribute of it (DynamoDB's rule): then it belongs to
        # no partition there, and is still the item these ids name.
        absent = [f"attribute_not_exists({expr.name(key)})" for key in held]
        equal = " AND ".join(f"{expr.name(key)} = {expr.value(value)}" for key, value in held.items())
        out.append("(" + " OR ".join([*absent, equal]) + ")")
    out += [f"{expr.name(attribute)} = {expr.value(value)}" for attribute, value in entity.identity.items()]
    return out


def _version_is(expr: Placeholders, expected: int) -> str:
    # Items written by another tool carry no version: they count as version 0.
    name = expr.name(VERSION)
    return f"attribute_not_exists({name})" if expected == 0 else f"{name} = {expr.value(expected)}"


def version_of(item: Item) -> int:
    value = item.get(VERSION)
    return int(value) if value is not None else 0


def outcome_of(op: WriteOp, refused: Refused) -> Outcome:
    """What a refused single write says about the write itself: applied by an earlier attempt, refused, or unknown.

    A write whose answer was lost is sent again, and the retry fails its own condition. The item as it was
    (ALL_OLD) tells: it carries this write's id, so the write was applied. Without a lost answer the refusal is
    DynamoDB's last word. After one, a delete that finds the item gone did its job (it was gone either way);
    a create or an update that finds the item gone or moved past the version it would have written cannot tell
    whether it was applied before another write: that is unknown, never a refusal.
    """
    old = refused.reasons[0].item
    if op.write_id is not None and old is not None and old.get(WRITE_ID) == op.write_id:
        return "applied"
    if not refused.uncertain:
        return "refused"
    if op.action == "Delete":
        return "applied" if old is None else "refused"
    if op.version is not None and (old is None or version_of(old) > op.version):
        return "unknown"
    return "refused"


# --- parents and counters -------------------------------------------------------------------------------------


def parent_ids(counted: Counted, ids: Ids) -> dict[str, str]:
    return counted.collection.parent_key(ids)


def _counted_in(model: Model, counted: Counted, entity: Entity, ids: Ids) -> bool:
    """Whether the item these ids name is a member of the counted collection: it has the collection's shape in its
    index, not another variant there (an original is no member of a count of forks)."""
    collection = counted.collection
    return model.shape_in(entity, collection.index, ids) == collection.member_shape


def counter_ops(
    writes: WriteModel,
    members: Iterable[tuple[Entity, Ids]],
    sign: int,
    skip: Container[tuple[str, str]] = (),
    bounded: bool = True,
) -> list[WriteOp]:
    """One counter update per parent item for members created (+1) or deleted (-1) together.

    Parents whose key is in ``skip`` are left out: a member written by another tool may point at a parent that
    does not exist, and deleting such a member has no counter to keep. Without ``bounded``, the counters' bounds
    are not kept: a cascade takes every member, and the parent with them.
    """
    deltas: dict[tuple[str, str], tuple[Entity, dict[str, str], dict[str, int]]] = {}
    for entity, ids in members:
        for counted in writes.parents_of(entity):
            if not _counted_in(writes.model, counted, entity, ids):
                continue
            parent = counted.collection.parent
            pids = parent_ids(counted, ids)
            key = model_key(writes.model, parent, pids)
            if key in skip:
                continue
            _, _, counters = deltas.setdefault(key, (parent, pids, {}))
            counters[counted.attribute] = counters.get(counted.attribute, 0) + sign
    return [adjust(writes.model, parent, pids, counters, bounded=bounded) for parent, pids, counters in deltas.values()]


def member_counts(declaration: WriteModel, items: Iterable[Item]) -> Counter[tuple[tuple[str, str], str]]:
    """How many members each parent has among ``items``: (parent key, counter attribute) -> count."""
    model = declaration.model
    counts: Counter[tuple[tuple[str, str], str]] = Counter()
    for item in items:
        found = model.recognise(item)
        if found is None:
            continue
        entity, ids = found
        for counted in declaration.parents_of(entity):
            if not _counted_in(model, counted, entity, ids):
                continue
            parent = model_key(model, counted.collection.parent, parent_ids(counted, ids))
            counts[parent, counted.attribute] += 1
    return counts


def with_counters(declaration: WriteModel, items: Iterable[Item]) -> list[Item]:
    """``items`` with the counters their members imply set on each parent: data loaded in bulk, as counted."""
    loaded = list(items)
    counts = member_counts(declaration, loaded)
    model = declaration.model
    out: list[Item] = []
    for item in loaded:
        found = model.recognise(item)
        counters = declaration.children_of(found[0]) if found else []
        if found and counters:
            key = model_key(model, found[0], found[1])
            item = {**item, **{c.attribute: counts[key, c.attribute] for c in counters}}
        out.append(item)
    return out


def model_key(model: Model, entity: Entity, ids: Ids) -> tuple[str, str]:
    return model.item_key(model.key(entity, ids))


# --- idempotency ----------------------------------------------------------------------------------------------


def fingerprint(mutation: str, arguments: Mapping[str, Any], caller: str) -> str:
    """What a client token is bound to: the caller, the mutation and its arguments, whatever their order.

    Records are the caller's own already (``token_key``); the caller is in the fingerprint too, so a record can
    only ever answer the caller that wrote it, whatever key it is found under.
    """
    text = json.dumps({"caller": caller, "mutation": mutation, "arguments": arguments}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def token_key(caller: str, token: str) -> str:
    """The id of a client token's record: a digest of the caller and the token, so callers' tokens never meet.

    A caller cannot learn that another used a token, nor claim one first. Hex: it never contains ``#``.
    """
    return hashlib.sha256(json.dumps([caller, token]).encode()).hexdigest()


def token_ids(writes: WriteModel, caller: str, token: str) -> dict[str, str]:
    """The ids of the record item of ``caller``'s ``token``."""
    return {writes.token.id_fields[0]: token_key(caller, token)}


def _token_put(
    writes: WriteModel, ids: Mapping[str, str], attributes: Mapping[str, Any], condition: str, expr: Placeholders
) -> WriteOp:
    """A Put of a token's item: its claim, its release or its record, on the condition given."""
    return WriteOp(
        "Put",
        writes.model.key(writes.token, ids),
        Target(writes.token, ids, "token"),
        item=writes.model.item(writes.token, ids, attributes),
        condition=condition,
        names=expr.names,
        values=expr.values,
    )


def token_claim(
    writes: WriteModel,
    caller: str,
    token: str,
    print_: str,
    claim: str,
    partial: Mapping[str, int],
    now: datetime | None = None,
) -> WriteOp:
    """Claim the caller's token for a mutation of several writes before its first one, carrying what earlier
    attempts of it did (``partial``). Refused (ALL_OLD) while another claim or a record of the token is unexpired,
    unless an earlier attempt of the same mutation released it; ``token_record`` with the same ``claim`` replaces
    it when the mutation is done."""
    moment = int((now or datetime.now(UTC)).timestamp())
    expr = Placeholders()
    ids = token_ids(writes, caller, token)
    attributes = {"fingerprint": print_, "claim": claim, "partial": dict(partial), "expiresAt": moment + CLAIM_SECONDS}
    pk = expr.name(writes.model.index(None).pk)
    released = f"({expr.name('released')} = {expr.value(True)} AND {expr.name('fingerprint')} = {expr.value(print_)})"
    condition = f"attribute_not_exists({pk}) OR {expr.name('expiresAt')} < {expr.value(moment)} OR {released}"
    return _token_put(writes, ids, attributes, condition, expr)


def token_progress(writes: WriteModel, caller: str, token: str, claim: str, counts: Mapping[str, int]) -> WriteOp:
    """Add what one transaction of a claimed mutation deletes to its claim's ``partial`` counts, in that same
    transaction: should the process die half way, a retry after the claim lapses still reports the whole."""
    expr = Placeholders()
    ids = token_ids(writes, caller, token)
    partial = expr.name("partial")
    zero = expr.value(0)
    sets = [
        f"{partial}.{expr.name(name)} = if_not_exists({partial}.{expr.name(name)}, {zero}) + {expr.value(count)}"
        for name, count in sorted(counts.items())
    ]
    return WriteOp(
        "Update",
        writes.model.key(writes.token, ids),
        Target(writes.token, ids, "token"),
        update="SET " + ", ".join(sets),
        condition=f"{expr.name('claim')} = {expr.value(claim)}",
        names=expr.names,
        values=expr.values,
    )


def token_release(
    writes: WriteModel,
    caller: str,
    token: str,
    print_: str,
    claim: str,
    partial: Mapping[str, int],
    now: datetime | None = None,
) -> WriteOp:
    """Give up the caller's claim on its token (the mutation failed half way), keeping what it did: a retry of the
    same mutation claims it at once and reports the whole."""
    moment = int((now or datetime.now(UTC)).timestamp())
    expr = Placeholders()
    ids = token_ids(writes, caller, token)
    attributes = {
        "fingerprint": print_,
        "released": True,
        "partial": dict(partial),
        "expiresAt": moment + TOKEN_LIFETIME_SECONDS,
    }
    return _token_put(writes, ids, attributes, f"{expr.name('claim')} = {expr.value(claim)}", expr)


def token_record(
    writes: WriteModel,
    caller: str,
    token: str,
    print_: str,
    result: Mapping[str, Any],
    now: datetime | None = None,
    claim: str | None = None,
) -> WriteOp:
    """Record that the caller's mutation with this token was applied, in the same transaction that applies it.

    Refused while an unexpired record exists, so a retry never applies twice; the record it finds (ALL_OLD)
    tells whether the retry is the same mutation (its result is returned again) or another one (refused).
    """
    moment = int((now or datetime.now(UTC)).timestamp())
    expr = Placeholders()
    ids = token_ids(writes, caller, token)
    attributes = {"fingerprint": print_, "result": dict(result), "expiresAt": moment + TOKEN_LIFETIME_SECONDS}
    pk = expr.name(writes.model.index(None).pk)
    condition = f"attribute_not_exists({pk}) OR {expr.name('expiresAt')} < {expr.value(moment)}" + (
        f" OR {expr.name('claim')} = {expr.value(claim)}" if claim is not None else ""
    )
    return _token_put(writes, ids, attributes, condition, expr)


# --- transactions ---------------------------------------------------------------------------------------------


Member = tuple[Entity, Ids]


def member_deletes(
    writes: WriteModel, members: Sequence[Member], skip: Container[tuple[str, str]] = ()
) -> list[WriteOp]:
    """Delete members that have no members of their own, with their parents' counters, in one transaction: the
    members of a cascade, whose parent goes too, so its counters' minimums do not hold them back."""
    deletes = [delete(writes.model, entity, ids, role="member") for entity, ids in members]
    return deletes + counter_ops(writes, members, -1, skip, bounded=False)


def member_batches(writes: WriteModel, members: Sequence[Member], room: int = 0) -> Iterator[list[Member]]:
    """Members in groups whose ``member_deletes`` fit in one transaction of at most 100 items, ``room`` of them
    left for writes sent along."""
    batch: list[Member] = []
    for member in members:
        if batch and len(member_deletes(writes, [*batch, member])) > TRANSACTION_LIMIT - room:
            yield batch
            batch = []
        batch.append(member)
    if batch:
        yield batch
