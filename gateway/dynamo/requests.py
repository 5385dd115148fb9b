"""What the store sends, as data: write items, their refusals, filter expressions and the placeholders they use.

Built above (``execution.queries``, ``writes.building``), sent by ``store``: nothing here sends anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from gateway.design.model import Entity, Item

TRANSACTION_LIMIT = 100
"""DynamoDB's bound on the items of one TransactWriteItems."""
MAX_ITEM_BYTES = 400 * 1024
"""DynamoDB's bound on one item's size."""

Action = Literal["Put", "Update", "Delete", "ConditionCheck"]
Role = Literal["item", "parent", "member", "token", "counted", "sequence"]
Operator = Literal["eq", "ne", "in", "beginsWith", "between", "exists"]


class Placeholders:
    """Placeholders for one expression: ``#n0``/``:v0`` never collide, whatever the attribute names are; a
    ``prefix`` keeps two expressions of one request (a key condition and a filter) apart."""

    def __init__(self, prefix: str = "") -> None:
        self._name = f"#{prefix or 'n'}"
        self._value = f":{prefix or 'v'}"
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, attribute: str) -> str:
        for placeholder, known in self.names.items():
            if known == attribute:
                return placeholder
        placeholder = f"{self._name}{len(self.names)}"
        self.names[placeholder] = attribute
        return placeholder

    def value(self, value: Any) -> str:
        placeholder = f"{self._value}{len(self.values)}"
        self.values[placeholder] = value
        return placeholder


# --- writes ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What a write touches and why, so a refusal can be explained (not found, conflict, ...)."""

    entity: Entity
    ids: Mapping[str, str]
    role: Role


@dataclass(frozen=True)
class WriteOp:
    """One item of a transaction, or a single conditional write; values are plain Python."""

    action: Action
    key: dict[str, str]
    target: Target
    item: Item | None = None
    update: str | None = None
    condition: str | None = None
    names: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    write_id: str | None = None
    """The id this write stores on the item (``WRITE_ID``); creates and updates carry one."""
    version: int | None = None
    """The version this write leaves the item at; creates and updates carry one."""
    expected: dict[str, Any] = field(default_factory=dict)
    """Attributes the condition requires the item to hold: a parent's values that its new member copies."""
    deltas: dict[str, int] = field(default_factory=dict)
    """What this write adds to each counter of the item: a refusal is explained from them (a counter missing, or
    one its bound stopped)."""


@dataclass(frozen=True)
class Reason:
    """Why one write of a refused request failed; ``item`` is the item as it was (ALL_OLD), None if absent."""

    code: str
    item: Item | None = None


class Refused(Exception):
    """DynamoDB refused a conditional write or a transaction; ``reasons`` is aligned with the ops sent.

    ``uncertain``: an earlier attempt of the same request got no definite answer (the connection failed, or
    DynamoDB answered 5xx), so it may have been applied, and this refusal may be of the write by itself.
    """

    def __init__(self, reasons: list[Reason], uncertain: bool = False) -> None:
        super().__init__(", ".join(reason.code for reason in reasons))
        self.reasons = reasons
        self.uncertain = uncertain


# --- filters -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Test:
    """One condition on one attribute: ``operands`` are the stored values it compares with."""

    attribute: str
    operator: Operator
    operands: tuple[Any, ...]


@dataclass(frozen=True)
class Group:
    """Filters that all hold (``and``) or of which one holds (``or``)."""

    kind: Literal["and", "or"]
    parts: tuple[Filter, ...]


Filter = Test | Group


def expression(filter_: Filter) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The FilterExpression with its attribute names and (wire-format) values, placeholders numbered in order."""
    used = Placeholders("f")

    def value(operand: Any) -> str:
        return used.value(_wire(operand))

    def render(one: Filter) -> str:
        if isinstance(one, Group):
            joined = f" {one.kind.upper()} ".join(render(part) for part in one.parts)
            return f"({joined})"
        attribute = used.name(one.attribute)
        operands = one.operands
        if one.operator == "eq":
            return f"{attribute} = {value(operands[0])}"
        if one.operator == "ne":
            return f"{attribute} <> {value(operands[0])}"
        if one.operator == "in":
            return f"{attribute} IN ({', '.join(value(operand) for operand in operands)})"
        if one.operator == "beginsWith":
            return f"begins_with({attribute}, {value(operands[0])})"
        if one.operator == "between":
            return f"{attribute} BETWEEN {value(operands[0])} AND {value(operands[1])}"
        return f"attribute_exists({attribute})" if operands[0] else f"attribute_not_exists({attribute})"

    return render(filter_), used.names, used.values


def _wire(operand: Any) -> dict[str, Any]:
    if isinstance(operand, bool):
        return {"BOOL": operand}
    if isinstance(operand, int | float):
        return {"N": str(operand)}
    return {"S": str(operand)}
