"""A design's write rules in the declaration: what a model may say about counters, refused when built."""

from __future__ import annotations

import pytest

from gateway.design.model import Attribute, AttributeType, Collection, Entity, Index, KeyShape, Model

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
