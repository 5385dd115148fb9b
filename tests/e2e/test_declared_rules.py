"""Write rules a design declares as data, kept by DynamoDB in the write that changes the item: bounds on counters,
defaults of what the gateway keeps, stored on create, conditions on updates and deletes, named transitions, and
stored copies of ids, typed as declared and kept with the id."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from gateway.server.auth import API_KEY_HEADER, digest
from tests.support.games import GAMES, MAX_PLAYERS
from tests.support.gateway import Gateway
from tests.support.mutations import mutate, mutation, post_all, stored

RULE = "... on ConflictError { rule }"


@pytest.fixture(scope="module")
def lobby(served: Callable[..., Gateway]) -> Gateway:
    return served(GAMES)


@pytest.fixture
def game(lobby: Gateway) -> str:
    game_id = f"g-{uuid.uuid4().hex[:8]}"
    result, _ = mutate(lobby, "createGame", {"gameId": game_id, "title": "Quiz", "creator": "alice"})
    assert result["__typename"] == "Game", result
    return game_id


def players(dynamodb: Any, lobby: Gateway, game_id: str) -> int:
    """How many player items the game's partition holds, counted with plain boto3."""
    found = dynamodb.query(
        TableName=lobby.table,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :p)",
        ExpressionAttributeValues={":pk": {"S": f"GAME#{game_id}"}, ":p": {"S": "PLAYER#"}},
        ConsistentRead=True,
        Select="COUNT",
    )
    return int(found["Count"])


def people(dynamodb: Any, lobby: Gateway, game_id: str) -> int:
    item = stored(dynamodb, lobby, f"GAME#{game_id}", "GAME")
    assert item is not None
    return int(item["people"]["N"])


def join(username: str, game_id: str) -> tuple[str, dict[str, Any]]:
    return mutation("joinGame", RULE), {"input": {"gameId": game_id, "username": username}}


def test_the_join_past_the_bound_is_a_conflict_naming_the_rule_and_writes_nothing(
    lobby: Gateway, game: str, dynamodb: Any
) -> None:
    for n in range(MAX_PLAYERS):
        joined, _ = mutate(lobby, "joinGame", {"gameId": game, "username": f"u{n:02d}"})
        assert joined["__typename"] == "Player", joined

    refused, operations = mutate(lobby, "joinGame", {"gameId": game, "username": "late"}, RULE)

    assert refused["__typename"] == "ConflictError" and refused["reason"] == "RULE"
    assert refused["rule"] == "Game.people.maximum"
    assert "has people 50, and the rule Game.people.maximum keeps it at most 50" in refused["message"]
    # The bound is the condition of the transaction that writes the player: one request, refused whole.
    assert operations == {"TransactWriteItems": 1}
    assert stored(dynamodb, lobby, f"GAME#{game}", "PLAYER#late") is None
    assert people(dynamodb, lobby, game) == players(dynamodb, lobby, game) == MAX_PLAYERS


def test_a_player_who_leaves_makes_room_for_another(lobby: Gateway, game: str, dynamodb: Any) -> None:
    dynamodb.update_item(
        TableName=lobby.table,
        Key={"PK": {"S": f"GAME#{game}"}, "SK": {"S": "GAME"}},
        UpdateExpression="SET people = :full",
        ExpressionAttributeValues={":full": {"N": str(MAX_PLAYERS - 1)}},
    )
    mutate(lobby, "joinGame", {"gameId": game, "username": "last"})
    full, _ = mutate(lobby, "joinGame", {"gameId": game, "username": "one-too-many"}, RULE)

    left, _ = mutate(lobby, "leaveGame", {"gameId": game, "username": "last"})
    again, _ = mutate(lobby, "joinGame", {"gameId": game, "username": "one-too-many"})

    assert full["__typename"] == "ConflictError" and full["rule"] == "Game.people.maximum"
    assert left["__typename"] == "Deleted" and again["__typename"] == "Player"
    assert people(dynamodb, lobby, game) == MAX_PLAYERS


