"""A list or map default (dynamodb-toolbox's ``evolutions: []``) is stored by a create that leaves it out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gateway import Attribute, Entity, Index, KeyShape, Model
from gateway.design.declaration import Declaration
from tests.support.gateway import Gateway
from tests.support.mutations import mutate

POKEMON = Entity(
    "Pokemon",
    {None: KeyShape.of("POKEMON#{pokemonId}", "POKEMON")},
    {
        "name": "S",
        "evolutions": Attribute("JSON", default=[]),
        "moves": Attribute("L", element="S", default=["tackle"]),
    },
)
POKEDEX = Declaration(Model("pokedex", (Index(None, "PK", "SK"),), (POKEMON,)))


def test_a_list_default_is_stored_when_the_create_leaves_it_out(served: Callable[..., Gateway], dynamodb: Any) -> None:
    gateway = served(POKEDEX)
    # Before, a JSON attribute's default of [] failed the schema's build: no dataclass field default is mutable.
    result, _ = mutate(gateway, "createPokemon", {"pokemonId": "p1", "name": "Pikachu"}, "... on Pokemon { moves }")
    assert result == {"__typename": "Pokemon", "moves": ["tackle"]}
    mutate(gateway, "createPokemon", {"pokemonId": "p2", "name": "Eevee", "evolutions": [{"to": "Vaporeon"}]})
    key = {"PK": {"S": "POKEMON#p1"}, "SK": {"S": "POKEMON"}}
    first = dynamodb.get_item(TableName=gateway.table, Key=key)["Item"]
    assert first["evolutions"] == {"L": []}
    assert first["moves"] == {"L": [{"S": "tackle"}]}
    key = {"PK": {"S": "POKEMON#p2"}, "SK": {"S": "POKEMON"}}
    second = dynamodb.get_item(TableName=gateway.table, Key=key)["Item"]
    assert second["evolutions"] == {"L": [{"M": {"to": {"S": "Vaporeon"}}}]}
