"""A game lobby whose design keeps its own write rules as data: a player count bounded at 50, a game that keeps
at least one judge once it has one, a status and a move counter that the gateway keeps from their defaults, and a
game that starts only when full and only once, changes only while open, and is cancelled only by its creator.

    Game    PK=GAME#<gameId>  SK=GAME                 title, creator, people (players, at most 50), judgeCount (at
                                                      least 1), status ("open" when created), lastMove (the last
                                                      move's number), open_timestamp (while open), start_time
    Player  PK=GAME#<gameId>  SK=PLAYER#<username>     nickname, teamNumber (a copy of team, as a number)
            GSI1PK=TEAM#<team>  GSI1SK=PLAYER#<gameId>#<username>   (sparse: only players in a team)
    Judge   PK=GAME#<gameId>  SK=JUDGE#<username>
    Move    PK=GAME#<gameId>  SK=MOVE#<moveNumber:05>  what, number (a copy of moveNumber, as a number);
                                                      moveNumber 1, 2, 3, ... from the game's lastMove
"""

from __future__ import annotations

from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Model, Numbering
from gateway.design.rules import Caller, Condition, Now, Rule, Transition

MAX_PLAYERS = 50

GAME = Entity(
    "Game",
    {None: KeyShape.of("GAME#{gameId}", "GAME")},
    {
        "title": Attribute("S", required=True),
        "creator": Attribute("S", required=True),
        "people": Attribute("INT", writable=False, maximum=MAX_PLAYERS, description="Players who joined."),
        "judgeCount": Attribute("INT", writable=False, minimum=1),
        "status": Attribute("S", writable=False, default="open", enum=("open", "started", "cancelled")),
        "open_timestamp": Attribute("S", writable=False, on_create="today"),
        "start_time": Attribute("S", writable=False),
        "lastMove": Attribute("INT", writable=False, default=0, description="The last move's number."),
    },
)
PLAYER = Entity(
    "Player",
    {
        None: KeyShape.of("GAME#{gameId}", "PLAYER#{username}"),
        "GSI1": KeyShape.of("TEAM#{team}", "PLAYER#{gameId}#{username}", sparse=True),
    },
    {"nickname": "S", "teamNumber": Attribute("INT", from_id="team")},
    verbs={"create": "joinGame", "delete": "leaveGame"},
)
JUDGE = Entity("Judge", {None: KeyShape.of("GAME#{gameId}", "JUDGE#{username}")})
MOVE = Entity(
    "Move",
    {None: KeyShape.of("GAME#{gameId}", "MOVE#{moveNumber:05}")},
    {"what": Attribute("S", required=True), "number": Attribute("INT", from_id="moveNumber")},
    mint="moveNumber",
    minted=Numbering("Game", "lastMove"),
)

GAMES = Declaration(
    Model(
        "games",
        (Index(None, "PK", "SK"), Index("GSI1", "GSI1PK", "GSI1SK")),
        (GAME, PLAYER, JUDGE, MOVE),
        collections=(
            Collection("Game.players", GAME, PLAYER, counter="people"),
            Collection("Game.judges", GAME, JUDGE, counter="judgeCount"),
            Collection("Game.moves", GAME, MOVE),
        ),
    ),
    rules=(
        Transition(
            "startGame",
            GAME,
            when=(Condition("people", "=", MAX_PLAYERS), Condition("open_timestamp", "exists")),
            set={"start_time": Now(), "status": "started"},
            remove=("open_timestamp",),
        ),
        Transition(
            "cancelGame",
            GAME,
            when=(Condition("creator", "=", Caller()), Condition("status", "=", "open")),
            set={"status": "cancelled"},
            remove=("open_timestamp",),
        ),
        Rule("changesWhileOpen", GAME, guards=("update",), when=(Condition("status", "=", "open"),)),
        Rule("startedGamesStay", GAME, guards=("delete",), when=(Condition("status", "<>", "started"),)),
    ),
)