def test_sixty_concurrent_joins_to_a_game_bounded_at_fifty_leave_fifty_players_and_a_count_of_fifty(
    lobby: Gateway, game: str, dynamodb: Any
) -> None:
    bodies = post_all(lobby, [join(f"racer{n:02d}", game) for n in range(60)])

    outcomes = Counter(
        f"{body['data']['joinGame']['__typename']}:{body['data']['joinGame'].get('rule') or ''}" for body in bodies
    )
    assert outcomes == {"Player:": 50, "ConflictError:Game.people.maximum": 10}, outcomes
    assert people(dynamodb, lobby, game) == players(dynamodb, lobby, game) == MAX_PLAYERS


def test_the_last_judge_cannot_leave_but_a_cascade_takes_the_game_with_its_judges(
    lobby: Gateway, game: str, dynamodb: Any
) -> None:
    for name in ("ann", "bob"):
        mutate(lobby, "createJudge", {"gameId": game, "username": name})

    first, _ = mutate(lobby, "deleteJudge", {"gameId": game, "username": "ann"})
    last, _ = mutate(lobby, "deleteJudge", {"gameId": game, "username": "bob"}, RULE)

    assert first["__typename"] == "Deleted"
    assert last["__typename"] == "ConflictError" and last["rule"] == "Game.judgeCount.minimum"
    assert "has judgeCount 1, and the rule Game.judgeCount.minimum keeps it at least 1" in last["message"]
    assert stored(dynamodb, lobby, f"GAME#{game}", "JUDGE#bob") is not None
    item = stored(dynamodb, lobby, f"GAME#{game}", "GAME")
    assert item is not None and item["judgeCount"] == {"N": "1"}

    gone, _ = mutate(lobby, "deleteGame", {"gameId": game, "cascade": True}, "... on Deleted { items { type count } }")

    assert gone["items"] == [{"type": "Game", "count": 1}, {"type": "Judge", "count": 1}]
    assert stored(dynamodb, lobby, f"GAME#{game}", "JUDGE#bob") is None


def test_a_create_stores_the_defaults_of_what_the_gateway_keeps(lobby: Gateway, game: str, dynamodb: Any) -> None:
    item = stored(dynamodb, lobby, f"GAME#{game}", "GAME")

    assert item is not None
    assert (item["status"], item["lastMove"]) == ({"S": "open"}, {"N": "0"})
    assert (item["people"], item["judgeCount"]) == ({"N": "0"}, {"N": "0"})


def test_a_number_is_taken_from_a_counter_stored_at_its_default(lobby: Gateway, game: str, dynamodb: Any) -> None:
    first, _ = mutate(lobby, "createMove", {"gameId": game, "what": "e4"}, "... on Move { moveNumber }")
    second, _ = mutate(lobby, "createMove", {"gameId": game, "what": "e5"}, "... on Move { moveNumber }")

    assert (first["moveNumber"], second["moveNumber"]) == ("1", "2")
    item = stored(dynamodb, lobby, f"GAME#{game}", "GAME")
    assert item is not None and item["lastMove"] == {"N": "2"}
    move = stored(dynamodb, lobby, f"GAME#{game}", "MOVE#00001")
    # The copy of the number taken is stored as the number the design declares, not as the key's text.
    assert move is not None and move["number"] == {"N": "1"}


START = "... on Game { status startTime openTimestamp version }"


def fill(dynamodb: Any, lobby: Gateway, game_id: str, count: int = MAX_PLAYERS) -> None:
    """Another writer sets the game's player count (plain boto3), as if ``count`` players had joined."""
    dynamodb.update_item(
        TableName=lobby.table,
        Key={"PK": {"S": f"GAME#{game_id}"}, "SK": {"S": "GAME"}},
        UpdateExpression="SET people = :n",
        ExpressionAttributeValues={":n": {"N": str(count)}},
    )


