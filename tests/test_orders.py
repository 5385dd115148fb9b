"""A second single-table design, boto3-assist's orders on lowercase ``pk``/``sk``, served from its declaration alone.

The table is filled with plain boto3 and the article's literal key strings, as the tool that owns it would write it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import boto3
import pytest

from gateway.dynamo.store import table_definition
from gateway.server.auth import digest
from gateway.server.cli import main
from schema.orders import ORDERS
from tests.conftest import Gateway

# The article's three items as it stores them, plus the item_count a counting writer (or `tablegraph recount`) keeps.
ARTICLE: list[dict[str, Any]] = [
    {
        "pk": "order#xyz-789",
        "sk": "order#xyz-789",
        "id": "xyz-789",
        "user_id": "user-123",
        "total": Decimal("99.99"),
        "status": "pending",
        "item_count": 2,
    },
    {
        "pk": "order#xyz-789",
        "sk": "item#item-001",
        "id": "item-001",
        "order_id": "xyz-789",
        "product_id": "prod-456",
        "quantity": 2,
        "price": Decimal("29.99"),
    },
    {
        "pk": "order#xyz-789",
        "sk": "item#item-002",
        "id": "item-002",
        "order_id": "xyz-789",
        "product_id": "prod-789",
        "quantity": 1,
        "price": Decimal("39.99"),
    },
]
BIG = [f"item-{n:03d}" for n in range(1, 26)]
MORE: list[dict[str, Any]] = [
    {"pk": "order#big-1", "sk": "order#big-1", "user_id": "user-9", "total": 250, "status": "paid", "item_count": 25},
    *({"pk": "order#big-1", "sk": f"item#{i}", "product_id": "prod-1", "quantity": 1, "price": 10} for i in BIG),
    {"pk": "order#none-0", "sk": "order#none-0", "user_id": "user-9", "total": 0, "status": "pending", "item_count": 0},
]
READER_KEY, ADMIN_KEY = "tg_orders_reader_0123456789", "tg_orders_admin_0123456789"

ONE_ORDER = """query($orderId: ID!) { order(orderId: $orderId) { total status items(first: 5) {
  totalCount nodes { itemId productId quantity price } pageInfo { hasNextPage } } } }"""
ERRORS = "... on MutationError { message } ... on ConflictError { reason } ... on ValidationFailedError { field }"


def _resource(endpoint: str) -> Any:
    return boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )


@pytest.fixture(scope="module")
def orders_table(dynamodb: Any, endpoint: str) -> Iterator[str]:
    name = f"orders-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, **table_definition(ORDERS.model))
    with _resource(endpoint).Table(name).batch_writer() as batch:
        for item in [*ARTICLE, *MORE]:
            batch.put_item(Item=item)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def orders(gateway_factory: Callable[..., Gateway], orders_table: str) -> Iterator[Gateway]:
    with gateway_factory(orders_table, declaration=ORDERS) as running:
        yield running


def cost(body: dict[str, Any]) -> tuple[int, int]:
    accounted = body["extensions"]["dynamodb"]
    return accounted["calls"], accounted["rounds"]


def stored(dynamodb: Any, table: str, pk: str, sk: str) -> Any:
    """The item under these literal keys as DynamoDB holds it (None when there is none), read with plain boto3."""
    return dynamodb.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True).get("Item")


def mutate(gateway: Gateway, field: str, data: dict[str, Any], selection: str, **headers: str) -> Any:
    """Run one mutation with accounting on; its result and the DynamoDB operations it made."""
    body = gateway.query(
        f"mutation($input: {field[0].upper()}{field[1:]}Input!) "
        f"{{ {field}(input: $input) {{ __typename {selection} {ERRORS} }} }}",
        {"input": data},
        **headers,
    )
    assert "errors" not in body, body["errors"]
    return body["data"][field], body["extensions"]["dynamodb"]["operations"]


# --- reads ------------------------------------------------------------------------------------------------------


def test_an_order_and_its_first_items_are_one_query(orders: Gateway) -> None:
    body = orders.query(ONE_ORDER, {"orderId": "xyz-789"})
    assert body["data"]["order"] == {
        "total": 99.99,
        "status": "pending",
        "items": {
            "totalCount": 2,
            "nodes": [
                {"itemId": "item-002", "productId": "prod-789", "quantity": 1, "price": 39.99},
                {"itemId": "item-001", "productId": "prod-456", "quantity": 2, "price": 29.99},
            ],
            "pageInfo": {"hasNextPage": False},
        },
    }
    assert body["extensions"]["dynamodb"]["operations"] == {"Query": 1}
    assert cost(body) == (1, 1)


def test_an_order_with_more_items_than_asked_or_none_is_still_one_query(orders: Gateway) -> None:
    big = orders.query(ONE_ORDER, {"orderId": "big-1"})
    items = big["data"]["order"]["items"]
    assert [node["itemId"] for node in items["nodes"]] == BIG[::-1][:5]
    assert (items["totalCount"], items["pageInfo"]["hasNextPage"]) == (25, True)
    empty = orders.query(ONE_ORDER, {"orderId": "none-0"})
    assert empty["data"]["order"]["items"] == {"totalCount": 0, "nodes": [], "pageInfo": {"hasNextPage": False}}
    missing = orders.query(ONE_ORDER, {"orderId": "nope"})
    assert missing["data"] == {"order": None}
    for body in (big, empty, missing):
        assert body["extensions"]["dynamodb"]["operations"] == {"Query": 1}
        assert cost(body) == (1, 1)


def test_an_items_order_lists_every_item_of_the_order(orders: Gateway) -> None:
    body = orders.query(
        '{ orderItem(orderId: "xyz-789", itemId: "item-001") { orderId itemId productId'
        " order { orderId userId itemCount items { nodes { itemId orderId } } } } }"
    )
    assert body["data"]["orderItem"] == {
        "orderId": "xyz-789",
        "itemId": "item-001",
        "productId": "prod-456",
        "order": {
            "orderId": "xyz-789",
            "userId": "user-123",
            "itemCount": 2,
            "items": {
                "nodes": [{"itemId": "item-002", "orderId": "xyz-789"}, {"itemId": "item-001", "orderId": "xyz-789"}]
            },
        },
    }
    # Both keys are in the arguments: the item's point read and the order's partition are sent at once.
    assert cost(body) == (2, 1)
    alone = orders.query('{ orderItem(orderId: "big-1", itemId: "item-007") { quantity order { status } } }')
    assert alone["data"]["orderItem"] == {"quantity": 1, "order": {"status": "paid"}}
    assert alone["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}
    assert cost(alone) == (1, 1)


def test_orders_asked_together_are_one_round(orders: Gateway) -> None:
    body = orders.query(
        '{ orders(orderIds: ["big-1", "nope", "xyz-789"]) { orderId items(first: 1) { nodes { itemId } } } }'
    )
    assert body["data"]["orders"] == [
        {"orderId": "big-1", "items": {"nodes": [{"itemId": "item-025"}]}},
        None,
        {"orderId": "xyz-789", "items": {"nodes": [{"itemId": "item-002"}]}},
    ]
    assert body["extensions"]["dynamodb"]["operations"] == {"Query": 3}
    assert cost(body) == (3, 1)
    totals = orders.query('{ orders(orderIds: ["big-1", "nope", "xyz-789", "big-1"]) { total } }')
    assert totals["data"]["orders"] == [{"total": 250}, None, {"total": 99.99}, {"total": 250}]
    assert totals["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}


def test_paging_through_an_order_returns_every_item_once(orders: Gateway) -> None:
    page = """query($after: String) { order(orderId: "big-1") {
      items(first: 7, after: $after) { nodes { itemId } pageInfo { hasNextPage endCursor } } } }"""
    seen: list[str] = []
    after = None
    for _ in range(len(BIG)):
        body = orders.query(page, {"after": after})
        items = body["data"]["order"]["items"]
        seen += [node["itemId"] for node in items["nodes"]]
        # The first page comes with the order; a later one starts mid-partition, so the order is read beside it.
        assert cost(body) == ((1, 1) if after is None else (2, 1))
        if not items["pageInfo"]["hasNextPage"]:
            break
        after = items["pageInfo"]["endCursor"]
    assert seen == BIG[::-1]


def test_global_ids_resolve_orders_and_their_items(orders: Gateway) -> None:
    ids = orders.query('{ order(orderId: "xyz-789") { id } orderItem(orderId: "xyz-789", itemId: "item-002") { id } }')
    order_id, item_id = ids["data"]["order"]["id"], ids["data"]["orderItem"]["id"]
    assert order_id != item_id
    body = orders.query(
        "query($id: ID!, $ids: [ID!]!) { node(id: $id) { __typename id ... on Order { orderId total } }"
        " nodes(ids: $ids) { __typename ... on OrderItem { orderId itemId } ... on Order { orderId } } }",
        {"id": order_id, "ids": [item_id, order_id]},
    )
    assert body["data"] == {
        "node": {"__typename": "Order", "id": order_id, "orderId": "xyz-789", "total": 99.99},
        "nodes": [
            {"__typename": "OrderItem", "orderId": "xyz-789", "itemId": "item-002"},
            {"__typename": "Order", "orderId": "xyz-789"},
        ],
    }
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}
    assert cost(body) == (1, 1)


# --- writes -----------------------------------------------------------------------------------------------------


def test_writes_keep_the_item_count_exact_on_the_lowercase_keys(
    orders: Gateway, dynamodb: Any, orders_table: str
) -> None:
    order_id = f"o-{uuid.uuid4().hex[:8]}"
    order = f"order#{order_id}"

    def item_count() -> Any:
        return stored(dynamodb, orders_table, order, order)["item_count"]

    created, operations = mutate(
        orders,
        "createOrder",
        {"orderId": order_id, "userId": "user-7", "total": 12.5},
        "... on Order { orderId status total itemCount version }",
    )
    assert created == {
        "__typename": "Order",
        "orderId": order_id,
        "status": "pending",
        "total": 12.5,
        "itemCount": 0,
        "version": 1,
    }
    assert operations == {"PutItem": 1}
    for n in (1, 2, 3):
        line = {"orderId": order_id, "itemId": f"item-{n:03d}", "productId": f"prod-{n}", "quantity": n, "price": 2.5}
        result, operations = mutate(orders, "createOrderItem", line, "")
        assert (result["__typename"], operations) == ("OrderItem", {"TransactWriteItems": 1})
    assert item_count() == {"N": "3"}
    line = stored(dynamodb, orders_table, order, "item#item-002")
    assert (line["product_id"], line["quantity"], line["price"]) == ({"S": "prod-2"}, {"N": "2"}, {"N": "2.5"})

    again = {"orderId": order_id, "itemId": "item-001", "productId": "prod-1"}
    assert mutate(orders, "createOrderItem", again, "")[0]["reason"] == "ALREADY_EXISTS"
    too_many = {"orderId": order_id, "itemId": "item-009", "productId": "prod-9", "quantity": 10_001}
    refused, operations = mutate(orders, "createOrderItem", too_many, "")
    assert (refused["__typename"], refused["field"], operations) == ("ValidationFailedError", "quantity", {})
    orphan = {"orderId": f"{order_id}-gone", "itemId": "item-001", "productId": "prod-1"}
    assert mutate(orders, "createOrderItem", orphan, "")[0]["__typename"] == "NotFoundError"
    changed, operations = mutate(
        orders,
        "updateOrderItem",
        {"orderId": order_id, "itemId": "item-002", "expectedVersion": 1, "quantity": 5},
        "... on OrderItem { quantity version order { itemCount } }",
    )
    assert changed == {"__typename": "OrderItem", "quantity": 5, "version": 2, "order": {"itemCount": 3}}
    assert stored(dynamodb, orders_table, order, "item#item-002")["quantity"] == {"N": "5"}
    assert item_count() == {"N": "3"}

    gone, operations = mutate(orders, "deleteOrderItem", {"orderId": order_id, "itemId": "item-003"}, "")
    assert (gone["__typename"], operations) == ("Deleted", {"TransactWriteItems": 1})
    assert item_count() == {"N": "2"}
    assert mutate(orders, "deleteOrder", {"orderId": order_id}, "")[0]["reason"] == "HAS_CHILDREN"
    assert item_count() == {"N": "2"}
    deleted, operations = mutate(
        orders, "deleteOrder", {"orderId": order_id, "cascade": True}, "... on Deleted { items { type count } }"
    )
    assert sorted(deleted["items"], key=lambda kind: kind["type"]) == [
        {"type": "Order", "count": 1},
        {"type": "OrderItem", "count": 2},
    ]
    assert operations == {"DeleteItem": 2, "Query": 1, "TransactWriteItems": 1}
    left = dynamodb.query(
        TableName=orders_table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": order}},
        ConsistentRead=True,
    )
    assert left["Items"] == []


def test_everyone_reads_orders_and_only_an_admin_writes_them(
    gateway_factory: Callable[..., Gateway], orders_table: str, dynamodb: Any
) -> None:
    keys = json.dumps({digest(READER_KEY): {"sub": "reader"}, digest(ADMIN_KEY): {"sub": "ops", "roles": ["admin"]}})
    order_id = f"o-{uuid.uuid4().hex[:8]}"
    create = {"orderId": order_id, "userId": "user-7"}
    with gateway_factory(orders_table, declaration=ORDERS, auth_open=False, api_keys=keys) as guarded:
        read = guarded.query(ONE_ORDER, {"orderId": "xyz-789"}, **{"X-Api-Key": READER_KEY})
        assert read["data"]["order"]["items"]["totalCount"] == 2
        refused = guarded.query(
            "mutation($input: CreateOrderInput!) { createOrder(input: $input) { __typename } }",
            {"input": create},
            **{"X-Api-Key": READER_KEY},
        )
        assert refused["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        assert stored(dynamodb, orders_table, f"order#{order_id}", f"order#{order_id}") is None
        result, _ = mutate(guarded, "createOrder", create, "", **{"X-Api-Key": ADMIN_KEY})
        assert result["__typename"] == "Order"
    assert stored(dynamodb, orders_table, f"order#{order_id}", f"order#{order_id}") is not None


# --- the command line -------------------------------------------------------------------------------------------


def test_the_command_line_creates_seeds_and_describes_the_orders_table(
    endpoint: str,
    dynamodb: Any,
    gateway_factory: Callable[..., Gateway],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("TABLEGRAPH_TABLE", "TABLEGRAPH_DEMO"):
        monkeypatch.delenv(name, raising=False)
    table = f"orders-cli-{uuid.uuid4().hex[:6]}"
    where = ["--model", "schema.orders:ORDERS", "--endpoint-url", endpoint, "--table", table]
    assert main(["create-table", *where]) == 0
    try:
        keys = dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]
        assert keys == [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
        assert main(["seed", *where]) == 0
        assert stored(dynamodb, table, "order#xyz-789", "item#item-002") is not None
        with gateway_factory(table, declaration=ORDERS) as seeded:
            body = seeded.query(ONE_ORDER, {"orderId": "xyz-789"})
        assert body["data"]["order"]["items"]["totalCount"] == 2
        assert [node["itemId"] for node in body["data"]["order"]["items"]["nodes"]] == ["item-002", "item-001"]
    finally:
        dynamodb.delete_table(TableName=table)
    capsys.readouterr()
    assert main(["export-schema", "--model", "schema.orders:ORDERS"]) == 0
    sdl = capsys.readouterr().out
    assert "type Order implements Node" in sdl
    assert "type OrderItem implements Node" in sdl
    assert "type Workspace" not in sdl
