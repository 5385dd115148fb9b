"""Write rules a design declares as data, kept by DynamoDB in the write that changes the item: bounds on counters,
and defaults of what the gateway keeps, stored on create."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

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
    result, _ = mutate(lobby, "createGame", {"gameId": game_id, "title": "Quiz"})
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
    assert stored(dynamodb, lobby, f"GAME#{game}", "MOVE#00001") is not None
