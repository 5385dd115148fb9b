"""GameScores as the developer guide's CLI example creates it, and our own scores, written as the guide writes them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def create_table(dynamodb: Any, name: str) -> None:
    """UserId/GameTitle, and GameTitleIndex on GameTitle and the number TopScore, projecting UserId beside the keys."""
    dynamodb.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": "UserId", "AttributeType": "S"},
            {"AttributeName": "GameTitle", "AttributeType": "S"},
            {"AttributeName": "TopScore", "AttributeType": "N"},
        ],
        KeySchema=[{"AttributeName": "UserId", "KeyType": "HASH"}, {"AttributeName": "GameTitle", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "GameTitleIndex",
                "KeySchema": [
                    {"AttributeName": "GameTitle", "KeyType": "HASH"},
                    {"AttributeName": "TopScore", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["UserId"]},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )


SCORES = (
    # user, game, top score, when, wins, losses
    ("101", "Galaxy Invaders", 5842, "2015-09-15T17:24:31", 21, 72),
    ("101", "Meteor Blasters", 1000, "2015-10-22T23:18:01", 12, 3),
    ("101", "Starship X", 24, "2015-08-31T13:14:21", 4, 9),
    ("102", "Alien Adventure", 192, "2015-07-12T11:07:56", 32, 192),
    ("102", "Galaxy Invaders", 0, "2015-09-18T07:33:42", 0, 5),
    ("103", "Attack Ships", 3, "2015-10-19T01:13:24", 1, 8),
    ("103", "Galaxy Invaders", 2317, "2015-09-11T06:53:00", 40, 3),
    ("103", "Meteor Blasters", 723, "2015-10-19T01:14:24", 22, 12),
    ("103", "Starship X", 42, "2015-07-11T06:53:03", 4, 19),
    ("104", "Galaxy Invaders", 10000, "2015-11-01T10:00:00", 88, 2),
    ("104", "Meteor Blasters", 99, "2015-10-01T09:00:00", 3, 40),
    ("105", "Galaxy Invaders", 900, "2015-11-02T10:00:00", 5, 9),  # 900 sorts after 10000 as text, before as a number
    ("105", "Meteor Blasters", 1000, "2015-11-03T10:00:00", 9, 9),  # ties 101's top score
    ("105", "Starship X", 7, "2015-11-04T10:00:00", 1, 1),
    ("106", "Galaxy Invaders", 12, "2015-11-05T10:00:00", 1, 30),
    ("106", "Alien Adventure", 88, "2015-11-06T10:00:00", 3, 3),
)


def item(user: str, game: str, score: int, when: str, wins: int, losses: int) -> dict[str, Any]:
    return {
        "UserId": user,
        "GameTitle": game,
        "TopScore": Decimal(score),
        "TopScoreDateTime": when,
        "Wins": Decimal(wins),
        "Losses": Decimal(losses),
    }


def items() -> list[dict[str, Any]]:
    return [item(*score) for score in SCORES]
