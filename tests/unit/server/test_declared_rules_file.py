"""Write rules in a declaration file: what the file says is what the model keeps, and a refusal names its line."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from gateway.design.rules import Caller, Condition, Now, Rule, Transition
from gateway.server.declaration_file import SCHEMA_PATH, DeclarationFileError, parse

GAMES = """\
table: games
keys: {pk: PK, sk: SK}
entities:
  Game:
    keys:
      table: {pk: "GAME#{gameId}", sk: GAME}
    attributes:
      title: {type: S, required: true}
      people: {type: INT, writable: false, maximum: 50}
      creator: {type: S, required: true}
      status: {type: S, writable: false, default: open, enum: [open, started]}
      open_timestamp: {type: S, writable: false, on_create: today}
      start_time: {type: S, writable: false}
  Player:
    keys:
      table: {pk: "GAME#{gameId}", sk: "PLAYER#{username}"}
collections:
  Game.players: {parent: Game, member: Player, counter: people}
rules:
  changesWhileOpen:
    entity: Game
    guards: [update, delete]
    when: [{attribute: status, is: "=", value: open}]
transitions:
  startGame:
    entity: Game
    when:
      - {attribute: people, is: "=", value: 50}
      - {attribute: open_timestamp, is: exists}
      - {attribute: creator, is: "=", caller: sub}
    set:
      start_time: {now: iso}
      status: started
    remove: [open_timestamp]
"""


def _error(text: str) -> str:
    with pytest.raises(DeclarationFileError) as raised:
        parse(text, "games.yaml")
    return str(raised.value)


def test_a_bounded_counter_is_declared_in_a_file() -> None:
    declaration = parse(GAMES, "games.yaml")

    assert declaration.entity("Game").declared["people"].maximum == 50
    jsonschema.validate(yaml.safe_load(GAMES), json.loads(SCHEMA_PATH.read_text()))


def test_a_counter_clients_may_write_is_refused_at_its_collection_with_the_fix_in_yaml() -> None:
    message = _error(GAMES.replace("people: {type: INT, writable: false, maximum: 50}", "people: INT"))

    assert message.startswith(
        "games.yaml:18: collections.Game.players: Game.players: the counter Game.people is written by clients"
    )
    assert message.endswith("(YAML: people: {type: INT, writable: false})")


def test_a_counter_that_is_no_whole_number_is_refused_at_its_collection() -> None:
    message = _error(
        GAMES.replace("people: {type: INT, writable: false, maximum: 50}", "people: {type: S, writable: false}")
    )

    assert message.startswith("games.yaml:18: collections.Game.players: Game.players: the counter Game.people is S,")


def test_rules_and_transitions_are_declared_in_a_file() -> None:
    declaration = parse(GAMES, "games.yaml")
    game = declaration.entity("Game")

    assert declaration.rules == (
        Rule("changesWhileOpen", game, ("update", "delete"), (Condition("status", "=", "open"),)),
        Transition(
            "startGame",
            game,
            when=(
                Condition("people", "=", 50),
                Condition("open_timestamp", "exists"),
                Condition("creator", "=", Caller()),
            ),
            set={"start_time": Now("iso"), "status": "started"},
            remove=("open_timestamp",),
        ),
    )
    jsonschema.validate(yaml.safe_load(GAMES), json.loads(SCHEMA_PATH.read_text()))


def test_a_rule_on_an_attribute_the_entity_does_not_declare_is_refused_at_its_line() -> None:
    message = _error(GAMES.replace("{attribute: status, is:", "{attribute: state, is:"))

    assert message == (
        "games.yaml:20: rules.changesWhileOpen: rule 'changesWhileOpen': Game declares no attribute 'state':"
        " declare it among its attributes"
    )


@pytest.mark.parametrize(
    ("broken", "found"),
    [
        (("is: exists}", "is: there}"), "games.yaml:29: transitions.startGame.when.1: open_timestamp: no test 'there'"),
        (("{now: iso}", "{now: unix}"), "games.yaml:32: transitions.startGame.set.start_time: the time now is written"),
        (("caller: sub}", "caller: email}"), "games.yaml:30: transitions.startGame.when.2.caller: a write compares"),
        (("status: started", "status: ended"), "transitions.startGame: rule 'startGame': 'ended' is not one of"),
        (("remove: [open_timestamp]", "remove: [creator]"), "rule 'startGame': Game.creator is required, so it is"),
    ],
)
def test_a_broken_condition_or_change_is_refused_at_its_line(broken: tuple[str, str], found: str) -> None:
    assert found in _error(GAMES.replace(*broken))
