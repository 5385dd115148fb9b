"""A mutation's input as stored: attributes checked against the declaration, ids copied, tokens, versions."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from enum import Enum
from typing import Any

import strawberry

from gateway.design.keys import Ids, validate_id
from gateway.design.model import Attribute, Entity
from gateway.design.naming import field_name, python_attribute, set_field_names
from gateway.design.values import SetChange, set_fields
from gateway.errors import BadUserInput
from gateway.surface.toolkit import Info
from gateway.writes import building
from gateway.writes import inputs as attribute_inputs
from gateway.writes.writer import Token

SET_TYPES = ("SS", "NS")


def plain_attributes(entity: Entity) -> list[tuple[str, Attribute]]:
    """The attributes served as plain fields: a stored copy of an id is served as the id field."""
    return [(name, spec) for name, spec in entity.declared.items() if spec.from_id is None and spec.is_typed]


def describe(entity: Entity, name: str, spec: Attribute) -> str:
    return spec.description or f"The {entity.name}'s {name}."


def input_attributes(entity: Entity) -> list[tuple[str, Attribute]]:
    return [(name, spec) for name, spec in entity.declared.items() if spec.is_input and spec.is_typed]


def inputs(entity: Entity, data: object) -> dict[str, Any]:
    """The stored attributes an input sets, validated; fields left out of an update input are not among them."""
    out: dict[str, Any] = {}
    for name, spec in input_attributes(entity):
        value = getattr(data, python_attribute(name))
        if value is not strawberry.UNSET:
            out[name] = checked(field_name(name, spec), spec, value)
    return out


def set_changes(entity: Entity, data: object, changes: Mapping[str, Any]) -> dict[str, SetChange]:
    """The members an update input adds to sets and removes from them; BadUserInput for a set the input also
    replaces (``changes``), or both adds to and removes from (one update expression changes an attribute once)."""
    out: dict[str, SetChange] = {}
    for name, spec in input_attributes(entity):
        if spec.type not in SET_TYPES:
            continue
        add_field, remove_field = set_field_names(name, spec)
        add_attribute, remove_attribute = map(python_attribute, set_fields(name))
        add, remove = (
            _members(add_field, spec, getattr(data, add_attribute)),
            _members(remove_field, spec, getattr(data, remove_attribute)),
        )
        if not add and not remove:
            continue
        given = add_field if add else remove_field
        if name in changes:
            raise BadUserInput(
                f"{given} changes {field_name(name, spec)}, which this input replaces too: give one or the other",
                argument=given,
            )
        if add and remove:
            raise BadUserInput(
                f"{add_field} and {remove_field}: an update either adds to a set or removes from it; send two updates",
                argument=remove_field,
            )
        out[name] = SetChange(frozenset(add), frozenset(remove))
    return out


def _members(field: str, spec: Attribute, value: Any) -> set[Any]:
    if value is strawberry.UNSET or value is None:
        return set()
    members: set[Any] | None = checked(field, spec, value)
    return members or set()


def checked(name: str, spec: Attribute, value: Any) -> Any:
    """``value`` as stored, or BadUserInput naming the input field ``name`` when the declaration refuses it."""
    if value is None:
        if spec.required:
            raise BadUserInput(f"{name} may not be null", argument=name)
        return None
    if isinstance(value, Enum):  # GraphQL refused anything outside the enum already
        return value.value
    if isinstance(value, date):  # the Date scalar refused anything that is not a date
        return value.isoformat()
    if spec.type in ("M", "L", "SS", "NS", "BS", "JSON"):
        return attribute_inputs.stored(name, spec, value, checked)
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


def on_create(entity: Entity, ids: Ids) -> dict[str, Any]:
    """What a create stores besides its input: copies of ids (typed as declared), the date and the times it keeps.
    A copy of a numbered id is the writer's to store: the number is taken as the item is written."""
    out: dict[str, Any] = {**building.stamps(entity, creating=True), **building.id_copies(entity, ids)}
    for name, spec in entity.declared.items():
        if spec.on_create == "today":
            out[name] = building.today()
    return out


def token_of(info: Info, client_token: str | None, data: object) -> Token | None:
    if client_token is None:
        return None
    arguments = dataclasses.asdict(data)  # type: ignore[call-overload]  # a strawberry input is a dataclass
    caller = info.context.guard.principal.subject
    return Token(validate_id(client_token, "clientToken"), building.fingerprint(info.field_name, arguments, caller))


def expected_version(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise BadUserInput("expectedVersion may not be negative", argument="expectedVersion")
    return value
