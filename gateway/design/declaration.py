"""A declared single-table design: the key design, its tenants, and optionally demo data — all tablegraph serves.

``tablegraph serve --model pkg.module:attr`` loads one; the GraphQL schema, the plans and the writes are derived
from it, so serving another table needs no change to the engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import ModuleType
from typing import Any

from gateway.design import rules as write_rules
from gateway.design.model import Attribute, Collection, Entity, Index, Item, KeyShape, Model
from gateway.design.rules import Rule, Transition, Verb, WriteRule
from gateway.design.tenancy import Tenancy

TOKEN_ENTITY = "MutationToken"
EXPIRES_ATTRIBUTE = "expiresAt"


_TOKEN_SORT_KEYS = {"S": "TOKEN", "N": "0", "B": "VE9LRU4="}
"""The token records' sort key by the table's sort key type: ``TOKEN`` as text, a number, or binary."""


def token_entity(table: Index | None = None) -> Entity:
    """The gateway's record of a mutation applied with a client token, kept for a day (time to live), in a table
    keyed as ``table`` is (text keys when None).

    Its id is not the token but a digest of the caller and the token (``writes.token_key``): tokens are the
    caller's own, and two callers sending the same one never meet; in a table without a sort key, it has none.
    """
    if table is not None and table.pk_type != "S":
        raise ValueError(
            f"the table's partition key {table.pk} is {table.pk_type}: the gateway keeps its own records (client"
            " tokens, the stream lease) under a text partition key, so it serves tables whose partition key is S"
            " (pk_type='S'; YAML: pk_type: S); a number or binary partition key is served in a secondary index"
        )
    sort = None if table is not None and table.sk is None else _TOKEN_SORT_KEYS["S" if table is None else table.sk_type]
    return Entity(
        TOKEN_ENTITY,
        {None: KeyShape.of("TOKEN#{tokenKey}", sort)},
        {"fingerprint": "S", "result": "M", EXPIRES_ATTRIBUTE: Attribute("N", writable=False)},
        internal=True,
    )


@dataclass(frozen=True)
class Counted:
    """A counter attribute on ``collection``'s parent that holds the exact number of its members."""

    collection: Collection
    attribute: str


@dataclass(frozen=True)
class WriteModel:
    """What the write path needs beyond the key design: the counters, and the item kind of idempotency records."""

    model: Model
    counted: tuple[Counted, ...]
    token: Entity
    rules: tuple[WriteRule, ...] = ()
    """The design's write rules and transitions (see :mod:`gateway.design.rules`)."""

    def __post_init__(self) -> None:
        for counted in self.counted:
            if counted.collection not in self.model.collections:
                raise ValueError(f"{counted.collection.name}: not a collection of the model")
        parents = [(c.collection.parent.name, c.attribute) for c in self.counted]
        if len(set(parents)) != len(parents):
            raise ValueError("a counter attribute is declared twice on one entity")

    def parents_of(self, entity: Entity) -> list[Counted]:
        """The counters that count ``entity``: one per collection it is a member of."""
        return [c for c in self.counted if c.collection.member is entity]

    def children_of(self, entity: Entity) -> list[Counted]:
        """The counters ``entity`` carries: one per collection it is the parent of."""
        return [c for c in self.counted if c.collection.parent is entity]

    def rules_for(self, entity: Entity, verb: Verb) -> tuple[Rule, ...]:
        """The rules ``entity``'s ``verb`` must meet."""
        return write_rules.rules_for(self.rules, entity, verb)

    def transitions_of(self, entity: Entity) -> tuple[Transition, ...]:
        return write_rules.transitions_of(self.rules, entity)


@dataclass(frozen=True)
class Declaration:
    """One table's design. The model gains the gateway's token records if it does not declare them itself."""

    model: Model
    tenancy: Tenancy = field(default_factory=lambda: Tenancy({}))
    seed: Callable[[], Iterable[Item]] | None = None
    """Demo data, written as any client would write it: ``tablegraph seed`` and ``serve --demo`` load it."""
    fields: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Hand-written fields for special cases, by type name (an entity's, or ``Query``): ``strawberry.field`` fields
    with a resolver. They receive the entity's object (its ids in ``_ids``) and read through
    ``info.context.reader``; the look-ahead does not see into them."""
    rules: tuple[WriteRule, ...] = ()
    """The design's write rules as data: conditions on the current item for updates and deletes
    (:class:`~gateway.design.rules.Rule`), and named transitions, each a mutation of its own
    (:class:`~gateway.design.rules.Transition`)."""

    def __post_init__(self) -> None:
        if not any(entity.name == TOKEN_ENTITY for entity in self.model.entities):
            model = replace(
                self.model,
                entities=(*self.model.entities, token_entity(self.model.index(None))),
                expires_attribute=self.model.expires_attribute or EXPIRES_ATTRIBUTE,
            )
            object.__setattr__(self, "model", model)
        self.tenancy.validate(self.model)
        write_rules.validate(self.model, self.rules)

    @cached_property
    def token(self) -> Entity:
        return next(entity for entity in self.model.entities if entity.name == TOKEN_ENTITY)

    @cached_property
    def writes(self) -> WriteModel:
        return write_model(self.model, self.rules)

    def entity(self, name: str) -> Entity:
        return next(entity for entity in self.model.entities if entity.name == name)


def write_model(model: Model, rules: tuple[WriteRule, ...] = ()) -> WriteModel:
    """What the write path keeps for ``model``: the counters its collections declare, the token records, and the
    design's write rules."""
    counted = tuple(Counted(c, c.counter) for c in model.collections if c.counter is not None)
    token = next(entity for entity in model.entities if entity.name == TOKEN_ENTITY)
    return WriteModel(model, counted=counted, token=token, rules=rules)


# The example designs are the repository's folder schema/ and install as tablegraph_designs (a top-level `schema`
# would clash with PyPI's library of that name): `schema.<design>` names them in a checkout and installed alike.
_DESIGNS_FOLDER = "schema"
_DESIGNS_PACKAGE = "tablegraph_designs"


def _import(module_name: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as missing:
        folder, dot, design = module_name.partition(".")
        if folder != _DESIGNS_FOLDER or not dot:
            raise
        try:
            return importlib.import_module(f"{_DESIGNS_PACKAGE}.{design}")
        except ModuleNotFoundError:
            raise missing from None


def load(spec: str) -> Declaration:
    """The declaration named ``pkg.module:attr``; ValueError with a plain message when there is none."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"--model takes pkg.module:attr, not {spec!r}")
    try:
        module = _import(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import {module_name!r}: {error}") from None
    found = getattr(module, attribute, None)
    if not isinstance(found, Declaration):
        raise ValueError(f"{spec} is not a tablegraph Declaration")
    return found
