"""DynamoDB's key model on tables written with plain boto3: membership of an index item by item.

Each test writes items with literal key strings (never the gateway's key code), then reads and writes them through
the gateway with every DynamoDB request counted on the wire.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Model
from gateway.dynamo.store import QueryRequest, table_definition
from gateway.server.cli import main
from gateway.server.declaration_file import load_file
from tests.support.gateway import Gateway, answered, explained, fill, serve_design
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
    assert (changed, sent) == ({"__typename": "Game", "people": 49}, {"UpdateItem": 1})
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
    assert (renamed, sent) == ({"__typename": "Member", "name": "Bo"}, {"UpdateItem": 1})
    deleted, sent = mutate(gateway, "deleteMember", {"memberId": "m2", "expectedVersion": 1})
    assert (deleted["__typename"], sent) == ("Deleted", {"DeleteItem": 1})


# --- a hash-only index: the inverted index idiom ------------------------------------------------------------------
# A membership is keyed by its user and its group; the index `Inverted` has the table's `SK` as its partition key and
# no sort key, so a group's memberships are one Query on it, in no order DynamoDB defines.

INVERTED = Index("Inverted", "SK")
PERSON = Entity("Person", {None: KeyShape.of("USER#{userId}", "PROFILE")}, {"name": "S"})
GROUP = Entity("Group", {None: KeyShape.of("GROUP#{groupId}", "META")}, {"title": "S"})
MEMBERSHIP = Entity(
    "Membership",
    {None: KeyShape.of("USER#{userId}", "GROUP#{groupId}"), "Inverted": KeyShape.of("GROUP#{groupId}")},
    {"role": "S"},
)
GROUPS = Declaration(
    Model(
        "groups",
        (TABLE, INVERTED),
        (PERSON, GROUP, MEMBERSHIP),
        collections=(
            Collection("Person.groups", PERSON, MEMBERSHIP, target=GROUP),
            Collection("Group.members", GROUP, MEMBERSHIP, "Inverted", target=PERSON),
        ),
    )
)
USERS = ["u3", "u1", "u5", "u2", "u4"]
GROUP_ITEMS = [
    {"PK": "GROUP#g1", "SK": "META", "title": "Climbers"},
    *({"PK": f"USER#{user}", "SK": "PROFILE", "name": user.upper()} for user in USERS),
    *({"PK": f"USER#{user}", "SK": "GROUP#g1", "role": "member"} for user in USERS),
    {"PK": "USER#u1", "SK": "GROUP#g2", "role": "owner"},
]


@pytest.fixture(scope="module")
def groups(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, GROUPS, GROUP_ITEMS)


def test_a_hash_only_index_is_created_and_read_by_its_partition_key_alone(
    groups: tuple[Gateway, str], dynamodb: Any
) -> None:
    gateway, table = groups
    index = dynamodb.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"][0]
    assert index["KeySchema"] == [{"AttributeName": "SK", "KeyType": "HASH"}]
    query = '{ group(groupId: "g1") { title members(first: 10) { edges { role node { name } } } } }'
    data, cost = answered(gateway, query)
    names = [edge["node"]["name"] for edge in data["group"]["members"]["edges"]]
    assert sorted(names) == ["U1", "U2", "U3", "U4", "U5"]
    assert {edge["role"] for edge in data["group"]["members"]["edges"]} == {"member"}
    assert cost == explained(gateway, query) == (3, 2)  # GetItem ∥ Query on Inverted, then one BatchGetItem
    data, _ = answered(gateway, '{ person(userId: "u1") { groups { edges { role node { groupId } } } } }')
    assert data["person"]["groups"]["edges"] == [
        {"role": "member", "node": {"groupId": "g1"}},
        {"role": "owner", "node": None},  # no such group
    ]


def test_a_hash_only_index_pages_in_dynamodbs_order_each_member_once(groups: tuple[Gateway, str]) -> None:
    # DynamoDB defines no order within a partition of an index without a sort key. The connection serves its order
    # (the same on each read while the partition does not change), reversed by order: DESCENDING and backward pages,
    # and forward pages list each member once.
    gateway, _ = groups
    page = (
        '{{ group(groupId: "g1") {{ members({args}) {{ nodes {{ userId }} pageInfo {{ endCursor hasNextPage }} }} }} }}'
    )

    def read(args: str) -> tuple[list[str], dict[str, Any]]:
        data, _ = answered(gateway, page.format(args=args))
        members = data["group"]["members"]
        return [node["userId"] for node in members["nodes"]], members["pageInfo"]

    whole, _ = read("first: 10")
    assert sorted(whole) == sorted(USERS) and read("first: 10")[0] == whole
    paged: list[str] = []
    cursor = None
    while True:
        ids, info = read("first: 2" + (f', after: "{cursor}"' if cursor else ""))
        paged += ids
        if not info["hasNextPage"]:
            break
        cursor = info["endCursor"]
    assert paged == whole
    assert read("first: 10, order: DESCENDING")[0] == whole[::-1]
    assert read("last: 2")[0] == whole[-2:]


def test_a_membership_created_on_a_hash_only_index_is_listed_there(groups: tuple[Gateway, str], dynamodb: Any) -> None:
    gateway, table = groups
    mutate(gateway, "createPerson", {"userId": "u9", "name": "U9"})
    created, sent = mutate(gateway, "createMembership", {"userId": "u9", "groupId": "g1", "role": "guest"})
    assert (created["__typename"], sent) == ("Membership", {"PutItem": 1})
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": "USER#u9"}, "SK": {"S": "GROUP#g1"}})["Item"]
    assert set(item) == {"PK", "SK", "role", "version", "writeId"}  # the index's key is the table's own SK
    data, _ = answered(gateway, '{ group(groupId: "g1") { members(first: 10) { edges { role node { userId } } } } }')
    assert {"role": "guest", "node": {"userId": "u9"}} in data["group"]["members"]["edges"]


def test_an_index_shape_must_match_whether_its_index_has_a_sort_key() -> None:
    with pytest.raises(ValueError, match=re.escape("Membership: index 'Inverted' has a partition key alone ('SK')")):
        Model(
            "t", (TABLE, INVERTED), (Entity("Membership", {**MEMBERSHIP.keys, "Inverted": KeyShape.of("G#{g}", "X")}),)
        )
    with pytest.raises(
        ValueError, match=re.escape("Person: the table sorts by 'SK', so its key shape needs a sort key")
    ):
        Model("t", (TABLE,), (Entity("Person", {None: KeyShape.of("USER#{userId}")}),))


# --- a table keyed by its partition key alone ----------------------------------------------------------------------

BARE = Index(None, "id")
PRODUCT = Entity("Product", {None: KeyShape.of("PRODUCT#{productId}")}, {"title": "S", "price": "INT"})
BRAND = Entity("Brand", {None: KeyShape.of("BRAND#{brandId}")}, {"name": "S"})
CATALOG = Declaration(Model("catalog", (BARE,), (PRODUCT, BRAND)))
CATALOG_ITEMS = [
    {"id": "PRODUCT#p1", "title": "Rope", "price": 30},
    {"id": "PRODUCT#p2", "title": "Harness", "price": 60},
    {"id": "BRAND#b1", "name": "Peak"},
]


@pytest.fixture(scope="module")
def catalog(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, CATALOG, CATALOG_ITEMS)


def test_a_table_with_a_partition_key_alone_is_read_and_written_by_it(
    catalog: tuple[Gateway, str], dynamodb: Any
) -> None:
    gateway, table = catalog
    assert dynamodb.describe_table(TableName=table)["Table"]["KeySchema"] == [
        {"AttributeName": "id", "KeyType": "HASH"}
    ]
    query = '{ product(productId: "p1") { title price } brand(brandId: "b1") { name } }'
    data, cost = answered(gateway, query)
    assert data == {"product": {"title": "Rope", "price": 30}, "brand": {"name": "Peak"}}
    assert cost == explained(gateway, query) == (1, 1)  # one BatchGetItem by the partition key alone
    data, _ = answered(gateway, '{ products(productIds: ["p2", "p9", "p1"]) { productId title } }')
    assert data["products"] == [{"productId": "p2", "title": "Harness"}, None, {"productId": "p1", "title": "Rope"}]
    created, sent = mutate(gateway, "createProduct", {"productId": "p3", "title": "Chalk", "price": 5})
    assert (created["__typename"], sent) == ("Product", {"PutItem": 1})
    changed, sent = mutate(gateway, "updateProduct", {"productId": "p3", "expectedVersion": 1, "price": 6})
    assert (changed["__typename"], sent) == ("Product", {"UpdateItem": 1})
    assert dynamodb.get_item(TableName=table, Key={"id": {"S": "PRODUCT#p3"}})["Item"]["price"] == {"N": "6"}
    deleted, sent = mutate(gateway, "deleteProduct", {"productId": "p3", "expectedVersion": 2})
    assert (deleted["__typename"], sent) == ("Deleted", {"DeleteItem": 1})
    assert "Item" not in dynamodb.get_item(TableName=table, Key={"id": {"S": "PRODUCT#p3"}})


def test_init_drafts_a_hash_only_index_so_that_the_draft_serves(
    dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway], tmp_path: Path
) -> None:
    table = f"keys-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=table, **table_definition(GROUPS.model))
    fill(endpoint, table, GROUP_ITEMS)
    output = tmp_path / "draft.yaml"
    assert main(["init", "--from-table", table, "--endpoint-url", endpoint, "--output", str(output)]) == 0
    text = output.read_text()
    assert "Inverted: {pk: SK}" in text and "Inverted: {pk: 'GROUP#{group2Id}'}" in text
    with gateway_factory(table, declaration=load_file(output)) as drafted:
        query = (
            '{ user(userId: "u1") { name } group(userId: "u1", group2Id: "g1") { role }'
            ' group2(group2Id: "g1") { title } }'
        )
        data, cost = answered(drafted, query)
    dynamodb.delete_table(TableName=table)
    assert data == {"user": {"name": "U1"}, "group": {"role": "member"}, "group2": {"title": "Climbers"}}
    assert cost == (1, 1)


# --- a local secondary index ----------------------------------------------------------------------------------------

BY_PRICE = Index("ByPrice", "PK", "Price", local=True)
SHOP = Entity("Shop", {None: KeyShape.of("SHOP#{shopId}", "SHOP")}, {"name": "S"})
ITEM = Entity(
    "Item",
    {
        None: KeyShape.of("SHOP#{shopId}", "ITEM#{itemId}"),
        "ByPrice": KeyShape.of("SHOP#{shopId}", "{price:06}#{itemId}"),
    },
    {"title": "S"},
)
SHOPS = Declaration(
    Model(
        "shops",
        (TABLE, BY_PRICE),
        (SHOP, ITEM),
        collections=(
            Collection("Shop.items", SHOP, ITEM),
            Collection("Shop.cheapest", SHOP, ITEM, "ByPrice", consistent=True),
        ),
    )
)
SHOP_ITEMS = [
    {"PK": "SHOP#s1", "SK": "SHOP", "name": "Corner"},
    {"PK": "SHOP#s1", "SK": "ITEM#i1", "Price": "000250#i1", "title": "Tea"},
    {"PK": "SHOP#s1", "SK": "ITEM#i2", "Price": "000099#i2", "title": "Salt"},
    {"PK": "SHOP#s1", "SK": "ITEM#i3", "title": "Not for sale"},
]


@pytest.fixture(scope="module")
def shops(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, SHOPS, SHOP_ITEMS)


def test_a_local_index_is_created_with_the_table_and_read_strongly_consistent(
    shops: tuple[Gateway, str], dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway, table = shops
    described = dynamodb.describe_table(TableName=table)["Table"]
    assert "GlobalSecondaryIndexes" not in described
    (local,) = described["LocalSecondaryIndexes"]
    assert (local["IndexName"], local["KeySchema"]) == (
        "ByPrice",
        [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "Price", "KeyType": "RANGE"}],
    )
    sent: list[dict[str, Any]] = []
    params = QueryRequest.params

    def spied(self: QueryRequest, name: str, types: Any) -> dict[str, Any]:
        sent.append(params(self, name, types))
        return sent[-1]

    monkeypatch.setattr(QueryRequest, "params", spied)
    query = '{ shop(shopId: "s1") { cheapest { nodes { itemId title } } items { nodes { itemId } } } }'
    data, cost = answered(gateway, query)
    # An item without the local index's sort key is out of it, and still an item of the shop.
    assert data["shop"]["cheapest"]["nodes"] == [{"itemId": "i2", "title": "Salt"}, {"itemId": "i1", "title": "Tea"}]
    assert [node["itemId"] for node in data["shop"]["items"]["nodes"]] == ["i1", "i2", "i3"]
    assert cost == (3, 1)
    by_index = {one.get("IndexName"): one for one in sent}
    assert by_index["ByPrice"]["ConsistentRead"] is True and "ConsistentRead" not in by_index[None]


def test_what_a_local_index_cannot_be_is_refused() -> None:
    with pytest.raises(
        ValueError, match=re.escape("index 'L': a local index has the table's partition key and a sort")
    ):
        Model("t", (TABLE, Index("L", "other", "x", local=True)), (SHOP,))
    moved = Entity("Item", {**ITEM.keys, "ByPrice": KeyShape.of("ELSEWHERE#{shopId}", "{price:06}#{itemId}")})
    with pytest.raises(ValueError, match=re.escape("Item: 'ByPrice' is a local index, keyed by the table's partition")):
        Model("t", (TABLE, BY_PRICE), (moved,))
    on_a_global = "Shop.cheapest: 'GSI' is a global secondary index, which DynamoDB reads eventually consistent only"
    global_ = Index("GSI", "PK", "Price")
    item = Entity("Item", {None: ITEM.primary, "GSI": ITEM.keys["ByPrice"]})
    with pytest.raises(ValueError, match=re.escape(on_a_global)):
        Model(
            "t",
            (TABLE, global_),
            (SHOP, item),
            collections=(Collection("Shop.cheapest", SHOP, item, "GSI", consistent=True),),
        )


# --- projections -----------------------------------------------------------------------------------------------------

NAMES = Index("Names", "GSI1PK", "GSI1SK", projection=("name", "version"))
CREW = Entity("Crew", {None: KeyShape.of("CREW#{crewId}", "CREW")}, {"motto": "S"})
SAILOR = Entity(
    "Sailor",
    {None: KeyShape.of("SAILOR#{sailorId}", "SAILOR"), "Names": KeyShape.of("CREW#{crewId}", "{name}")},
    {"name": Attribute("S", required=True)},
)
CREWS = Declaration(
    Model("crews", (TABLE, NAMES), (CREW, SAILOR), collections=(Collection("Crew.sailors", CREW, SAILOR, "Names"),))
)


@pytest.fixture(scope="module")
def crews(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    items = [
        {"PK": "CREW#c1", "SK": "CREW", "motto": "Ahoy"},
        {"PK": "SAILOR#s1", "SK": "SAILOR", "GSI1PK": "CREW#c1", "GSI1SK": "Bo", "name": "Bo", "shoe": 44},
        {"PK": "SAILOR#s2", "SK": "SAILOR", "GSI1PK": "CREW#c1", "GSI1SK": "Al", "name": "Al", "shoe": 41},
    ]
    yield from serve_design(dynamodb, endpoint, gateway_factory, CREWS, items)


def test_an_index_is_created_with_its_projection_and_serves_what_it_projects(
    crews: tuple[Gateway, str], dynamodb: Any
) -> None:
    gateway, table = crews
    (index,) = dynamodb.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]
    assert index["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["name", "version"]}
    query = '{ crew(crewId: "c1") { sailors { nodes { sailorId name version } } } }'
    data, cost = answered(gateway, query)
    assert data["crew"]["sailors"]["nodes"] == [
        {"sailorId": "s2", "name": "Al", "version": 0},
        {"sailorId": "s1", "name": "Bo", "version": 0},
    ]
    assert cost == (2, 1)


def test_a_read_of_what_an_index_does_not_project_is_refused_naming_the_fix() -> None:
    keys_only = Index("Names", "GSI1PK", "GSI1SK", projection="KEYS_ONLY")
    refused = re.escape(
        "Crew.sailors: index 'Names' does not project ['name', 'version'], which it would serve as null: project them"
        " (projection=('name', 'version') in Python, projection: [name, version] in a file), or project ALL"
    )
    with pytest.raises(ValueError, match=refused):
        Model("t", (TABLE, keys_only), (CREW, SAILOR), collections=(Collection("Crew.sailors", CREW, SAILOR, "Names"),))
