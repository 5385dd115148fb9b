"""A design's write rules in the declaration: what a model may say about counters, conditions and transitions,
refused when built."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, AttributeType, Collection, Entity, Index, KeyShape, Model
from gateway.design.rules import Caller, Condition, Now, Rule, Transition, WriteRule

TABLE = Index(None, "PK", "SK")
PLAYER = Entity("Player", {None: KeyShape.of("GAME#{gameId}", "PLAYER#{username}")}, {"joined": "S"})


def game(people: AttributeType | Attribute) -> Entity:
    return Entity("Game", {None: KeyShape.of("GAME#{gameId}", "GAME")}, {"people": people})


def players(parent: Entity) -> Model:
    return Model("t", (TABLE,), (parent, PLAYER), (Collection("Game.players", parent, PLAYER, counter="people"),))


FIX = r"declare it 'people': Attribute\('INT', writable=False\) \(YAML: people: \{type: INT, writable: false\}\)"


def test_a_counter_the_gateway_keeps_is_a_model() -> None:
    model = players(game(Attribute("INT", writable=False)))

    assert model.entity("Game") is not None


@pytest.mark.parametrize(
    "people", ["INT", Attribute("INT", default=3), Attribute("INT", writable=False, on_create="today")]
)
def test_a_counter_clients_may_write_is_refused_with_the_fix(people: AttributeType | Attribute) -> None:
    with pytest.raises(ValueError, match=r"Game\.players: the counter Game\.people is written by clients .*" + FIX):
        players(game(people))


@pytest.mark.parametrize(
    ("people", "kind"),
    [
        ("S", "S"),
        (Attribute("N", writable=False), "N"),
        (Attribute("INT", writable=False, text=True), "INT stored as text"),
    ],
)
def test_a_counter_that_is_no_whole_number_is_refused(people: AttributeType | Attribute, kind: str) -> None:
    with pytest.raises(ValueError, match=rf"Game\.players: the counter Game\.people is {kind}, and a count is .*{FIX}"):
        players(game(people))


def test_a_counter_that_would_start_from_another_number_than_zero_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Game\.people counts members from 0, not from its default 3: drop default="):
        players(game(Attribute("INT", writable=False, default=3)))


LOBBY = Entity(
    "Game",
    {None: KeyShape.of("GAME#{gameId}", "GAME")},
    {
        "title": Attribute("S", required=True),
        "people": Attribute("INT", writable=False),
        "creator": "S",
        "status": Attribute("S", enum=("open", "started")),
        "started": Attribute("N", writable=False),
    },
)
OPEN = Condition("status", "=", "open")


def lobby(*rules: WriteRule) -> Declaration:
    return Declaration(Model("t", (TABLE,), (LOBBY,)), rules=rules)


def test_rules_and_transitions_on_declared_attributes_are_a_declaration() -> None:
    declaration = lobby(
        Rule("whileOpen", LOBBY, ("update", "delete"), (OPEN, Condition("creator", "=", Caller()))),
        Transition("startGame", LOBBY, (Condition("people", ">=", 2),), {"status": "started", "started": Now("epoch")}),
    )

    assert [rule.name for rule in declaration.writes.rules_for(LOBBY, "delete")] == ["whileOpen"]
    assert [one.name for one in declaration.writes.transitions_of(LOBBY)] == ["startGame"]


@pytest.mark.parametrize(
    ("rule", "refusal"),
    [
        (Rule("r", LOBBY, ("update",), (Condition("colour", "exists"),)), "Game declares no attribute 'colour'"),
        (Rule("r", LOBBY, ("update",), (Condition("people", "=", "50"),)), "Game.people is INT, and '50' is no such"),
        (Rule("r", LOBBY, ("update",), (Condition("people", "=", Caller()),)), "the caller's subject is text"),
        (Rule("r", LOBBY, ("create",), (OPEN,)), "guards= names the mutations it guards: update, delete"),  # type: ignore[arg-type]
        (Rule("r", LOBBY, ("update",), ()), "a rule without conditions refuses nothing"),
        (Rule("no such", LOBBY, ("update",), (OPEN,)), "a rule's name is a GraphQL name"),
        (Transition("t", LOBBY, (OPEN,)), "a transition changes the item: give set= or remove="),
        (Transition("t", LOBBY, set={"gameId": "x"}), "'gameId' is part of Game's identity"),
        (Transition("t", LOBBY, remove=("title",)), "Game.title is required, so it is never removed"),
        (Transition("t", LOBBY, set={"started": Now("iso")}), "Game.started is N: the time now is S in format iso"),
        (Transition("t", LOBBY, set={"status": "ended"}), "'ended' is not one of Game.status's values"),
        (Transition("t", LOBBY, set={"status": "open"}, remove=("status",)), "['status'] both set and removed"),
    ],
)
def test_a_rule_the_gateway_cannot_keep_is_refused(rule: WriteRule, refusal: str) -> None:
    with pytest.raises(ValueError, match=re.escape(refusal)):
        lobby(rule)


def test_two_rules_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="write rules and transitions have names of their own"):
        lobby(Rule("r", LOBBY, ("update",), (OPEN,)), Rule("r", LOBBY, ("delete",), (OPEN,)))


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        (Condition("people", "=", 50), {"people": Decimal(50)}),
        (Condition("people", "<", 50), {"people": Decimal(49)}),
        (Condition("creator", "=", Caller()), {"creator": "alice"}),
        (Condition("open_timestamp", "absent"), {}),
    ],
)
def test_a_condition_tells_again_what_dynamodb_decided(condition: Condition, holds: dict[str, object]) -> None:
    assert condition.holds(holds, "alice")
    assert not condition.holds({"people": "50", "creator": "bob", "open_timestamp": "x"}, "alice")
