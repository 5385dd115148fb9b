"""The lab's table, created as its scripts create it, and our own items, spelled as its scripts write them."""

from __future__ import annotations

from typing import Any

TABLE_INDEXES = (("OpenGamesIndex", "map", "open_timestamp"), ("InvertedIndex", "SK", "PK"))
MAPS = ("Green Grasslands", "Dirty Desert", "Juicy Jungle")


def create_table(dynamodb: Any, name: str) -> None:
    """``create_table.py``, then ``add_secondary_index.py`` and ``add_inverted_index.py``: string keys, ALL."""
    dynamodb.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": attribute, "AttributeType": "S"} for attribute in ("PK", "SK", "map", "open_timestamp")
        ],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": index,
                "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index, pk, sk in TABLE_INDEXES
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def user(username: str, name: str) -> dict[str, Any]:
    """A user profile as ``items.json`` holds one: ``USER#<username>`` / ``#METADATA#<username>``."""
    return {
        "PK": f"USER#{username}",
        "SK": f"#METADATA#{username}",
        "username": username,
        "name": name,
        "email": f"{username}@example.com",
        "birthdate": "1990-04-16",
        "address": "12 Bridge Street",
    }


def game(game_id: str, creator: str, map_name: str, created: str, people: int, started: str | None) -> dict[str, Any]:
    """A game: open ones hold ``open_timestamp`` (the sparse index's sort key); started ones lost it and hold
    ``start_time`` instead, and keep ``map``, the index's partition key."""
    item: dict[str, Any] = {
        "PK": f"GAME#{game_id}",
        "SK": f"#METADATA#{game_id}",
        "game_id": game_id,
        "map": map_name,
        "create_time": created,
        "creator": creator,
        "people": people,
    }
    if started is None:
        item["open_timestamp"] = created
    else:
        item["start_time"] = started
    return item


def mapping(game_id: str, username: str, place: str | None = None) -> dict[str, Any]:
    """A user in a game (``join_game.py``'s Put); ``place`` once the game is over."""
    item: dict[str, Any] = {"PK": f"GAME#{game_id}", "SK": f"USER#{username}", "game_id": game_id, "username": username}
    if place is not None:
        item["place"] = place
    return item


USERS = ("vlopez", "gstanley", "carrpatrick", "emma83", "nruiz", "pboyd", "iherrera", "lisabaker")
GAMES = (
    # game id, creator, map, created, people, started
    ("3d4285f0-e52b-401a-a59b-112b38c4a26b", "gstanley", "Green Grasslands", "2019-04-16T10:00:00", 3, None),
    ("14c7f97e-8354-4ddf-985f-074970818215", "emma83", "Green Grasslands", "2019-04-16T09:00:00", 2, None),
    ("683680f0-02b0-4e5e-a36a-be4e00fc93f3", "nruiz", "Green Grasslands", "2019-04-16T11:30:00", 1, None),
    ("c6f38a6a-d1c5-4bdf-8468-24692ccc4646", "gstanley", "Green Grasslands", "2019-04-15T08:00:00", 49, None),
    (
        "25cec5bf-e498-483e-9a00-a5f93b9ea7c7",
        "carrpatrick",
        "Green Grasslands",
        "2019-04-14T08:00:00",
        50,
        "2019-04-14T09:00:00",
    ),
    ("c9c3917e-30f3-4ba4-82c4-2e9a0e4d1cfd", "pboyd", "Dirty Desert", "2019-04-13T08:00:00", 50, "2019-04-13T08:40:00"),
    ("0ab37cf1-fc60-4d93-b72b-89335f759581", "iherrera", "Dirty Desert", "2019-04-16T12:00:00", 4, None),
    ("f0a2c7d1-1b6e-4a8c-9a55-0c2f3e4d5a6b", "lisabaker", "Juicy Jungle", "2019-04-12T08:00:00", 50, None),
)
FULL_OPEN = "f0a2c7d1-1b6e-4a8c-9a55-0c2f3e4d5a6b"
"""A game of 50 not started yet: the one ``start_game.py`` may start, by its creator."""
ALMOST_FULL = "c6f38a6a-d1c5-4bdf-8468-24692ccc4646"
STARTED = "25cec5bf-e498-483e-9a00-a5f93b9ea7c7"
LISTED = {
    "3d4285f0-e52b-401a-a59b-112b38c4a26b": ("gstanley", "emma83", "carrpatrick"),
    "14c7f97e-8354-4ddf-985f-074970818215": ("emma83", "nruiz"),
    "683680f0-02b0-4e5e-a36a-be4e00fc93f3": ("nruiz",),
    "25cec5bf-e498-483e-9a00-a5f93b9ea7c7": ("carrpatrick", "vlopez", "pboyd"),
    "c9c3917e-30f3-4ba4-82c4-2e9a0e4d1cfd": ("pboyd", "carrpatrick"),
    "0ab37cf1-fc60-4d93-b72b-89335f759581": ("iherrera", "lisabaker", "pboyd", "nruiz"),
}
# join_game.py adds the mapping and people + 1 in one transaction: a game holds as many mappings as its people.
# Players with no profile of their own fill the full games up to their count.
PLAYERS = {
    game_id: LISTED.get(game_id, ()) + tuple(f"player{n:02}" for n in range(people - len(LISTED.get(game_id, ()))))
    for game_id, _, _, _, people, _ in GAMES
}
PLACES = {("25cec5bf-e498-483e-9a00-a5f93b9ea7c7", "carrpatrick"): "SILVER"}


def items() -> list[dict[str, Any]]:
    """Every item of the fixture: 8 users, 8 games (5 open, 3 of them started or full), their players."""
    out = [user(name, name.capitalize()) for name in USERS]
    out += [game(*spec) for spec in GAMES]
    out += [mapping(g, u, PLACES.get((g, u))) for g, users in PLAYERS.items() for u in users]
    return out
