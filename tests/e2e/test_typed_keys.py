"""Key attributes of type N and B: a time series keyed by epoch milliseconds, a leaderboard index sorted by a score,
and a binary sort key, written with plain boto3 and served, paged, ranged and written through the gateway."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Lookup, Model
from gateway.config import Settings
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.store import QueryRequest, Store, table_definition
from gateway.server.cli import main
from gateway.server.declaration_file import load_file
from tests.support.gateway import Gateway, accounted, answered, assert_pattern, explained, fill
from tests.support.live import listening, socket
from tests.support.mutations import mutate

# --- a time series: PK = DEVICE#<deviceId> (S), SK = epoch milliseconds (N) -------------------------------------

DEVICE = Entity("Device", {None: KeyShape.of("DEVICE#{deviceId}", "DEVICE")}, partition=True)
READING = Entity(
    "Reading",
    {None: KeyShape.of("DEVICE#{deviceId}", "{ts}")},
    {"celsius": Attribute("N", "The temperature read.")},
)
READINGS = Collection("Device.readings", DEVICE, READING, ascending=False, range="ts", root="deviceReadings")
SERIES = Declaration(
    Model("series", (Index(None, "PK", "SK", sk_type="N"),), (DEVICE, READING), collections=(READINGS,))
)
BIG = 1_700_000_000_123
"""Above 2**31 (GraphQL's Int) and 2**32: an epoch time in milliseconds."""
# Text order differs from numeric order: "9" > "10" > "1700..." as text, 9 < 10 < 1700... as numbers.
STAMPS = [9, 10, 99, 100, BIG - 1, BIG, BIG + 1]
SERIES_ITEMS = [{"PK": "DEVICE#d1", "SK": Decimal(ts), "celsius": Decimal(ts % 40)} for ts in STAMPS]
SERIES_ITEMS.append({"PK": "DEVICE#d2", "SK": Decimal(5), "celsius": Decimal("21.5")})


def _serve(
    served: Callable[..., Gateway], endpoint: str, declaration: Declaration, items: list[Any], **settings: Any
) -> tuple[Gateway, str]:
    """A gateway on a table of ``declaration``'s keys (made by ``table_definition``), filled by plain boto3."""
    gateway = served(declaration, **settings)
    fill(endpoint, gateway.table, items)
    return gateway, gateway.table


@pytest.fixture(scope="module")
def series(served: Callable[..., Gateway], endpoint: str) -> tuple[Gateway, str]:
    return _serve(served, endpoint, SERIES, SERIES_ITEMS)


def test_the_table_is_created_with_a_number_sort_key(dynamodb: Any, series: tuple[Gateway, str]) -> None:
    _, table = series
    described = dynamodb.describe_table(TableName=table)["Table"]["AttributeDefinitions"]
    assert {one["AttributeName"]: one["AttributeType"] for one in described} == {"PK": "S", "SK": "N"}


def test_a_reading_is_read_by_its_number_key_above_32_bits(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    query = f'{{ reading(deviceId: "d1", ts: {BIG}) {{ deviceId ts celsius }} }}'
    assert_pattern(gateway, query, {"reading": {"deviceId": "d1", "ts": BIG, "celsius": BIG % 40}}, (1, 1))
    # Its digits as a string, for a client whose numbers cannot hold it; and as a variable.
    data, _ = answered(gateway, f'{{ reading(deviceId: "d1", ts: "{BIG}") {{ ts }} }}')
    assert data == {"reading": {"ts": BIG}}
    body = gateway.query('query($ts: Long!) { reading(deviceId: "d1", ts: $ts) { ts } }', {"ts": BIG})
    assert body["data"] == {"reading": {"ts": BIG}}


def test_a_number_key_is_typed_long_in_the_schema(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    body = gateway.query('{ __type(name: "Reading") { fields { name type { name ofType { name } } } } }')
    fields = {one["name"]: one["type"] for one in body["data"]["__type"]["fields"]}
    assert fields["ts"] == {"name": None, "ofType": {"name": "Long"}}
    assert fields["deviceId"] == {"name": None, "ofType": {"name": "ID"}}


def test_a_number_key_is_refused_when_it_is_no_whole_number(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    body = gateway.query('{ reading(deviceId: "d1", ts: "soon") { ts } }')
    assert body["errors"], body
    assert body["errors"][0]["extensions"]["code"] in ("BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED")
    body = gateway.query('{ reading(deviceId: "d1", ts: 1.5) { ts } }')
    assert body["errors"][0]["extensions"]["code"] in ("BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED")
    body = gateway.query(f'{{ reading(deviceId: "d1", ts: {10**38}) {{ ts }} }}')
    assert "at most 38 digits" in body["errors"][0]["message"]


def test_readings_list_newest_first_in_numeric_order_across_pages(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    seen: list[int] = []
    after = "null"
    pages = 0
    while True:
        body = gateway.query(
            f'{{ deviceReadings(deviceId: "d1", first: 3, after: {after}) {{ edges {{ cursor node {{ ts }} }}'
            " pageInfo { hasNextPage endCursor } } }"
        )
        assert "errors" not in body, body
        calls, rounds, _ = accounted(body)
        assert (calls, rounds) == (1, 1)
        page = body["data"]["deviceReadings"]
        seen += [edge["node"]["ts"] for edge in page["edges"]]
        pages += 1
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = '"' + page["pageInfo"]["endCursor"] + '"'
    assert seen == sorted(STAMPS, reverse=True)
    assert pages == 3


def test_a_cursor_after_a_big_number_resumes_there(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    first = gateway.query('{ deviceReadings(deviceId: "d1", first: 2) { edges { cursor node { ts } } } }')["data"][
        "deviceReadings"
    ]["edges"]
    assert [edge["node"]["ts"] for edge in first] == [BIG + 1, BIG]
    after = first[1]["cursor"]
    body = gateway.query(
        f'{{ deviceReadings(deviceId: "d1", first: 2, after: "{after}") {{ edges {{ node {{ ts }} }} }} }}'
    )
    assert [edge["node"]["ts"] for edge in body["data"]["deviceReadings"]["edges"]] == [BIG - 1, 100]


def test_a_range_of_numbers_is_one_query_in_numeric_order(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    query = '{ deviceReadings(deviceId: "d1", ts: {between: [9, 100]}) { edges { node { ts } } } }'
    data, cost = answered(gateway, query)
    assert [edge["node"]["ts"] for edge in data["deviceReadings"]["edges"]] == [100, 99, 10, 9]
    assert cost == explained(gateway, query) == (1, 1)
    data, _ = answered(
        gateway, f'{{ deviceReadings(deviceId: "d1", ts: {{gte: {BIG}}}) {{ edges {{ node {{ ts }} }} }} }}'
    )
    assert [edge["node"]["ts"] for edge in data["deviceReadings"]["edges"]] == [BIG + 1, BIG]
    data, _ = answered(
        gateway, '{ deviceReadings(deviceId: "d1", ts: {lte: 10}, order: ASCENDING) { edges { node { ts } } } }'
    )
    assert [edge["node"]["ts"] for edge in data["deviceReadings"]["edges"]] == [9, 10]


def test_a_range_of_numbers_takes_no_prefix(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    body = gateway.query('{ deviceReadings(deviceId: "d1", ts: {beginsWith: "1"}) { edges { node { ts } } } }')
    assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


def test_a_cursor_outside_a_numeric_range_is_refused(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    edges = gateway.query('{ deviceReadings(deviceId: "d1", first: 1) { edges { cursor } } }')["data"]
    cursor = edges["deviceReadings"]["edges"][0]["cursor"]  # at BIG + 1
    query = '{ deviceReadings(deviceId: "d1", after: "CURSOR", ts: {between: [9, 100]}) { edges { node { ts } } } }'
    body = gateway.query(query.replace("CURSOR", cursor))
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


def test_a_global_id_round_trips_a_big_number(series: tuple[Gateway, str]) -> None:
    gateway, _ = series
    data, _ = answered(gateway, f'{{ reading(deviceId: "d1", ts: {BIG}) {{ id }} }}')
    global_id = data["reading"]["id"]
    query = f'{{ node(id: "{global_id}") {{ ... on Reading {{ ts celsius }} }} }}'
    node, cost = answered(gateway, query)
    assert node == {"node": {"ts": BIG, "celsius": BIG % 40}}
    assert cost == explained(gateway, query) == (1, 1)


def test_readings_are_created_updated_and_deleted_as_numbers(dynamodb: Any, series: tuple[Gateway, str]) -> None:
    gateway, table = series
    stamp = 2**41 + 7
    created, calls = mutate(
        gateway, "createReading", {"deviceId": "d9", "ts": stamp, "celsius": 20.5}, "... on Reading { ts celsius }"
    )
    assert created == {"__typename": "Reading", "ts": stamp, "celsius": 20.5}
    assert sum(calls.values()) == 1
    stored = dynamodb.get_item(TableName=table, Key={"PK": {"S": "DEVICE#d9"}, "SK": {"N": str(stamp)}})["Item"]
    assert stored["SK"] == {"N": str(stamp)}
    assert stored["celsius"] == {"N": "20.5"}
    updated, calls = mutate(
        gateway,
        "updateReading",
        {"deviceId": "d9", "ts": stamp, "expectedVersion": 1, "celsius": 22},
        "... on Reading { celsius }",
    )
    assert updated == {"__typename": "Reading", "celsius": 22}
    assert sum(calls.values()) == 1
    stored = dynamodb.get_item(TableName=table, Key={"PK": {"S": "DEVICE#d9"}, "SK": {"N": str(stamp)}})["Item"]
    assert Decimal(stored["celsius"]["N"]) == 22
    _, calls = mutate(gateway, "deleteReading", {"deviceId": "d9", "ts": stamp})
    assert sum(calls.values()) == 1
    assert "Item" not in dynamodb.get_item(TableName=table, Key={"PK": {"S": "DEVICE#d9"}, "SK": {"N": str(stamp)}})


# --- a leaderboard: a GSI sorted by a number (score N) ---------------------------------------------------------

GAME = Entity("Game", {None: KeyShape.of("GAME#{game}", "GAME")}, partition=True)
PLAYER = Entity(
    "Player",
    {
        None: KeyShape.of("GAME#{game}", "PLAYER#{playerId}"),
        "GSI1": KeyShape.of("GAME#{game}", "{score}"),
        "GSI2": KeyShape.of("{badge}", "GAME#{game}", sparse=True),
    },
    {"score": Attribute("INT", "Points so far.", required=True)},
)
LEADERBOARD = Collection("Game.leaderboard", GAME, PLAYER, index="GSI1", ascending=False, range="score")
GAMES = Declaration(
    Model(
        "games",
        (
            Index(None, "PK", "SK"),
            Index("GSI1", "GSI1PK", "GSI1SK", sk_type="N"),
            Index("GSI2", "GSI2PK", "GSI2SK", pk_type="N"),
        ),
        (GAME, PLAYER),
        collections=(LEADERBOARD,),
        lookups=(Lookup("playerByBadge", PLAYER, "GSI2"),),
    )
)
SCORES = {"ann": 9, "bob": 10, "cy": 100, "dee": 100_000}
BADGE = 2**40 + 1
"""The number of dee's badge, a number partition key of GSI2."""
GAME_ITEMS = [
    {"PK": "GAME#g1", "SK": f"PLAYER#{name}", "GSI1PK": "GAME#g1", "GSI1SK": Decimal(score), "score": Decimal(score)}
    for name, score in SCORES.items()
]
GAME_ITEMS[-1].update({"GSI2PK": Decimal(BADGE), "GSI2SK": "GAME#g1"})


@pytest.fixture(scope="module")
def games(served: Callable[..., Gateway], endpoint: str) -> tuple[Gateway, str]:
    return _serve(served, endpoint, GAMES, GAME_ITEMS)


def test_a_leaderboard_reads_an_index_by_its_number_sort_key(games: tuple[Gateway, str]) -> None:
    gateway, _ = games
    query = '{ game(game: "g1") { leaderboard { edges { node { playerId score } } } } }'
    data, cost = answered(gateway, query)
    ranks = [(edge["node"]["playerId"], edge["node"]["score"]) for edge in data["game"]["leaderboard"]["edges"]]
    assert ranks == [("dee", 100_000), ("cy", 100), ("bob", 10), ("ann", 9)]
    assert cost == explained(gateway, query) == (1, 1)
    data, _ = answered(
        gateway, '{ game(game: "g1") { leaderboard(score: {gte: 10, }) { edges { node { playerId } } } } }'
    )
    assert [edge["node"]["playerId"] for edge in data["game"]["leaderboard"]["edges"]] == ["dee", "cy", "bob"]


def test_a_player_is_looked_up_by_a_number_partition_key_of_an_index(games: tuple[Gateway, str]) -> None:
    gateway, _ = games
    query = f'{{ playerByBadge(badge: {BADGE}, game: "g1") {{ playerId badge score }} }}'
    assert_pattern(gateway, query, {"playerByBadge": {"playerId": "dee", "badge": BADGE, "score": 100_000}}, (1, 1))
    data, _ = answered(gateway, '{ player(game: "g1", playerId: "ann") { badge } }')
    assert data == {"player": {"badge": None}}


def test_a_new_score_moves_a_player_in_the_number_index(dynamodb: Any, games: tuple[Gateway, str]) -> None:
    gateway, table = games
    mutate(gateway, "createPlayer", {"game": "g2", "playerId": "eve", "score": 5})
    mutate(gateway, "updatePlayer", {"game": "g2", "playerId": "eve", "expectedVersion": 1, "score": 50})
    stored = dynamodb.get_item(TableName=table, Key={"PK": {"S": "GAME#g2"}, "SK": {"S": "PLAYER#eve"}})["Item"]
    assert stored["GSI1SK"] == {"N": "50"}
    data, _ = answered(gateway, '{ game(game: "g2") { leaderboard { edges { node { playerId score } } } } }')
    assert data["game"]["leaderboard"]["edges"] == [{"node": {"playerId": "eve", "score": 50}}]


# --- a binary sort key -----------------------------------------------------------------------------------------

FILE = Entity("File", {None: KeyShape.of("FILE#{fileId}", "FILE")}, partition=True)
CHUNK = Entity("Chunk", {None: KeyShape.of("FILE#{fileId}", "{digest}")}, {"size": "INT"})
CHUNKS = Collection("File.chunks", FILE, CHUNK)
FILES = Declaration(Model("files", (Index(None, "PK", "SK", sk_type="B"),), (FILE, CHUNK), collections=(CHUNKS,)))
DIGESTS = [b"\x00\x01", b"\xff\xfe\x00", b"abc"]
FILE_ITEMS = [{"PK": "FILE#f1", "SK": digest, "size": Decimal(len(digest))} for digest in DIGESTS]


@pytest.fixture(scope="module")
def files(served: Callable[..., Gateway], endpoint: str) -> tuple[Gateway, str]:
    return _serve(served, endpoint, FILES, FILE_ITEMS)


def test_a_binary_key_is_read_and_served_as_base64(files: tuple[Gateway, str]) -> None:
    gateway, _ = files
    digest = base64.b64encode(b"\xff\xfe\x00").decode()
    query = f'{{ chunk(fileId: "f1", digest: "{digest}") {{ digest size }} }}'
    data, cost = answered(gateway, query)
    assert data == {"chunk": {"digest": digest, "size": 3}}
    assert cost == explained(gateway, query) == (1, 1)
    data, _ = answered(gateway, '{ file(fileId: "f1") { chunks { edges { node { digest } } } } }')
    # DynamoDB orders binary keys by their unsigned bytes.
    assert [edge["node"]["digest"] for edge in data["file"]["chunks"]["edges"]] == [
        base64.b64encode(one).decode() for one in sorted(DIGESTS)
    ]


def test_a_binary_key_that_is_no_base64_is_refused(files: tuple[Gateway, str]) -> None:
    gateway, _ = files
    body = gateway.query('{ chunk(fileId: "f1", digest: "not base64!") { size } }')
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


def test_a_binary_chunk_is_created_as_bytes(dynamodb: Any, files: tuple[Gateway, str]) -> None:
    gateway, table = files
    digest = base64.b64encode(b"\x10\x20").decode()
    mutate(gateway, "createChunk", {"fileId": "f2", "digest": digest, "size": 2})
    stored = dynamodb.get_item(TableName=table, Key={"PK": {"S": "FILE#f2"}, "SK": {"B": b"\x10\x20"}})["Item"]
    assert stored["size"] == {"N": "2"}


# --- init --from-table ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sort", ["N", "B"])
def test_init_drafts_the_key_types_that_describe_table_declares(
    dynamodb: Any, endpoint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], sort: str
) -> None:
    name = f"typed-draft-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": sort},
            {"AttributeName": "Board", "AttributeType": "S"},
            {"AttributeName": "Score", "AttributeType": "N"},
        ],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "ByScore",
                "KeySchema": [
                    {"AttributeName": "Board", "KeyType": "HASH"},
                    {"AttributeName": "Score", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    try:
        fill(
            endpoint,
            name,
            [
                {
                    "PK": f"DEVICE#{device}",
                    "SK": Decimal(BIG + i) if sort == "N" else bytes([i, 255]),
                    "Board": "b1",
                    "Score": Decimal(i),
                }
                for device in ("d1", "d2")
                for i in range(3)
            ],
        )
        output = tmp_path / "draft.yaml"
        argv = ["init", "--from-table", name, "--endpoint-url", endpoint, "--output", str(output)]
        assert main(argv) == 0
        capsys.readouterr()
    finally:
        dynamodb.delete_table(TableName=name)
    model = load_file(output).model
    assert (model.index(None).pk_type, model.index(None).sk_type) == ("S", sort)
    assert model.entities[0].primary.sk.pattern.startswith("{")  # one field: a number or binary key holds no text
    assert (model.index("ByScore").pk_type, model.index("ByScore").sk_type) == ("S", "N")
    assert table_definition(model)["AttributeDefinitions"] == [
        {"AttributeName": "Board", "AttributeType": "S"},
        {"AttributeName": "PK", "AttributeType": "S"},
        {"AttributeName": "SK", "AttributeType": sort},
        {"AttributeName": "Score", "AttributeType": "N"},
    ]


def test_a_client_token_is_kept_in_a_table_with_a_number_sort_key(dynamodb: Any, series: tuple[Gateway, str]) -> None:
    gateway, table = series
    data = {"deviceId": "d7", "ts": BIG, "celsius": 1}
    first, calls = mutate(gateway, "createReading", data, "... on Reading { ts }", token="t-1")
    again, _ = mutate(gateway, "createReading", data, "... on Reading { ts }", token="t-1")
    assert first == again == {"__typename": "Reading", "ts": BIG}
    assert calls == {"TransactWriteItems": 1}
    tokens = dynamodb.scan(
        TableName=table, FilterExpression="begins_with(PK, :t)", ExpressionAttributeValues={":t": {"S": "TOKEN#"}}
    )
    assert [item["SK"] for item in tokens["Items"]] == [{"N": "0"}]


async def test_a_reading_written_by_boto3_reaches_a_subscriber_with_its_number_key(
    dynamodb: Any, series: tuple[Gateway, str]
) -> None:
    gateway, table = series
    query = 'subscription { deviceReadingsChanged(deviceId: "d5") { kind node { ts celsius } } }'
    async with socket(gateway) as client:
        await client.subscribe(query)
        await listening(gateway)
        dynamodb.put_item(
            TableName=table, Item={"PK": {"S": "DEVICE#d5"}, "SK": {"N": str(BIG)}, "celsius": {"N": "3"}}
        )
        event = await client.event()
    assert event == {"kind": "CREATED", "node": {"ts": BIG, "celsius": 3}}


@pytest.mark.parametrize("plane", ["lean", "stock"])
def test_binary_keys_page_across_pages_on_either_client(
    served: Callable[..., Gateway], endpoint: str, plane: str
) -> None:
    gateway, _ = _serve(served, endpoint, FILES, FILE_ITEMS, data_plane=plane)
    seen: list[str] = []
    after = None
    while True:
        page = gateway.query(
            'query($after: String) { file(fileId: "f1") { chunks(first: 1, after: $after) { edges { node { digest } }'
            " pageInfo { hasNextPage endCursor } } } }",
            {"after": after},
        )["data"]["file"]["chunks"]
        seen += [edge["node"]["digest"] for edge in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == [base64.b64encode(one).decode() for one in sorted(DIGESTS)]


@pytest.mark.parametrize("plane", ["lean", "stock"])
async def test_a_query_resumes_from_a_binary_last_evaluated_key_on_either_client(
    files: tuple[Gateway, str], endpoint: str, plane: str
) -> None:
    _, table = files
    request = QueryRequest(("PK", "FILE#f1"), limit=1)
    ordered = sorted(DIGESTS)
    async with Store.open(Settings(endpoint_url=endpoint, table=table, data_plane=plane), FILES.model) as store:
        first = await store.query_once(request, Ledger())
        assert first.last_key == {"PK": "FILE#f1", "SK": base64.b64encode(ordered[0]).decode()}
        second = await store.query_once(replace(request, start_key=first.last_key), Ledger())
    assert [bytes(item["SK"]) for item in second.items] == [ordered[1]]
