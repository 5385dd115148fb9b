"""A game lobby whose design keeps its own write rules as data: a player count bounded at 50, and a game that keeps
at least one judge once it has one.

    Game    PK=GAME#<gameId>  SK=GAME              title, people (players, at most 50), judgeCount (at least 1)
    Player  PK=GAME#<gameId>  SK=PLAYER#<username>  nickname
    Judge   PK=GAME#<gameId>  SK=JUDGE#<username>
"""

from __future__ import annotations

from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Model

MAX_PLAYERS = 50

GAME = Entity(
    "Game",
    {None: KeyShape.of("GAME#{gameId}", "GAME")},
    {
        "title": Attribute("S", required=True),
        "people": Attribute("INT", writable=False, maximum=MAX_PLAYERS, description="Players who joined."),
        "judgeCount": Attribute("INT", writable=False, minimum=1),
    },
)
PLAYER = Entity(
    "Player",
    {None: KeyShape.of("GAME#{gameId}", "PLAYER#{username}")},
    {"nickname": "S"},
    verbs={"create": "joinGame", "delete": "leaveGame"},
)
JUDGE = Entity("Judge", {None: KeyShape.of("GAME#{gameId}", "JUDGE#{username}")})

GAMES = Declaration(
    Model(
        "games",
        (Index(None, "PK", "SK"),),
        (GAME, PLAYER, JUDGE),
        collections=(
            Collection("Game.players", GAME, PLAYER, counter="people"),
            Collection("Game.judges", GAME, JUDGE, counter="judgeCount"),
        ),
    )
)
