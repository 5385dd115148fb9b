"""Duplicated parent data on the write path: filling a new member's copies, and rewriting them after a change.

Like ``writes``, nothing here sends anything. A change of a copied attribute marks the parent (``PENDING``) in the
same write, and the marker goes only once every copy holds the new value, so a rewrite that stopped half way is
found and finished by the next write of the parent, or by the retry of the mutation that started it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from gateway.design.keys import Ids
from gateway.design.model import Copy, Entity, Item, Model
from gateway.dynamo.requests import TRANSACTION_LIMIT, Target, WriteOp

BATCH = TRANSACTION_LIMIT - 1
"""Members per rewrite transaction: the parent's check takes the last place."""
PENDING = "copiesPending"
"""On a parent whose copies are being rewritten: the id of the write that changed the copied attribute."""


def of_member(model: Model, entity: Entity) -> list[Copy]:
    return [copy for copy in model.copies if copy.collection.member is entity]


def of_parent(model: Model, entity: Entity) -> list[Copy]:
    return [copy for copy in model.copies if copy.collection.parent is entity]


def changes_source(model: Model, entity: Entity, changes: Mapping[str, Any]) -> bool:
    """Whether an update of ``entity`` sets an attribute that members copy."""
    return any(copy.source in changes for copy in of_parent(model, entity))


def parent_ids(copy: Copy, ids: Ids) -> dict[str, str]:
    return copy.collection.parent_key(ids)


def expecting(op: WriteOp, expected: Mapping[str, Any]) -> WriteOp:
    """``op`` on a parent that also requires the parent to still hold the values its new member copied."""
    names, values = dict(op.names), dict(op.values)
    conditions = [op.condition] if op.condition else []
    # Numbered past the values an earlier copy from the same parent already required.
    for i, (attribute, value) in enumerate(expected.items(), start=len(op.expected)):
        names[f"#c{i}"] = attribute
        if value is None:
            conditions.append(f"attribute_not_exists(#c{i})")
        else:
            values[f":c{i}"] = value
            conditions.append(f"#c{i} = :c{i}")
    joined = " AND ".join(conditions)
    return replace(op, condition=joined, names=names, values=values, expected={**op.expected, **expected})


def check_parent(model: Model, entity: Entity, ids: Ids, expected: Mapping[str, Any]) -> WriteOp:
    """A transaction's check that a parent exists and holds the values its new member copied."""
    table = model.index(None)
    op = WriteOp(
        "ConditionCheck",
        model.key(entity, ids),
        Target(entity, ids, "parent"),
        condition="attribute_exists(#p)",
        names={"#p": table.pk},
    )
    return expecting(op, expected)


def stale(op: WriteOp, item: Item | None) -> bool:
    """Whether a refused write's parent exists but no longer holds what its new member copied."""
    return item is not None and any(item.get(name) != value for name, value in op.expected.items())


def rewrites(model: Model, copy: Copy, ids: Ids, value: Any, members: Sequence[tuple[Item, Ids]]) -> list[WriteOp]:
    """One transaction: set the copy on each member, if the parent still holds ``value`` (a later change of it
    makes this rewrite moot: the change that superseded it rewrites them all)."""
    member = copy.collection.entity
    table = model.index(None)
    ops = []
    for _, member_ids in members:
        names = {"#p": table.pk, "#a": copy.attribute}
        if value is None:
            update, values = "REMOVE #a", {}
        else:
            update, values = "SET #a = :a", {":a": value}
        ops.append(
            WriteOp(
                "Update",
                model.key(member, member_ids),
                Target(member, member_ids, "member"),
                update=update,
                condition="attribute_exists(#p)",
                names=names,
                values=values,
            )
        )
    parent = copy.collection.parent
    return [check_parent(model, parent, parent_ids(copy, ids), {copy.source: value}), *ops]


def clear_pending(model: Model, entity: Entity, ids: Ids, seen: str) -> WriteOp:
    """Remove the marker once every copy is rewritten, unless a later change set its own meanwhile."""
    return WriteOp(
        "Update",
        model.key(entity, ids),
        Target(entity, ids, "counted"),
        update="REMOVE #m",
        condition="#m = :m",
        names={"#m": PENDING},
        values={":m": seen},
    )
