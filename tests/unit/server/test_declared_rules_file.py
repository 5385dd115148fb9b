"""Write rules in a declaration file: what the file says is what the model keeps, and a refusal names its line."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

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
  Player:
    keys:
      table: {pk: "GAME#{gameId}", sk: "PLAYER#{username}"}
collections:
  Game.players: {parent: Game, member: Player, counter: people}
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
        "games.yaml:14: collections.Game.players: Game.players: the counter Game.people is written by clients"
    )
    assert message.endswith("(YAML: people: {type: INT, writable: false})")


def test_a_counter_that_is_no_whole_number_is_refused_at_its_collection() -> None:
    message = _error(
        GAMES.replace("people: {type: INT, writable: false, maximum: 50}", "people: {type: S, writable: false}")
    )

    assert message.startswith("games.yaml:14: collections.Game.players: Game.players: the counter Game.people is S,")
