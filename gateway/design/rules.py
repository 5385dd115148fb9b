"""Write rules as data: conditions on the current item that an update, a delete or a named transition requires."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, get_args

from gateway.design.model import Entity, Item, Model

Test = Literal["=", "<>", "<", "<=", ">", ">=", "exists", "absent"]
"""How a condition tests its attribute: compares it with a value, or asks whether the item holds it."""
Verb = Literal["update", "delete"]
TimeFormat = Literal["iso", "epoch", "epoch_ms"]

_COMPARED: dict[str, tuple[str, ...]] = {
    "=": ("S", "N", "INT", "BOOL", "DATE"),
    "<>": ("S", "N", "INT", "BOOL", "DATE"),
}
_ORDERED = ("S", "N", "INT", "DATE")


@dataclass(frozen=True)
class Caller:
    """The calling principal's subject (the token's ``sub``, or the API key's): a condition that an attribute
    holds it ties the write to the caller (only a game's creator starts it)."""

    claim: str = "sub"

    def __post_init__(self) -> None:
        if self.claim != "sub":
            raise ValueError(f"a write compares with the caller's subject (claim 'sub'), not with {self.claim!r}")


@dataclass(frozen=True)
class Now:
    """The time of the write, as a transition sets it: ISO-8601 UTC text, or epoch seconds or milliseconds."""

    format: TimeFormat = "iso"

    def __post_init__(self) -> None:
        if self.format not in get_args(TimeFormat):
            raise ValueError(f"the time now is written as {', '.join(get_args(TimeFormat))}, not {self.format!r}")


@dataclass(frozen=True)
class Condition:
    """One test of the item as it is when the write lands: ``Condition("people", "=", 50)``,
    ``Condition("open_timestamp", "exists")``, ``Condition("creator", "=", Caller())``."""

    attribute: str
    test: Test
    value: Any = None

    def __post_init__(self) -> None:
        if self.test not in get_args(Test):
            raise ValueError(f"{self.attribute}: no test {self.test!r}; one of {', '.join(get_args(Test))}")
        if (self.value is None) != (self.test in ("exists", "absent")):
            needs = "takes no value" if self.test in ("exists", "absent") else "compares with a value"
            raise ValueError(f"{self.attribute}: the test {self.test!r} {needs}")

    def __str__(self) -> str:
        """The condition as a rule says it: ``people = 50``, ``open_timestamp exists``."""
        if self.test in ("exists", "absent"):
            return f"{self.attribute} {self.test}"
        value = "the caller" if isinstance(self.value, Caller) else repr(self.value)
        return f"{self.attribute} {self.test} {value}"

    def holds(self, item: Item, caller: str) -> bool:
        """Whether the item as stored passes the test (what DynamoDB's condition decided, told again)."""
        stored = item.get(self.attribute)
        if self.test == "exists":
            return stored is not None
        if self.test == "absent":
            return stored is None
        if stored is None:
            return False
        value = caller if isinstance(self.value, Caller) else self.value
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            value = Decimal(str(value))
        try:
            return bool(_COMPARE[self.test](stored, value))
        except TypeError:
            return False  # a stored value of another type than compared with


_COMPARE: dict[str, Any] = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@dataclass(frozen=True)
class Rule:
    """Conditions the current item must meet for the mutations of ``entity`` it ``guards`` (update, delete): one of
    the write itself, so no other write slips in between. A refused write answers ``ConflictError`` with
    ``rule`` = ``name``."""

    name: str
    entity: Entity
    guards: tuple[Verb, ...]
    when: tuple[Condition, ...]


@dataclass(frozen=True)
class Transition:
    """A named change of state, a mutation of its own (``startGame``): it requires ``when`` of the current item,
    sets ``set`` (constants, or :class:`Now`) and removes ``remove``, in one conditional UpdateItem. Refused, it
    answers ``ConflictError`` with ``rule`` = ``name``."""

    name: str
    entity: Entity
    when: tuple[Condition, ...] = ()
    set: Mapping[str, Any] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    description: str | None = None


WriteRule = Rule | Transition


def validate(model: Model, rules: tuple[WriteRule, ...]) -> None:
    """Refuse rules that name what the entity does not declare, compare a value of another type, or change what
    the gateway cannot keep in one conditional write."""
    names = [rule.name for rule in rules]
    if len(set(names)) != len(names):
        raise ValueError("write rules and transitions have names of their own")
    for rule in rules:
        where = f"rule {rule.name!r}"
        if not rule.name.isidentifier():
            raise ValueError(f"{where}: a rule's name is a GraphQL name (letters, digits, _)")
        if rule.entity not in model.entities or rule.entity.partition or rule.entity.internal:
            raise ValueError(f"{where}: {rule.entity.name} is no entity of the model with items of its own")
        for condition in rule.when:
            _validate_condition(rule.entity, condition, where)
        if isinstance(rule, Rule):
            if not rule.guards or not set(rule.guards) <= set(get_args(Verb)):
                raise ValueError(f"{where}: guards= names the mutations it guards: update, delete")
            if not rule.when:
                raise ValueError(f"{where}: a rule without conditions refuses nothing; give when=")
            continue
        _validate_transition(model, rule, where)


def _validate_condition(entity: Entity, condition: Condition, where: str) -> None:
    spec = entity.declared.get(condition.attribute)
    if spec is None:
        raise ValueError(
            f"{where}: {entity.name} declares no attribute {condition.attribute!r}: declare it among its attributes"
        )
    if condition.test in ("exists", "absent"):
        return
    if isinstance(condition.value, Caller):
        if spec.type != "S" or condition.test not in ("=", "<>"):
            raise ValueError(f"{where}: the caller's subject is text, compared with = or <> with an S attribute")
        return
    kinds = _COMPARED.get(condition.test, _ORDERED)
    if spec.type not in kinds or spec.text:
        raise ValueError(
            f"{where}: {entity.name}.{condition.attribute} is {spec.type}, which {condition.test} cannot test"
        )
    if not _has_type(condition.value, spec.type):
        raise ValueError(
            f"{where}: {entity.name}.{condition.attribute} is {spec.type}, and {condition.value!r} is no such value"
        )


def _validate_transition(model: Model, transition: Transition, where: str) -> None:
    entity = transition.entity
    if not transition.set and not transition.remove:
        raise ValueError(f"{where}: a transition changes the item: give set= or remove=")
    both = set(transition.set) & set(transition.remove)
    if both:
        raise ValueError(f"{where}: {sorted(both)} both set and removed: an update changes an attribute once")
    table = model.index(None)
    for name in (*transition.set, *transition.remove):
        spec = entity.declared.get(name)
        if name in (table.pk, table.sk) or name in entity.all_id_fields:
            raise ValueError(f"{where}: {name!r} is part of {entity.name}'s identity, which no write moves")
        if spec is None:
            raise ValueError(f"{where}: {entity.name} declares no attribute {name!r}: declare it among its attributes")
        if name in transition.remove and spec.required:
            raise ValueError(f"{where}: {entity.name}.{name} is required, so it is never removed")
    for name, value in transition.set.items():
        spec = entity.declared[name]
        if isinstance(value, Now):
            text = value.format == "iso"
            if (spec.type == "S") != text or spec.type not in ("S", "N", "INT"):
                raise ValueError(
                    f"{where}: {entity.name}.{name} is {spec.type}: the time now is S in format iso, or N/INT in"
                    " format epoch or epoch_ms"
                )
        elif not _has_type(value, spec.type):
            raise ValueError(f"{where}: {entity.name}.{name} is {spec.type}, and {value!r} is no such value")
        elif spec.enum is not None and value not in spec.choices:
            raise ValueError(f"{where}: {value!r} is not one of {entity.name}.{name}'s values {tuple(spec.choices)}")


def _has_type(value: object, kind: str) -> bool:
    if kind in ("S", "DATE"):
        return isinstance(value, str)
    if kind == "BOOL":
        return isinstance(value, bool)
    if kind == "INT":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "N":
        return isinstance(value, int | float | Decimal) and not isinstance(value, bool)
    return False


def rules_for(rules: tuple[WriteRule, ...], entity: Entity, verb: Verb) -> tuple[Rule, ...]:
    """The rules an ``entity``'s ``verb`` must meet."""
    return tuple(rule for rule in rules if isinstance(rule, Rule) and rule.entity is entity and verb in rule.guards)


def transitions_of(rules: tuple[WriteRule, ...], entity: Entity) -> tuple[Transition, ...]:
    return tuple(rule for rule in rules if isinstance(rule, Transition) and rule.entity is entity)
