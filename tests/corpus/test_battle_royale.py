"""AWS's Battle Royale game player data design, served from a YAML declaration written from our docs alone.

Every access pattern of the lab is asked through the gateway and through the lab's own request (plain boto3, the
same key conditions), on one table created and filled as the lab's scripts do. Answers and calls/rounds are
compared; writes are read back with the lab's own GetItem. See battle_royale/README.md for the friction met.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.server.auth import API_KEY_HEADER, digest
from gateway.server.declaration_file import load_file
from tests.corpus.battle_royale import data
from tests.corpus.checked import check_errors
from tests.corpus.reference import Design, table, typed, without_gateway_bookkeeping
from tests.support.gateway import Gateway, answered, assert_pattern, fill
from tests.support.mutations import mutate

FILE = Path(__file__).parent / "battle_royale" / "battle_royale.yaml"
DECLARATION = load_file(FILE)


@pytest.fixture(scope="module")
def deployed(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, Design]]:
    with table(dynamodb, "battle-royale", data.create_table) as name:
        fill(endpoint, name, data.items())
        with gateway_factory(name, declaration=DECLARATION) as gateway:
            yield gateway, Design(dynamodb, name)


def _same(gateway: Gateway, query: str, expected: Any, design: Design, design_calls: int) -> None:
    """The gateway answers ``expected`` (worked out from the design's own request) in no more calls and rounds
    than the design's request took, and explain plans what was sent."""
    assert design.calls == design_calls
    assert_pattern(gateway, query, expected, (design_calls, 1))


# --- reads --------------------------------------------------------------------------------------------------------


def test_get_user_profile(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    item = design.get({"PK": "USER#vlopez", "SK": "#METADATA#vlopez"})
    assert item is not None
    expected = {"user": {"username": "vlopez", "name": item["name"], "email": item["email"]}}
    _same(gateway, '{ user(username: "vlopez") { username name email } }', expected, design, 1)


def test_find_open_games_by_map(deployed: tuple[Gateway, Design]) -> None:
    # find_open_games_by_map.py: Query OpenGamesIndex, map = :map, ascending. Started games lost open_timestamp.
    gateway, design = deployed
    design.calls = 0
    found = design.query(
        "#map = :map",
        {":map": "Green Grasslands"},
        IndexName="OpenGamesIndex",
        ExpressionAttributeNames={"#map": "map"},
        ScanIndexForward=True,
    )
    assert len(found) == 4 and data.STARTED not in {one["game_id"] for one in found}
    expected = {
        "openGamesByMap": {
            "nodes": [{"gameId": one["game_id"], "creator": one["creator"], "people": one["people"]} for one in found]
        }
    }
    query = '{ openGamesByMap(map: "Green Grasslands") { nodes { gameId creator people } } }'
    _same(gateway, query, expected, design, 1)


def test_find_open_games_across_maps_is_not_offered(deployed: tuple[Gateway, Design]) -> None:
    # find_open_games.py Scans the sparse index. Nothing that serves a request scans: no such field, said so.
    gateway, _ = deployed
    body = gateway.query("{ openGames { nodes { gameId } } }")
    assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


def test_view_game_and_users_in_game(deployed: tuple[Gateway, Design]) -> None:
    # fetch_game_and_players.py: PK = GAME#<id> AND SK BETWEEN #METADATA#<id> AND USER$: the game, then its users.
    gateway, design = deployed
    game_id = "3d4285f0-e52b-401a-a59b-112b38c4a26b"
    design.calls = 0
    found = design.query(
        "PK = :pk AND SK BETWEEN :metadata AND :users",
        {":pk": f"GAME#{game_id}", ":metadata": f"#METADATA#{game_id}", ":users": "USER$"},
        ScanIndexForward=True,
    )
    game, users = found[0], found[1:]
    expected = {
        "game": {
            "map": game["map"],
            "creator": game["creator"],
            "people": game["people"],
            "players": {"nodes": [{"username": one["username"]} for one in users]},
        }
    }
    query = f'{{ game(gameId: "{game_id}") {{ map creator people players {{ nodes {{ username }} }} }} }}'
    _same(gateway, query, expected, design, 1)


def test_users_in_game_from_the_root(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    game_id = "0ab37cf1-fc60-4d93-b72b-89335f759581"
    design.calls = 0
    found = design.query(
        "PK = :pk AND begins_with(SK, :users)", {":pk": f"GAME#{game_id}", ":users": "USER#"}, ScanIndexForward=True
    )
    expected = {"usersInGame": {"nodes": [{"username": one["username"]} for one in found]}}
    _same(gateway, f'{{ usersInGame(gameId: "{game_id}") {{ nodes {{ username }} }} }}', expected, design, 1)


def test_find_games_for_user(deployed: tuple[Gateway, Design]) -> None:
    # find_games_for_user.py: Query InvertedIndex, SK = USER#<username>, ascending.
    gateway, design = deployed
    design.calls = 0
    found = design.query("SK = :sk", {":sk": "USER#carrpatrick"}, IndexName="InvertedIndex", ScanIndexForward=True)
    assert len(found) == 3
    expected = {"gamesForUser": {"nodes": [{"gameId": one["game_id"], "place": one.get("place")} for one in found]}}
    _same(gateway, '{ gamesForUser(username: "carrpatrick") { nodes { gameId place } } }', expected, design, 1)


def test_view_a_started_game(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    item = design.get({"PK": f"GAME#{data.STARTED}", "SK": f"#METADATA#{data.STARTED}"})
    assert item is not None and "open_timestamp" not in item
    expected = {"game": {"map": item["map"], "startTime": item["start_time"], "people": item["people"]}}
    _same(gateway, f'{{ game(gameId: "{data.STARTED}") {{ map startTime people }} }}', expected, design, 1)


def test_past_games_of_a_user_with_their_game(deployed: tuple[Gateway, Design]) -> None:
    # The lab's past games: a user's mappings (InvertedIndex), then each game by its key.
    gateway, design = deployed
    design.calls = 0
    found = design.query("SK = :sk", {":sk": "USER#carrpatrick"}, IndexName="InvertedIndex")
    games = [design.get({"PK": f"GAME#{one['game_id']}", "SK": f"#METADATA#{one['game_id']}"}) for one in found]
    expected = {"gamesForUser": {"nodes": [{"game": {"map": game["map"]}} for game in games if game]}}
    got, _ = answered(gateway, '{ gamesForUser(username: "carrpatrick") { nodes { game { map } } } }')
    assert got == expected


# --- writes -------------------------------------------------------------------------------------------------------


def _game_key(game_id: str) -> dict[str, Any]:
    return {"PK": f"GAME#{game_id}", "SK": f"#METADATA#{game_id}"}


def _twin_games(design: Design, people: int) -> tuple[str, str]:
    """Two equal open games on a map no read looks at: one the design's request changes, one the gateway does."""
    ids = (str(uuid.uuid4()), str(uuid.uuid4()))
    for game_id in ids:
        item = data.game(game_id, "gstanley", "Write Wasteland", "2019-04-17T10:00:00", people, None)
        design.dynamodb.put_item(TableName=design.table, Item=typed(item))
    return ids


def _version(gateway: Gateway, field: str, arguments: str) -> int:
    got, _ = answered(gateway, f"{{ {field}({arguments}) {{ version }} }}")
    version: int = got[field]["version"]
    return version


def test_create_user_profile(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    mine, theirs = f"u{uuid.uuid4().hex[:8]}", f"u{uuid.uuid4().hex[:8]}"
    profile = {"name": "Ann", "email": "ann@example.com", "birthdate": "1990-01-01", "address": "1 Main St"}
    design.send(
        "put_item",
        TableName=design.table,
        Item=typed({"PK": f"USER#{theirs}", "SK": f"#METADATA#{theirs}", "username": theirs, **profile}),
        ConditionExpression="attribute_not_exists(PK)",
    )
    result, operations = mutate(gateway, "createUser", {"username": mine, **profile}, "... on User { username }")
    assert result == {"__typename": "User", "username": mine}
    assert operations == {"PutItem": 1}
    stored = without_gateway_bookkeeping(design.get({"PK": f"USER#{mine}", "SK": f"#METADATA#{mine}"}))
    reference = design.get({"PK": f"USER#{theirs}", "SK": f"#METADATA#{theirs}"})
    assert reference is not None and stored is not None
    assert stored == {**reference, "PK": f"USER#{mine}", "SK": f"#METADATA#{mine}", "username": mine}


def test_update_user_profile(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.send(
        "update_item",
        TableName=design.table,
        Key=typed({"PK": "USER#lisabaker", "SK": "#METADATA#lisabaker"}),
        UpdateExpression="SET address = :a",
        ExpressionAttributeValues=typed({":a": "2 High St"}),
    )
    version = _version(gateway, "user", 'username: "nruiz"')
    result, operations = mutate(
        gateway,
        "updateUser",
        {"username": "nruiz", "address": "2 High St", "expectedVersion": version},
        "... on User { address }",
    )
    assert result == {"__typename": "User", "address": "2 High St"}
    assert operations == {"UpdateItem": 1}
    assert (design.get({"PK": "USER#nruiz", "SK": "#METADATA#nruiz"}) or {})["address"] == "2 High St"


def test_create_game(deployed: tuple[Gateway, Design]) -> None:
    # The game is written open: map and open_timestamp, so it is in OpenGamesIndex at once.
    gateway, design = deployed
    game_id = str(uuid.uuid4())
    created = "2019-04-18T10:00:00"
    result, operations = mutate(
        gateway,
        "createGame",
        {
            "gameId": game_id,
            "map": "Create Canyon",
            "creator": "vlopez",
            "createTime": created,
            "openTimestamp": created,
        },
        "... on Game { gameId }",
    )
    assert result == {"__typename": "Game", "gameId": game_id}
    assert operations == {"PutItem": 1}
    stored = design.get(_game_key(game_id))
    assert stored is not None
    expected = data.game(game_id, "vlopez", "Create Canyon", created, 0, None)
    assert without_gateway_bookkeeping(stored) == expected  # people 0: the counter starts at 0
    got, _ = answered(gateway, '{ openGamesByMap(map: "Create Canyon") { nodes { gameId } } }')
    assert got == {"openGamesByMap": {"nodes": [{"gameId": game_id}]}}


def _join(design: Design, game_id: str, username: str) -> None:
    """join_game.py's transaction: the mapping if new, and people + 1 while people < 50."""
    design.send(
        "transact_write_items",
        TransactItems=[
            {
                "Put": {
                    "TableName": design.table,
                    "Item": typed(
                        {"PK": f"GAME#{game_id}", "SK": f"USER#{username}", "game_id": game_id, "username": username}
                    ),
                    "ConditionExpression": "attribute_not_exists(SK)",
                }
            },
            {
                "Update": {
                    "TableName": design.table,
                    "Key": typed(_game_key(game_id)),
                    "UpdateExpression": "SET people = people + :p",
                    "ConditionExpression": "people < :limit",
                    "ExpressionAttributeValues": typed({":p": 1, ":limit": 50}),
                }
            },
        ],
    )


def test_join_game_for_a_user(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    theirs, mine = _twin_games(design, 3)
    design.calls = 0
    _join(design, theirs, "vlopez")
    result, operations = mutate(
        gateway, "createUserGameMapping", {"gameId": mine, "username": "vlopez"}, "... on UserGameMapping { username }"
    )
    assert result == {"__typename": "UserGameMapping", "username": "vlopez"}
    assert operations == {"TransactWriteItems": design.calls}
    reference = design.get({"PK": f"GAME#{theirs}", "SK": "USER#vlopez"})
    stored = without_gateway_bookkeeping(design.get({"PK": f"GAME#{mine}", "SK": "USER#vlopez"}))
    assert stored == {**(reference or {}), "PK": f"GAME#{mine}", "game_id": mine}
    assert (design.get(_game_key(mine)) or {})["people"] == (design.get(_game_key(theirs)) or {})["people"] == 4
    again, _ = mutate(gateway, "createUserGameMapping", {"gameId": mine, "username": "vlopez"}, "")
    assert again["__typename"] == "ConflictError"  # the lab's attribute_not_exists(SK): joined once


def test_the_fifty_first_player_is_refused(deployed: tuple[Gateway, Design]) -> None:
    # The lab's people < 50 is the counter's maximum: refused in the join's own transaction, nothing written.
    gateway, design = deployed
    theirs, mine = _twin_games(design, 50)
    with pytest.raises(design.dynamodb.exceptions.TransactionCanceledException):
        _join(design, theirs, "vlopez")
    result, operations = mutate(
        gateway, "createUserGameMapping", {"gameId": mine, "username": "vlopez"}, "... on ConflictError { rule }"
    )
    assert result["__typename"] == "ConflictError" and result["reason"] == "RULE"
    assert result["rule"] == "Game.people.maximum"
    assert operations == {"TransactWriteItems": 1}
    for game_id in (theirs, mine):
        assert design.get({"PK": f"GAME#{game_id}", "SK": "USER#vlopez"}) is None
    stored = without_gateway_bookkeeping(design.get(_game_key(mine)))
    reference = design.get(_game_key(theirs))
    assert stored == {**(reference or {}), "PK": f"GAME#{mine}", "SK": f"#METADATA#{mine}", "game_id": mine}


def _start(design: Design, game_id: str, requesting_user: str, start_time: str) -> None:
    """start_game.py: only when full, only by its creator, only once; it leaves OpenGamesIndex."""
    design.send(
        "update_item",
        TableName=design.table,
        Key=typed(_game_key(game_id)),
        UpdateExpression="REMOVE open_timestamp SET start_time = :time",
        ConditionExpression="people = :limit AND creator = :requesting_user AND attribute_not_exists(start_time)",
        ExpressionAttributeValues=typed({":time": start_time, ":limit": 50, ":requesting_user": requesting_user}),
        ReturnValues="ALL_NEW",
    )


GSTANLEY, VLOPEZ = "tg_key_gstanley_0123456789", "tg_key_vlopez_0123456789"
AS_CREATOR, AS_ANOTHER = {API_KEY_HEADER: GSTANLEY}, {API_KEY_HEADER: VLOPEZ}


@pytest.fixture(scope="module")
def callers(deployed: tuple[Gateway, Design], gateway_factory: Callable[..., Gateway]) -> Iterator[Gateway]:
    """The same table behind API keys, so that a start knows its caller (the lab's requesting_user)."""
    gateway, _ = deployed
    keys = {
        digest(GSTANLEY): {"sub": "gstanley", "roles": ["admin"]},
        digest(VLOPEZ): {"sub": "vlopez", "roles": ["admin"]},
    }
    with gateway_factory(gateway.table, declaration=DECLARATION, auth_open=False, api_keys=json.dumps(keys)) as served:
        yield served


START = "... on Game { gameId map } ... on ConflictError { rule }"


def test_start_game(deployed: tuple[Gateway, Design], callers: Gateway) -> None:
    _, design = deployed
    theirs, mine = _twin_games(design, 50)
    _start(design, theirs, "gstanley", "2019-04-17T11:00:00")
    result, operations = mutate(callers, "startGame", {"gameId": mine}, START, **AS_CREATOR)
    assert result == {"__typename": "Game", "gameId": mine, "map": "Write Wasteland"}
    # One read more than the lab's UpdateItem: the gateway reads the game to re-key OpenGamesIndex, which it leaves.
    assert operations == {"GetItem": 1, "UpdateItem": 1}
    stored = without_gateway_bookkeeping(design.get(_game_key(mine))) or {}
    reference = design.get(_game_key(theirs)) or {}
    # The lab's client sends its start time; the transition writes the time of the write, as ISO-8601 UTC.
    assert reference.pop("start_time") == "2019-04-17T11:00:00"
    assert stored.pop("start_time").endswith("Z")
    assert stored == {**reference, "PK": f"GAME#{mine}", "SK": f"#METADATA#{mine}", "game_id": mine}
    # Only once, as the lab's attribute_not_exists(start_time).
    again, _ = mutate(callers, "startGame", {"gameId": mine}, START, **AS_CREATOR)
    assert again["__typename"] == "ConflictError" and again["rule"] == "startGame"


@pytest.mark.parametrize(
    ("people", "caller", "requesting_user", "failed"),
    [(3, AS_CREATOR, "gstanley", "people = 50"), (50, AS_ANOTHER, "vlopez", "creator = the caller")],
    ids=["not full", "not its creator"],
)
def test_a_game_not_full_or_not_its_creators_does_not_start(
    deployed: tuple[Gateway, Design],
    callers: Gateway,
    people: int,
    caller: dict[str, str],
    requesting_user: str,
    failed: str,
) -> None:
    _, design = deployed
    theirs, mine = _twin_games(design, people)
    with pytest.raises(design.dynamodb.exceptions.ConditionalCheckFailedException):
        _start(design, theirs, requesting_user, "2019-04-17T11:00:00")
    before = design.get(_game_key(mine))
    result, operations = mutate(callers, "startGame", {"gameId": mine}, START, **caller)
    assert result["__typename"] == "ConflictError" and result["reason"] == "RULE" and result["rule"] == "startGame"
    assert failed in result["message"]
    assert operations == {"GetItem": 1, "UpdateItem": 1}
    assert design.get(_game_key(mine)) == before
    reference = {**(before or {}), "PK": f"GAME#{theirs}", "SK": f"#METADATA#{theirs}", "game_id": theirs}
    assert design.get(_game_key(theirs)) == reference


def test_update_game_for_a_user(deployed: tuple[Gateway, Design]) -> None:
    # After a game: the user's place on their mapping item (the lab's UserGameMapping<... --SILVER>).
    gateway, design = deployed
    theirs, mine = _twin_games(design, 3)
    for game_id in (theirs, mine):
        design.dynamodb.put_item(TableName=design.table, Item=typed(data.mapping(game_id, "emma83")))
    design.send(
        "update_item",
        TableName=design.table,
        Key=typed({"PK": f"GAME#{theirs}", "SK": "USER#emma83"}),
        UpdateExpression="SET place = :place",
        ExpressionAttributeValues=typed({":place": "GOLD"}),
    )
    result, operations = mutate(
        gateway,
        "updateUserGameMapping",
        {"gameId": mine, "username": "emma83", "place": "GOLD", "expectedVersion": 0},
        "... on UserGameMapping { place }",
    )
    assert result == {"__typename": "UserGameMapping", "place": "GOLD"}
    assert operations == {"UpdateItem": 1}
    stored = without_gateway_bookkeeping(design.get({"PK": f"GAME#{mine}", "SK": "USER#emma83"}))
    reference = design.get({"PK": f"GAME#{theirs}", "SK": "USER#emma83"})
    assert stored == {**(reference or {}), "PK": f"GAME#{mine}", "game_id": mine}


def test_the_filled_table_passes_check(dynamodb: Any, endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    # A table of its own: the write tests above leave twin games of 50 people with no players, as the lab's PutItem
    # of a game does, and check would rightly count them.
    with table(dynamodb, "battle-royale", data.create_table) as name:
        fill(endpoint, name, data.items())
        assert check_errors(endpoint, name, FILE, capsys) == []
