"""The DynamoDB developer guide's GameScores table, served from a YAML declaration written from our docs alone.

GameTitleIndex sorts a game's scores by ``TopScore``, a number: the guide's leaderboard questions are one Query on
it, descending. Each pattern is asked through the gateway and through the guide's own request (plain boto3);
answers and calls/rounds are compared. See game_scores/README.md for the friction met.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gateway.server.declaration_file import load_file
from tests.corpus.checked import check_errors
from tests.corpus.game_scores import data
from tests.corpus.reference import Design, table, typed, without_gateway_bookkeeping
from tests.support.gateway import Gateway, assert_pattern, fill
from tests.support.mutations import mutate

FILE = Path(__file__).parent / "game_scores" / "game_scores.yaml"
DECLARATION = load_file(FILE)


@pytest.fixture(scope="module")
def deployed(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, Design]]:
    with table(dynamodb, "GameScores", data.create_table) as name:
        fill(endpoint, name, data.items())
        with gateway_factory(name, declaration=DECLARATION) as gateway:
            yield gateway, Design(dynamodb, name)


def _score(item: dict[str, Any]) -> dict[str, Any]:
    return {"gameTitle": item["GameTitle"], "topScore": int(item["TopScore"]), "wins": int(item["Wins"])}


def _top(design: Design, game: str, limit: int, **options: Any) -> list[dict[str, Any]]:
    """The guide's leaderboard Query: GameTitleIndex, GameTitle = :title, highest TopScore first."""
    return design.query(
        "GameTitle = :title",
        {":title": game},
        IndexName="GameTitleIndex",
        ScanIndexForward=False,
        Limit=limit,
        **options,
    )


# --- reads --------------------------------------------------------------------------------------------------------


def test_a_users_score_in_one_game(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    item = design.get({"UserId": "101", "GameTitle": "Meteor Blasters"})
    assert item is not None
    query = '{ score(userId: "101", gameTitle: "Meteor Blasters") { gameTitle topScore wins } }'
    assert_pattern(gateway, query, {"score": _score(item)}, (design.calls, 1))


def test_a_users_scores(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    found = design.query("UserId = :user", {":user": "103"})
    assert len(found) == 4
    query = '{ scoresOfUser(userId: "103") { nodes { gameTitle topScore wins } } }'
    assert_pattern(gateway, query, {"scoresOfUser": {"nodes": [_score(one) for one in found]}}, (design.calls, 1))


def test_the_top_score_ever_recorded_for_meteor_blasters(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    best = _top(design, "Meteor Blasters", 1)
    query = '{ leaderboard(gameTitle: "Meteor Blasters", first: 1) { nodes { topScore } } }'
    assert_pattern(
        gateway, query, {"leaderboard": {"nodes": [{"topScore": int(best[0]["TopScore"])}]}}, (design.calls, 1)
    )


def test_which_user_had_the_highest_score_for_galaxy_invaders(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    best = _top(design, "Galaxy Invaders", 1, ProjectionExpression="UserId")
    assert best == [{"UserId": "104"}]
    query = '{ leaderboard(gameTitle: "Galaxy Invaders", first: 1) { nodes { userId } } }'
    assert_pattern(gateway, query, {"leaderboard": {"nodes": [{"userId": "104"}]}}, (design.calls, 1))


def test_scores_of_a_game_from_a_bound(deployed: tuple[Gateway, Design]) -> None:
    # The leaderboard from a score up: GameTitle = :title AND TopScore >= :low, highest first.
    gateway, design = deployed
    design.calls = 0
    found = design.query(
        "GameTitle = :title AND TopScore >= :low",
        {":title": "Galaxy Invaders", ":low": Decimal(900)},
        IndexName="GameTitleIndex",
        ScanIndexForward=False,
    )
    assert [int(one["TopScore"]) for one in found] == [10000, 5842, 2317, 900]
    query = '{ leaderboard(gameTitle: "Galaxy Invaders", topScore: {gte: 900}) { nodes { userId topScore } } }'
    expected = {
        "leaderboard": {"nodes": [{"userId": one["UserId"], "topScore": int(one["TopScore"])} for one in found]}
    }
    assert_pattern(gateway, query, expected, (design.calls, 1))


def test_the_best_ratio_of_wins_to_losses_is_not_offered(deployed: tuple[Gateway, Design]) -> None:
    # The guide answers it with a Scan of the table; nothing that serves a request scans.
    gateway, _ = deployed
    body = gateway.query("{ scores { nodes { wins losses } } }")
    assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


# --- writes -------------------------------------------------------------------------------------------------------


def test_record_a_first_score(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    first = data.item("201", "Starship X", 77, "2015-12-01T10:00:00", 1, 0)
    design.send("put_item", TableName=design.table, Item=typed(first))
    mine = {"userId": "202", "gameTitle": "Starship X", "topScore": 77, "topScoreDateTime": first["TopScoreDateTime"]}
    result, operations = mutate(gateway, "createScore", mine | {"wins": 1, "losses": 0}, "... on Score { topScore }")
    assert result == {"__typename": "Score", "topScore": 77}
    assert operations == {"PutItem": 1}
    stored = without_gateway_bookkeeping(design.get({"UserId": "202", "GameTitle": "Starship X"}))
    assert stored == {**first, "UserId": "202"}


def test_a_new_top_score(deployed: tuple[Gateway, Design]) -> None:
    # The game's natural write: SET TopScore and its time, and count the win.
    gateway, design = deployed
    for user in ("301", "302"):
        design.dynamodb.put_item(
            TableName=design.table, Item=typed(data.item(user, "Attack Ships", 5, "2015-12-01T10:00:00", 1, 1))
        )
    when = "2015-12-02T10:00:00"
    design.send(
        "update_item",
        TableName=design.table,
        Key=typed({"UserId": "301", "GameTitle": "Attack Ships"}),
        UpdateExpression="SET TopScore = :score, TopScoreDateTime = :when, Wins = Wins + :one",
        ExpressionAttributeValues=typed({":score": 50, ":when": when, ":one": 1}),
    )
    change = {"userId": "302", "gameTitle": "Attack Ships", "topScore": 50, "topScoreDateTime": when, "wins": 2}
    result, _ = mutate(gateway, "updateScore", change | {"expectedVersion": 0}, "... on Score { topScore }")
    assert result == {"__typename": "Score", "topScore": 50}
    stored = without_gateway_bookkeeping(design.get({"UserId": "302", "GameTitle": "Attack Ships"}))
    assert stored == {**(design.get({"UserId": "301", "GameTitle": "Attack Ships"}) or {}), "UserId": "302"}


# --- the declaration against the table ------------------------------------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="declared with its real projection (GameTitleIndex: projection: [UserId], INCLUDE), Game.leaderboard is "
    "refused at build: the index does not project Losses, TopScoreDateTime, Wins and version, which its members "
    "declare, and reading the rest from the table is not supported yet; declared ALL, check finds `projection`",
)
def test_the_filled_table_passes_check(
    deployed: tuple[Gateway, Design], endpoint: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, design = deployed
    declared = FILE.read_text().replace("sk_type: N}", "sk_type: N, projection: [UserId]}", 1)
    real = tmp_path / FILE.name
    real.write_text(declared)
    assert check_errors(endpoint, design.table, real, capsys) == []
