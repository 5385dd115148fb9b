"""A union connection: the items of several kinds in one partition, read by one Query and served as a GraphQL union.

The table is written with plain boto3 and literal key strings; every answer is compared with a plain-Python reading
of the same items (the partition's items after the shared prefix, in sort-key byte order), and every request is
counted on the wire.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import boto3
import pytest

from gateway import Collection, Declaration, Entity, Index, KeyShape, Link, Model
from gateway.design.tenancy import Tenancy
from gateway.dynamo.store import table_definition
from tests.support.gateway import Gateway, accounted
from tests.support.identity import Issuer

TABLE = Index(None, "PK", "SK")

BOARD = Entity("Board", {None: KeyShape.of("BOARD#{boardId}", "META")}, {"title": "S"})
CARD = Entity("Card", {None: KeyShape.of("BOARD#{boardId}", "ITEM#C#{cardId}")}, {"text": "S"})
NOTE = Entity("Note", {None: KeyShape.of("BOARD#{boardId}", "ITEM#N#{noteId}")}, {"body": "S"})
STICKER = Entity(
    "Sticker",
    {None: KeyShape.of("BOARD#{boardId}", "ITEM#S#{stickerId}")},
    {"emoji": "S"},
    discriminator=("kind", "sticker"),
)
PHOTO = Entity(
    "Photo",
    {None: KeyShape.of("BOARD#{boardId}", "ITEM#S#{photoId}")},
    {"url": "S"},
    discriminator=("kind", "photo"),
)
TAG = Entity("Tag", {None: KeyShape.of("BOARD#{boardId}", "TAG#{tag}")}, {"color": "S"})
PINNED = Collection(
    "Board.pinned",
    BOARD,
    (CARD, NOTE, STICKER, PHOTO),
    description="Everything pinned on the board, in key order.",
    root="boardPinned",
)
MODEL = Model(
    "boards",
    (TABLE,),
    (BOARD, CARD, NOTE, STICKER, PHOTO, TAG),
    collections=(PINNED, Collection("Board.tags", BOARD, TAG)),
    links=(Link("Card.board", CARD, BOARD),),
)
BOARDS = Declaration(MODEL, tenancy=Tenancy({"boardId": "boards"}))

FOREIGN = [  # in the range read, of no kind of the union: skipped and logged, never served
    {"PK": "BOARD#b4", "SK": "META", "title": "Mixed"},
    {"PK": "BOARD#b4", "SK": "ITEM#C#c1", "text": "first"},
    {"PK": "BOARD#b4", "SK": "ITEM#C#c2", "text": "second"},
    {"PK": "BOARD#b4", "SK": "ITEM#N#n1#old", "body": "a note of an older layout"},
    {"PK": "BOARD#b4", "SK": "ITEM#S#s9", "kind": "robot", "emoji": "?"},
    {"PK": "BOARD#b4", "SK": "ITEM#S#s1", "kind": "sticker", "emoji": ":("},
]


def _items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"PK": "BOARD#b1", "SK": "META", "title": "Ideas"},
        {"PK": "BOARD#b2", "SK": "META", "title": "Empty"},
        {"PK": "BOARD#b3", "SK": "ITEM#C#c1", "text": "another board's card"},
        {"PK": "BOARD#b1", "SK": "TAG#red", "color": "red"},
    ]
    for i in range(7):
        items.append({"PK": "BOARD#b1", "SK": f"ITEM#C#c{i}", "text": f"card {i}"})
    for i in range(4):
        items.append({"PK": "BOARD#b1", "SK": f"ITEM#N#n{i}", "body": f"note {i}"})
    for i in range(3):
        items.append({"PK": "BOARD#b1", "SK": f"ITEM#S#s{i}", "kind": "sticker", "emoji": ":)" * (i + 1)})
    for i in range(3, 6):
        items.append({"PK": "BOARD#b1", "SK": f"ITEM#S#p{i}", "kind": "photo", "url": f"https://x/{i}"})
    return items + FOREIGN


_KINDS = {  # (the sort key's letter, kind): (type, its id, its attribute)
    ("C", None): ("Card", "cardId", "text"),
    ("N", None): ("Note", "noteId", "body"),
    ("S", "sticker"): ("Sticker", "stickerId", "emoji"),
    ("S", "photo"): ("Photo", "photoId", "url"),
}


def _reference(items: list[dict[str, Any]], board: str, descending: bool = False) -> list[dict[str, Any]]:
    """The union's members, read by hand: the board's ``ITEM#`` items, told apart by their sort key's letter and
    ``kind``, in key order."""
    out = []
    for item in sorted(items, key=lambda one: one["SK"].encode(), reverse=descending):
        if item["PK"] != f"BOARD#{board}" or not item["SK"].startswith("ITEM#"):
            continue
        _, letter, *own = item["SK"].split("#")
        kind = _KINDS.get((letter, item.get("kind") if letter == "S" else None))
        if kind is not None and len(own) == 1:
            type_name, id_field, attribute = kind
            out.append({"__typename": type_name, id_field: own[0], attribute: item[attribute]})
    return out


NODE = (
    "__typename ... on Card { cardId text } ... on Note { noteId body } ... on Sticker { stickerId emoji }"
    " ... on Photo { photoId url }"
)


@pytest.fixture(scope="module")
def table(dynamodb: Any, endpoint: str) -> Iterator[str]:
    name = f"union-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, **table_definition(BOARDS.model))
    resource: Any = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )
    with resource.Table(name).batch_writer() as batch:
        for item in _items():
            batch.put_item(Item=item)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def boards(table: str, gateway_factory: Callable[..., Gateway]) -> Iterator[Gateway]:
    with gateway_factory(table, declaration=BOARDS) as running:
        yield running


@pytest.fixture
def wire(boards: Gateway) -> list[dict[str, Any]]:
    """The Queries the gateway sends, as their bodies go on the wire."""
    sent: list[dict[str, Any]] = []

    def record(operation: str, headers: Mapping[str, str], body: bytes) -> None:
        if operation == "Query":
            sent.append(json.loads(body))

    boards.app.state.store.on_send(record)
    return sent


def _answer(gateway: Gateway, query: str) -> tuple[Any, tuple[int, int, dict[str, int]]]:
    body = gateway.query(query)
    assert "errors" not in body, body["errors"]
    return body["data"], accounted(body)


def _explained(gateway: Gateway, query: str) -> tuple[int, int]:
    explain = gateway.query(query, **{"X-Tablegraph-Explain": "1"})["extensions"]["explain"]
    return explain["calls"], explain["rounds"]


@pytest.mark.parametrize("order", ["ASCENDING", "DESCENDING"])
def test_every_kind_comes_from_one_query_in_key_order_as_the_reference_reads_it(
    boards: Gateway, wire: list[dict[str, Any]], order: str
) -> None:
    query = f'{{ board(boardId: "b1") {{ title pinned(first: 50, order: {order}) {{ nodes {{ {NODE} }} }} }} }}'
    wire.clear()
    data, cost = _answer(boards, query)
    expected = _reference(_items(), "b1", descending=order == "DESCENDING")
    assert data["board"]["pinned"]["nodes"] == expected
    assert {node["__typename"] for node in expected} == {"Card", "Note", "Sticker", "Photo"}
    assert cost == (2, 1, {"BatchGetItem": 1, "Query": 1})
    assert _explained(boards, query) == (2, 1)
    (members,) = wire
    assert members["KeyConditionExpression"] == "#pk = :pk AND begins_with(#sk, :sk)"
    assert members["ExpressionAttributeValues"][":sk"] == {"S": "ITEM#"}


def test_an_item_of_no_kind_is_skipped_logged_and_read_past_to_fill_the_page(
    boards: Gateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    expected = _reference(_items(), "b4")
    assert [node.get("cardId") or node.get("stickerId") for node in expected] == ["c1", "c2", "s1"]
    query = f'{{ board(boardId: "b4") {{ pinned(first: 2) {{ nodes {{ {NODE} }} pageInfo {{ hasNextPage }} }} }} }}'
    data, cost = _answer(boards, query)
    assert data["board"]["pinned"] == {"nodes": expected[:2], "pageInfo": {"hasNextPage": True}}
    assert "ITEM#N#n1#old" in caplog.text and "ITEM#S#s9" in caplog.text
    # The first Query's Limit (3) counted a foreign item, so the page reads on once: what docs/own-table.md says
    # an item of no kind costs, which the estimate (made from the declaration) does not know of.
    assert cost == (3, 2, {"BatchGetItem": 1, "Query": 2})
    assert _explained(boards, query) == (2, 1)


@pytest.mark.parametrize("size", [1, 3, 5])
def test_pages_forwards_then_backwards_with_cursors_cover_the_union_in_order(boards: Gateway, size: int) -> None:
    expected = _reference(_items(), "b1")
    page = f"edges {{ cursor node {{ {NODE} }} }} pageInfo {{ hasNextPage hasPreviousPage startCursor endCursor }}"
    seen: list[dict[str, Any]] = []
    after = ""
    while True:
        data, cost = _answer(boards, f'{{ boardPinned(boardId: "b1", first: {size}{after}) {{ {page} }} }}')
        found = data["boardPinned"]
        seen += [edge["node"] for edge in found["edges"]]
        assert cost[:2] == (1, 1)
        if not found["pageInfo"]["hasNextPage"]:
            break
        after = f', after: "{found["pageInfo"]["endCursor"]}"'
    assert seen == expected
    back: list[dict[str, Any]] = []
    before = ""
    while True:
        data, _ = _answer(boards, f'{{ boardPinned(boardId: "b1", last: {size}{before}) {{ {page} }} }}')
        found = data["boardPinned"]
        back = [edge["node"] for edge in found["edges"]] + back
        if not found["pageInfo"]["hasPreviousPage"]:
            break
        before = f', before: "{found["pageInfo"]["startCursor"]}"'
    assert back == expected


def test_a_cursor_resumes_the_union_in_the_other_direction(boards: Gateway) -> None:
    expected = _reference(_items(), "b1")
    data, _ = _answer(boards, f'{{ boardPinned(boardId: "b1", first: 8) {{ edges {{ cursor node {{ {NODE} }} }} }} }}')
    eighth = data["boardPinned"]["edges"][7]["cursor"]
    before, _ = _answer(
        boards, f'{{ boardPinned(boardId: "b1", last: 3, before: "{eighth}") {{ nodes {{ {NODE} }} }} }}'
    )
    assert before["boardPinned"]["nodes"] == expected[4:7]


def test_a_cursor_of_another_board_or_field_is_refused(boards: Gateway) -> None:
    data, _ = _answer(boards, '{ boardPinned(boardId: "b1", first: 1) { pageInfo { endCursor } } }')
    cursor = data["boardPinned"]["pageInfo"]["endCursor"]
    for query in (
        f'{{ boardPinned(boardId: "b3", after: "{cursor}") {{ nodes {{ __typename }} }} }}',
        f'{{ board(boardId: "b1") {{ tags(after: "{cursor}") {{ nodes {{ tag }} }} }} }}',
    ):
        body = boards.query(query)
        assert [error["extensions"]["code"] for error in body["errors"]] == ["BAD_USER_INPUT"]


def test_nodes_have_global_ids_that_resolve_to_their_kind(boards: Gateway) -> None:
    data, _ = _answer(boards, '{ boardPinned(boardId: "b1", first: 50) { nodes { __typename ... on Node { id } } } }')
    nodes = data["boardPinned"]["nodes"]
    ids = [node["id"] for node in nodes]
    assert len(set(ids)) == len(ids) == 17
    found, cost = _answer(boards, f"{{ nodes(ids: {json.dumps(ids)}) {{ {NODE} }} }}")
    assert found["nodes"] == _reference(_items(), "b1")
    assert [node["__typename"] for node in found["nodes"]] == [node["__typename"] for node in nodes]
    assert cost[:2] == (1, 1)


def test_what_a_kind_selects_is_read_in_the_next_round_and_the_estimate_says_so(boards: Gateway) -> None:
    query = '{ boardPinned(boardId: "b1", first: 3) { nodes { __typename ... on Card { cardId board { title } } } } }'
    data, cost = _answer(boards, query)
    assert data["boardPinned"]["nodes"] == [
        {"__typename": "Card", "cardId": f"c{i}", "board": {"title": "Ideas"}} for i in range(3)
    ]
    assert cost == (2, 2, {"BatchGetItem": 1, "Query": 1})
    assert _explained(boards, query) == (2, 2)


def test_an_empty_partition_is_an_empty_page_in_one_query(boards: Gateway) -> None:
    data, cost = _answer(
        boards, '{ board(boardId: "b2") { pinned { nodes { __typename } pageInfo { hasNextPage } } } }'
    )
    assert data["board"]["pinned"] == {"nodes": [], "pageInfo": {"hasNextPage": False}}
    assert cost[:2] == (2, 1)


def test_the_schema_serves_a_union_and_its_connection(boards: Gateway) -> None:
    body = boards.query('{ __type(name: "BoardPinned") { kind possibleTypes { name } } }')
    union = body["data"]["__type"]
    assert union["kind"] == "UNION"
    assert sorted(one["name"] for one in union["possibleTypes"]) == ["Card", "Note", "Photo", "Sticker"]
    body = boards.query('{ __type(name: "BoardPinnedConnection") { fields { name } } }')
    assert [one["name"] for one in body["data"]["__type"]["fields"]] == ["edges", "nodes", "pageInfo"]


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


def test_another_tenants_union_is_forbidden_before_any_request(
    table: str, gateway_factory: Callable[..., Gateway], issuer: Issuer
) -> None:
    query = '{ boardPinned(boardId: "b1") { nodes { __typename } } }'
    with gateway_factory(table, declaration=BOARDS, **issuer.settings()) as guarded:
        for board, forbidden in (("b3", True), ("b1", False)):
            token = issuer.token("someone", {"boards": [board]})
            guarded.sent.clear()
            body = guarded.http.post(
                "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {token}"}
            ).json()
            codes = [error["extensions"]["code"] for error in body.get("errors", [])]
            if forbidden:
                assert (codes, sum(guarded.sent.values())) == (["FORBIDDEN"], 0)
            else:
                assert codes == [] and len(body["data"]["boardPinned"]["nodes"]) == 17