def test_a_full_game_starts_once_in_one_conditional_update(lobby: Gateway, game: str, dynamodb: Any) -> None:
    fill(dynamodb, lobby, game)

    started, operations = mutate(lobby, "startGame", {"gameId": game}, START)
    again, again_operations = mutate(lobby, "startGame", {"gameId": game}, RULE)

    assert started["status"] == "started" and started["openTimestamp"] is None and started["version"] == 2
    assert started["startTime"].endswith("Z")
    assert operations == {"UpdateItem": 1}
    item = stored(dynamodb, lobby, f"GAME#{game}", "GAME")
    assert item is not None and "open_timestamp" not in item
    assert item["status"] == {"S": "started"} and item["start_time"] == {"S": started["startTime"]}
    # Only once: open_timestamp is gone, so the rule refuses the second start, and nothing is written.
    assert again["__typename"] == "ConflictError" and again["reason"] == "RULE" and again["rule"] == "startGame"
    assert "does not meet the rule startGame: open_timestamp exists" in again["message"]
    assert again["currentVersion"] == 2 and again_operations == {"UpdateItem": 1}
    assert stored(dynamodb, lobby, f"GAME#{game}", "GAME") == item


def test_a_game_that_is_not_full_does_not_start_and_is_left_as_it_was(lobby: Gateway, game: str, dynamodb: Any) -> None:
    fill(dynamodb, lobby, game, MAX_PLAYERS - 1)
    before = stored(dynamodb, lobby, f"GAME#{game}", "GAME")

    refused, _ = mutate(lobby, "startGame", {"gameId": game}, RULE)

    assert refused["__typename"] == "ConflictError" and refused["rule"] == "startGame"
    assert "people = 50" in refused["message"]
    assert stored(dynamodb, lobby, f"GAME#{game}", "GAME") == before


def test_concurrent_starts_of_a_full_game_let_exactly_one_through(lobby: Gateway, game: str, dynamodb: Any) -> None:
    fill(dynamodb, lobby, game)

    bodies = post_all(lobby, [(mutation("startGame", RULE), {"input": {"gameId": game}})] * 10)

    outcomes = Counter(
        f"{body['data']['startGame']['__typename']}:{body['data']['startGame'].get('rule') or ''}" for body in bodies
    )
    assert outcomes == {"Game:": 1, "ConflictError:startGame": 9}
    item = stored(dynamodb, lobby, f"GAME#{game}", "GAME")
    assert item is not None and item["version"] == {"N": "2"}


def test_a_start_of_a_game_that_does_not_exist_is_not_found(lobby: Gateway, dynamodb: Any) -> None:
    missing = f"g-{uuid.uuid4().hex[:8]}"

    result, _ = mutate(lobby, "startGame", {"gameId": missing}, RULE)

    assert result["__typename"] == "NotFoundError" and result["entity"] == "Game"
    assert stored(dynamodb, lobby, f"GAME#{missing}", "GAME") is None


def test_an_update_and_a_delete_meet_the_rules_on_the_current_item(lobby: Gateway, game: str, dynamodb: Any) -> None:
    changed, _ = mutate(lobby, "updateGame", {"gameId": game, "expectedVersion": 1, "title": "Open"}, RULE)
    fill(dynamodb, lobby, game)
    mutate(lobby, "startGame", {"gameId": game})

    late, operations = mutate(lobby, "updateGame", {"gameId": game, "expectedVersion": 3, "title": "Late"}, RULE)
    kept, _ = mutate(lobby, "deleteGame", {"gameId": game, "cascade": True}, RULE)

    assert changed["__typename"] == "Game"
    assert late["__typename"] == "ConflictError" and late["rule"] == "changesWhileOpen"
    assert "status = 'open'" in late["message"] and operations == {"UpdateItem": 1}
    assert kept["__typename"] == "ConflictError" and kept["rule"] == "startedGamesStay"
    item = stored(dynamodb, lobby, f"GAME#{game}", "GAME")
    assert item is not None and item["title"] == {"S": "Open"} and item["version"] == {"N": "3"}


def test_a_stale_version_is_told_before_a_rule(lobby: Gateway, game: str) -> None:
    mutate(lobby, "updateGame", {"gameId": game, "expectedVersion": 1, "title": "Open"})

    stale, _ = mutate(lobby, "startGame", {"gameId": game, "expectedVersion": 1}, RULE)

    assert stale["__typename"] == "ConflictError" and stale["reason"] == "VERSION_MISMATCH"


