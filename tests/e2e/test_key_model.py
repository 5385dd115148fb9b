"""DynamoDB's key model on tables written with plain boto3: membership of an index item by item.

Each test writes items with literal key strings (never the gateway's key code), then reads and writes them through
the gateway with every DynamoDB request counted on the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Model
from tests.support.gateway import Gateway, answered, explained, serve_design
from tests.support.mutations import mutate

TABLE = Index(None, "PK", "SK")


# --- an index sparse by its sort key: open games --------------------------------------------------------------------
# The idiom of AWS's battle royale design: every game holds `map`, the partition key of the open games' index, and
# holds `open_timestamp`, its sort key, only while it is open; a game that starts loses it, and so leaves the index.

OPEN_GAMES = Index("OpenGames", "map", "open_timestamp")
HOST = Entity("Host", {None: KeyShape.of("HOST#{hostId}", "HOST")}, {"name": "S"})
GAME = Entity(
    "Game",
    {
        None: KeyShape.of("HOST#{hostId}", "GAME#{gameId}"),
        "OpenGames": KeyShape.of("{map}", "{open_timestamp}", sparse=True),
    },
    {"open_timestamp": Attribute("S", "When it opened; none once it started."), "people": "INT"},
)
MAP = Entity("Map", {None: KeyShape.of("MAP#{map}", "MAP")}, partition=True)
GAMES = Declaration(
    Model(
        "games",
        (TABLE, OPEN_GAMES),
        (HOST, GAME, MAP),
        collections=(
            Collection("Host.games", HOST, GAME),
            Collection("Map.openGames", MAP, GAME, "OpenGames", root="openGames"),
        ),
    )
)
GAME_ITEMS = [
    {"PK": "HOST#h1", "SK": "HOST", "name": "Hal"},
    {"PK": "HOST#h1", "SK": "GAME#g1", "map": "green", "open_timestamp": "2026-11-01T10:00:00", "people": 3},
    {"PK": "HOST#h1", "SK": "GAME#g2", "map": "green", "people": 50},
    {"PK": "HOST#h1", "SK": "GAME#g3", "map": "green", "open_timestamp": "2026-11-01T09:00:00", "people": 1},
    {"PK": "HOST#h1", "SK": "GAME#g4", "map": "green", "people": 50},
]


@pytest.fixture
def games(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, GAMES, GAME_ITEMS)


def _open(gateway: Gateway) -> list[str]:
    data, cost = answered(gateway, '{ openGames(map: "green") { nodes { gameId openTimestamp } } }')
    assert cost == (1, 1)
    return [node["gameId"] for node in data["openGames"]["nodes"]]


def test_a_game_out_of_the_index_by_its_sort_key_is_still_a_game(games: tuple[Gateway, str]) -> None:
    gateway, _ = games
    started = '{ game(hostId: "h1", gameId: "g2") { gameId map openTimestamp people } }'
    data, cost = answered(gateway, started)
    # Its map is read from the key attribute it holds, out of the index as it is.
    assert data["game"] == {"gameId": "g2", "map": "green", "openTimestamp": None, "people": 50}
    assert cost == explained(gateway, started) == (1, 1)
    data, cost = answered(gateway, '{ host(hostId: "h1") { games { nodes { gameId openTimestamp } } } }')
    assert [node["gameId"] for node in data["host"]["games"]["nodes"]] == ["g1", "g2", "g3", "g4"]
    assert cost == (2, 1)  # the host sorts after its games: GetItem beside the Query
    assert _open(gateway) == ["g3", "g1"]


def test_a_game_that_starts_leaves_the_index_and_updates_and_deletes_work_out_of_it(
    games: tuple[Gateway, str], dynamodb: Any
) -> None:
    gateway, table = games
    # Starting: the sort key removed. Its key lacks its map, which is read first (as for any id its table key lacks).
    started, sent = mutate(
        gateway,
        "updateGame",
        {"hostId": "h1", "gameId": "g1", "expectedVersion": 0, "openTimestamp": None, "people": 50},
        "... on Game { map openTimestamp people }",
    )
    assert (started, sent) == (
        {"__typename": "Game", "map": "green", "openTimestamp": None, "people": 50},
        {"GetItem": 1, "UpdateItem": 1},
    )
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": "HOST#h1"}, "SK": {"S": "GAME#g1"}})["Item"]
    assert item["map"] == {"S": "green"} and "open_timestamp" not in item  # its map stays: no other key holds it
    assert _open(gateway) == ["g3"]
    # A started game, never in the index, updates and deletes like any other.
    changed, sent = mutate(
        gateway,
        "updateGame",
        {"hostId": "h1", "gameId": "g2", "expectedVersion": 0, "people": 49},
        "... on Game { people }",
    )
    assert (changed, sent) == ({"__typename": "Game", "people": 49}, {"GetItem": 1, "UpdateItem": 1})
    deleted, sent = mutate(gateway, "deleteGame", {"hostId": "h1", "gameId": "g4", "expectedVersion": 0})
    assert (deleted["__typename"], sent) == ("Deleted", {"DeleteItem": 1})
    # Opened again: its map is read first, from the key it kept, and both keys are written.
    reopened, sent = mutate(
        gateway,
        "updateGame",
        {"hostId": "h1", "gameId": "g1", "expectedVersion": 1, "openTimestamp": "2026-11-01T11:00:00"},
        "... on Game { map openTimestamp }",
    )
    assert (reopened, sent) == (
        {"__typename": "Game", "map": "green", "openTimestamp": "2026-11-01T11:00:00"},
        {"GetItem": 1, "UpdateItem": 1},
    )
    assert _open(gateway) == ["g3", "g1"]
    data, _ = answered(gateway, '{ host(hostId: "h1") { games { nodes { gameId people } } } }')
    assert data["host"]["games"]["nodes"] == [
        {"gameId": "g1", "people": 50},
        {"gameId": "g2", "people": 49},
        {"gameId": "g3", "people": 1},
    ]


# --- any entity may be absent from any of its indexes --------------------------------------------------------------

GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")
TEAM = Entity("Team", {None: KeyShape.of("TEAM#{teamId}", "TEAM"), "GSI1": KeyShape.of("TEAM#{teamId}", "#TEAM")})
MEMBER = Entity(
    "Member",
    {
        None: KeyShape.of("MEMBER#{memberId}", "MEMBER"),
        "GSI1": KeyShape.of("TEAM#{teamId}", "MEMBER#{memberId}"),
    },
    {"name": "S"},
)
TEAMS = Declaration(
    Model("teams", (TABLE, GSI1), (TEAM, MEMBER), collections=(Collection("Team.members", TEAM, MEMBER, "GSI1"),))
)
TEAM_ITEMS = [
    # The team holds no GSI1 keys, though its declaration has them: it heads no Query, and is read by its key.
    {"PK": "TEAM#t1", "SK": "TEAM", "name": "Reds"},
    {"PK": "MEMBER#m1", "SK": "MEMBER", "GSI1PK": "TEAM#t1", "GSI1SK": "MEMBER#m1", "name": "Ann"},
    {"PK": "MEMBER#m2", "SK": "MEMBER", "name": "Bob"},
]


@pytest.fixture
def teams(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, TEAMS, TEAM_ITEMS)


def test_an_item_without_an_index_keys_is_its_entity_there_too(teams: tuple[Gateway, str]) -> None:
    gateway, _ = teams
    data, cost = answered(gateway, '{ members(memberIds: ["m1", "m2"]) { memberId teamId name } }')
    assert data["members"] == [
        {"memberId": "m1", "teamId": "t1", "name": "Ann"},
        {"memberId": "m2", "teamId": None, "name": "Bob"},  # out of GSI1: no team, and still a member
    ]
    assert cost == (1, 1)
    # The team would head its members' GSI1 Query; missing from it, it is read by its key, a round later.
    query = '{ team(teamId: "t1") { teamId members { nodes { memberId } } } }'
    data, cost = answered(gateway, query)
    assert data["team"] == {"teamId": "t1", "members": {"nodes": [{"memberId": "m1"}]}}
    assert explained(gateway, query) == (1, 1) and cost == (2, 2)


def test_an_update_and_a_delete_of_an_item_out_of_its_index_apply(teams: tuple[Gateway, str]) -> None:
    gateway, _ = teams
    renamed, sent = mutate(
        gateway, "updateMember", {"memberId": "m2", "expectedVersion": 0, "name": "Bo"}, "... on Member { name }"
    )
    assert (renamed, sent) == ({"__typename": "Member", "name": "Bo"}, {"GetItem": 1, "UpdateItem": 1})
    deleted, sent = mutate(gateway, "deleteMember", {"memberId": "m2", "expectedVersion": 1})
    assert (deleted["__typename"], sent) == ("Deleted", {"DeleteItem": 1})
