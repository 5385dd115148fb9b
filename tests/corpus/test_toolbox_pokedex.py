"""dynamodb-toolbox's PokeTable, written by the library itself: every access pattern of its docs, against its answer.

The table is created and filled by `toolbox_pokedex/pokedex.mjs` through the library's own commands, and each pattern
is asked of the library there (its answer and the requests it sent); the gateway serves `pokedex.yaml`, declared from
the docs alone. The README lists what each pattern found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.corpus.node_library import Design, served
from tests.support.gateway import Gateway, answered

HERE = Path(__file__).parent / "toolbox_pokedex"
SCRIPT = HERE / "pokedex.mjs"
DECLARATION = HERE / "pokedex.yaml"

POKEMON = "pokemonId species level customName isLegendary pokeTypes evolutions trainerId captureDate"
TRAINER = "trainerId name hairStyle city"


@pytest.fixture(scope="module")
def pokedex(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[Design]:
    with served(dynamodb, endpoint, gateway_factory, SCRIPT, DECLARATION) as design:
        yield design


def _untimed(answer: Any) -> Any:
    """The library's answer without the `created`/`modified` it reads from `_ct`/`_md`: times of the write, which
    the twins of a write do not share; test 11 compares them where the library wrote them."""
    if isinstance(answer, list):
        return [_untimed(element) for element in answer]
    if isinstance(answer, dict):
        return {key: value for key, value in answer.items() if key not in ("created", "modified")}
    return answer


def test_1_a_captured_pokemon_by_its_id(pokedex: Design) -> None:
    pokedex.compare(
        "getPokemon",
        {"pokemonId": "charizard-1"},
        f'{{ pokemon(pokemonId: "charizard-1") {{ {POKEMON} }} }}',
        lambda data: data["pokemon"],
        _untimed,
    )


def test_2_a_wild_pokemon_by_its_id(pokedex: Design) -> None:
    pokedex.compare(
        "getPokemon",
        {"pokemonId": "mewtwo-1"},
        f'{{ pokemon(pokemonId: "mewtwo-1") {{ {POKEMON} }} }}',
        lambda data: data["pokemon"],
        _untimed,
    )


def test_3_a_trainer_by_its_id(pokedex: Design) -> None:
    pokedex.compare(
        "getTrainer",
        {"trainerId": "Ash-Ketchum"},
        f'{{ trainer(trainerId: "Ash-Ketchum") {{ {TRAINER} }} }}',
        lambda data: data["trainer"],
        _untimed,
    )


def test_4_a_trainers_pokemons(pokedex: Design) -> None:
    pokedex.compare(
        "trainerPokemons",
        {"trainerId": "Ash-Ketchum"},
        f'{{ trainerPokemons(trainerId: "Ash-Ketchum", first: 100) {{ nodes {{ {POKEMON} }} }} }}',
        lambda data: data["trainerPokemons"]["nodes"],
        _untimed,
    )


def test_5_a_trainers_pokemons_of_level_50_or_more(pokedex: Design) -> None:
    pokedex.compare(
        "trainerPokemons",
        {"trainerId": "Ash-Ketchum", "minLevel": 50},
        '{ trainerPokemons(trainerId: "Ash-Ketchum", level: {gte: "50"}, first: 100)'
        f" {{ nodes {{ {POKEMON} }} }} }}",
        lambda data: data["trainerPokemons"]["nodes"],
        _untimed,
    )


def test_6_a_trainers_pokemons_highest_level_first(pokedex: Design) -> None:
    pokedex.compare(
        "trainerPokemons",
        {"trainerId": "Ash-Ketchum", "reverse": True},
        f'{{ trainerPokemons(trainerId: "Ash-Ketchum", order: DESCENDING, first: 100) {{ nodes {{ {POKEMON} }} }} }}',
        lambda data: data["trainerPokemons"]["nodes"],
        _untimed,
    )


def test_7_a_pokemon_the_gateway_creates_is_read_back_by_the_library(pokedex: Design) -> None:
    pikachu = {"pokemonId": "pikachu-7", "species": "pikachu", "level": 42, "isLegendary": False}
    body = pokedex.gateway.query(
        "mutation($input: CreatePokemonInput!) { createPokemon(input: $input) { __typename } }",
        {"input": pikachu | {"pokeTypes": ["electric"]}},
    )
    assert body["data"] == {"createPokemon": {"__typename": "Pokemon"}}
    _, requests = pokedex.library("putPokemon", pikachu | {"pokemonId": "pikachu-8", "pokeTypes": ["electric"]})
    assert body["extensions"]["dynamodb"]["calls"] <= requests
    found, _ = pokedex.library("getPokemon", {"pokemonId": "pikachu-7"})
    assert _untimed(found) == pikachu | {"pokeTypes": ["electric"], "evolutions": []}
    assert found["created"] == found["modified"]


@pytest.mark.xfail(
    strict=True,
    reason="an evolution is one UpdateItem for the library ($add on level, $append on evolutions); the gateway has "
    "no add to a number nor append to a list, so a client reads first (1 call), and the update reads the wild "
    "pokemon twice (GetItem, GetItem, UpdateItem): level moves byTrainerId's sort key, so it reads the item for the "
    "index key's other values, finds no trainerId, and reads it again, learning nothing new; values and `_md` right",
)
def test_8_an_evolution_through_the_gateway_is_read_back_by_the_library(pokedex: Design) -> None:
    """pikachu-2 evolves through the gateway, its twin pikachu-3 through the library: both read back alike."""
    before, _ = pokedex.library("getPokemon", {"pokemonId": "pikachu-2"})
    evolution = {"from": "pikachu", "to": "raichu", "at": "2026-11-27T10:00:00.000Z"}
    _, requests = pokedex.library("evolvePokemon", {"pokemonId": "pikachu-3"} | evolution)
    twin, _ = pokedex.library("getPokemon", {"pokemonId": "pikachu-3"})
    read, (read_calls, _) = answered(
        pokedex.gateway, '{ pokemon(pokemonId: "pikachu-2") { level evolutions version } }'
    )
    current = read["pokemon"]
    body = pokedex.gateway.query(
        "mutation($input: UpdatePokemonInput!) { updatePokemon(input: $input) { __typename } }",
        {
            "input": {
                "pokemonId": "pikachu-2",
                "expectedVersion": current["version"],
                "species": "raichu",
                "level": current["level"] + 1,
                "evolutions": [*current["evolutions"], evolution],
            }
        },
    )
    assert body["data"] == {"updatePokemon": {"__typename": "Pokemon"}}
    after, _ = pokedex.library("getPokemon", {"pokemonId": "pikachu-2"})
    assert _untimed(after) == _untimed(twin) | {"pokemonId": "pikachu-2"}
    assert after["modified"] > before["modified"]
    assert read_calls + body["extensions"]["dynamodb"]["calls"] <= requests


@pytest.mark.xfail(
    strict=True,
    reason="the capture is stored and the library's byTrainerId Query finds it, in 2 calls where the library sends "
    "1: the update reads the item first (GetItem, UpdateItem) to learn level, byTrainerId's sort key, though the "
    "index keys are the item's own attributes trainerId and level, so setting trainerId alone puts it in the index",
)
def test_9_a_capture_through_the_gateway_is_found_by_the_librarys_query(pokedex: Design) -> None:
    body = pokedex.gateway.query(
        "mutation($input: UpdatePokemonInput!) { updatePokemon(input: $input) { ... on Pokemon { trainerId } } }",
        {
            "input": {
                "pokemonId": "eevee-2",
                "expectedVersion": 0,
                "trainerId": "Brock",
                "captureDate": "2026-11-27T09:00:00.000Z",
            }
        },
    )
    assert body["data"] == {"updatePokemon": {"trainerId": "Brock"}}
    _, requests = pokedex.library(
        "capturePokemon", {"pokemonId": "eevee-5", "trainerId": "Brock", "captureDate": "2026-11-27T09:30:00.000Z"}
    )
    assert body["extensions"]["dynamodb"]["calls"] <= requests
    found, _ = pokedex.library("trainerPokemons", {"trainerId": "Brock"})
    assert [pokemon["pokemonId"] for pokemon in found] == ["bulbasaur-2", "eevee-2", "eevee-5"]


def test_10_a_pokemon_the_gateway_deletes_is_gone_for_the_library(pokedex: Design) -> None:
    body = pokedex.gateway.query(
        'mutation { deletePokemon(input: {pokemonId: "eevee-4"}) { __typename } }',
    )
    assert body["data"] == {"deletePokemon": {"__typename": "Deleted"}}
    _, requests = pokedex.library("deletePokemon", {"pokemonId": "pikachu-8-never-written"})
    assert body["extensions"]["dynamodb"]["calls"] <= requests
    found, _ = pokedex.library("getPokemon", {"pokemonId": "eevee-4"})
    assert found is None


def test_11_created_and_modified_are_served_as_the_library_reads_them(pokedex: Design) -> None:
    expected, _ = pokedex.library("getTrainer", {"trainerId": "Misty"})
    body = pokedex.gateway.query('{ trainer(trainerId: "Misty") { created modified } }')
    assert body.get("data") == {"trainer": {"created": expected["created"], "modified": expected["modified"]}}


def test_check_full_finds_no_mismatch_in_the_table_the_library_wrote(
    pokedex: Design, capsys: pytest.CaptureFixture[str]
) -> None:
    pokedex.check_finds_no_mismatch(DECLARATION, lambda: capsys.readouterr().out)