ALICE, BOB = "tg_key_alice_0123456789", "tg_key_bob_0123456789"


@pytest.fixture(scope="module")
def guarded(served: Callable[..., Gateway]) -> Gateway:
    """The lobby behind API keys: each caller's subject is its own. Both are admins, whom the rule binds as well."""
    keys = {digest(ALICE): {"sub": "alice", "roles": ["admin"]}, digest(BOB): {"sub": "bob", "roles": ["admin"]}}
    return served(GAMES, auth_open=False, api_keys=json.dumps(keys))


def test_only_the_caller_who_created_a_game_cancels_it(guarded: Gateway, dynamodb: Any) -> None:
    game_id = f"g-{uuid.uuid4().hex[:8]}"
    as_alice, as_bob = {API_KEY_HEADER: ALICE}, {API_KEY_HEADER: BOB}
    created, _ = mutate(guarded, "createGame", {"gameId": game_id, "title": "Go", "creator": "alice"}, **as_alice)
    before = stored(dynamodb, guarded, f"GAME#{game_id}", "GAME")

    refused, operations = mutate(guarded, "cancelGame", {"gameId": game_id}, RULE, **as_bob)

    assert created["__typename"] == "Game"
    assert refused["__typename"] == "ConflictError" and refused["rule"] == "cancelGame"
    assert "does not meet the rule cancelGame: creator = the caller" in refused["message"]
    assert operations == {"UpdateItem": 1}
    assert stored(dynamodb, guarded, f"GAME#{game_id}", "GAME") == before

    cancelled, _ = mutate(guarded, "cancelGame", {"gameId": game_id}, "... on Game { status }", **as_alice)

    assert cancelled == {"__typename": "Game", "status": "cancelled"}
    item = stored(dynamodb, guarded, f"GAME#{game_id}", "GAME")
    assert item is not None and item["status"] == {"S": "cancelled"} and "open_timestamp" not in item


PLAYER = "... on Player { team version }"


def test_a_copy_of_an_id_is_stored_as_the_number_declared_and_follows_the_id_when_an_update_moves_it(
    lobby: Gateway, game: str, dynamodb: Any
) -> None:
    joined, _ = mutate(lobby, "joinGame", {"gameId": game, "username": "ann", "team": "007"}, PLAYER)
    key = (f"GAME#{game}", "PLAYER#ann")
    created = stored(dynamodb, lobby, *key)

    moved, operations = mutate(
        lobby, "updatePlayer", {"gameId": game, "username": "ann", "expectedVersion": 1, "team": "12"}, PLAYER
    )
    after_move = stored(dynamodb, lobby, *key)
    left, _ = mutate(
        lobby, "updatePlayer", {"gameId": game, "username": "ann", "expectedVersion": 2, "team": None}, PLAYER
    )
    after_leaving = stored(dynamodb, lobby, *key)

    assert joined == {"__typename": "Player", "team": "007", "version": 1}
    assert created is not None and created["teamNumber"] == {"N": "7"} and created["GSI1PK"] == {"S": "TEAM#007"}
    # The copy moves with the id, in the one UpdateItem that re-keys the index.
    assert moved == {"__typename": "Player", "team": "12", "version": 2}
    assert operations == {"UpdateItem": 1}
    assert (
        after_move is not None and after_move["teamNumber"] == {"N": "12"} and after_move["GSI1PK"] == {"S": "TEAM#12"}
    )
    assert left == {"__typename": "Player", "team": None, "version": 3}
    assert after_leaving is not None and "teamNumber" not in after_leaving and "GSI1PK" not in after_leaving


def test_an_id_whose_copy_is_a_number_must_be_one(lobby: Gateway, game: str, dynamodb: Any) -> None:
    refused, operations = mutate(lobby, "joinGame", {"gameId": game, "username": "bo", "team": "red"}, PLAYER)

    assert refused["__typename"] == "ValidationFailedError" and refused["field"] == "team"
    assert "team must be a number: it is stored as one" in refused["message"] and operations == {}
    assert stored(dynamodb, lobby, f"GAME#{game}", "PLAYER#bo") is None
