"""Seed 003's business partners (schema.business:BUSINESS): each of the article's access patterns is one Query on
its index, served from the declaration on DynamoDB Local with the requests counted on the wire."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gateway.design.model import Entity, Index, KeyShape, Model
from schema.business import BUSINESS, CUSTOMERS, MANAGES, STORES, TAGS, orders
from tests.support.gateway import Gateway
from tests.support.mutations import mutate

ORDERS = list(orders())
NEWEST_FIRST = sorted(ORDERS, reverse=True)


@pytest.fixture(scope="module")
def business(served: Callable[..., Gateway]) -> Gateway:
    """The declaration's seed as `tablegraph seed` loads it, counters set."""
    return served(BUSINESS, seeded=True)


def _run(gateway: Gateway, query: str, variables: dict[str, Any] | None = None) -> tuple[Any, tuple[int, int], Any]:
    """The data, (calls, rounds), and the operations by name."""
    body = gateway.query(query, variables)
    assert "errors" not in body, body["errors"]
    accounted = body["extensions"]["dynamodb"]
    return body["data"], (accounted["calls"], accounted["rounds"]), accounted["operations"]


def test_a_business_its_customers_stores_and_orders_are_one_round(business: Gateway) -> None:
    """businessIdGsi: businessId = b AND begins_with(type, customer), the same for store and order#, beside the
    business."""
    data, cost, sent = _run(
        business,
        """{ business(businessId: "b-coffee") { businessName customers(first: 10) { totalCount nodes { customerId
        firstName } } stores(first: 10) { totalCount nodes { storeId storeName city } }
        orders(first: 3) { nodes { orderId } } } }""",
    )
    found = data["business"]
    assert found["businessName"] == "Bean There Coffee"
    assert sorted(n["customerId"] for n in found["customers"]["nodes"]) == ["c-ann", "c-ben"]
    assert found["customers"]["totalCount"] == 2
    assert {n["storeId"]: n["city"] for n in found["stores"]["nodes"]} == {"s-cbd": "Melbourne", "s-bondi": "Sydney"}
    assert [n["orderId"] for n in found["orders"]["nodes"]] == [o[0] for o in NEWEST_FIRST if o[1] == "b-coffee"][:3]
    assert cost == (4, 1) and sent == {"BatchGetItem": 1, "Query": 3}


@pytest.mark.parametrize(
    ("root", "collection", "wanted"),
    [
        ('business(businessId: "b-coffee")', "orders", lambda order: order[1] == "b-coffee"),
        ('customer(customerId: "c-ann")', "orders", lambda order: order[2] == "c-ann"),
    ],
)
def test_orders_of_a_business_or_a_customer_are_newest_first_from_their_index(
    business: Gateway, root: str, collection: str, wanted: Callable[[Any], bool]
) -> None:
    """businessIdGsi or customerIdGsi, begins_with(type, order#), descending: the minted ids sort by time."""
    expected = [order[0] for order in NEWEST_FIRST if wanted(order)]
    seen: list[str] = []
    after = None
    while True:
        data, cost, sent = _run(
            business,
            f"""query($after: String) {{ {root} {{ {collection}(first: 4, after: $after) {{ totalCount
            nodes {{ orderId }} pageInfo {{ hasNextPage endCursor }} }} }} }}""",
            {"after": after},
        )
        page = next(iter(data.values()))[collection]
        assert page["totalCount"] == len(expected)
        assert cost == (2, 1) and sent == {"BatchGetItem": 1, "Query": 1}
        seen += [n["orderId"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == expected


@pytest.mark.parametrize(
    ("where", "keep"),
    [
        ({"status": {"eq": "FINISHED"}}, lambda order: order[3] == "FINISHED"),
        ({"city": {"eq": "Melbourne"}}, lambda order: order[5] == "Melbourne"),
        ({"placed": {"between": ["2026-02-01", "2026-02-28"]}}, lambda order: order[4].startswith("2026-02")),
        (
            {"and": [{"status": {"in": ["PAID", "FINISHED"]}}, {"city": {"ne": "Sydney"}}]},
            lambda order: order[3] in ("PAID", "FINISHED") and order[5] != "Sydney",
        ),
    ],
)
def test_a_business_s_orders_filter_by_status_day_and_city_and_pages_fill(
    business: Gateway, where: dict[str, Any], keep: Callable[[Any], bool]
) -> None:
    expected = [order[0] for order in NEWEST_FIRST if order[1] == "b-coffee" and keep(order)]
    data, _, sent = _run(
        business,
        """query($where: BusinessOrdersFilter) { business(businessId: "b-coffee") { orders(first: 3, where: $where) {
        nodes { orderId status city placed } pageInfo { hasNextPage readLimitReached } } } }""",
        {"where": where},
    )
    page = data["business"]["orders"]
    assert [n["orderId"] for n in page["nodes"]] == expected[:3]
    assert page["pageInfo"]["hasNextPage"] == (len(expected) > 3)
    assert "Scan" not in sent and sent["BatchGetItem"] == 1


def test_a_customer_s_stores_come_with_the_store_data_and_no_read_of_the_stores(business: Gateway) -> None:
    """The relationship items hold a copy of the store: customer#c AND begins_with(type, store#), nothing more."""
    data, cost, sent = _run(
        business,
        '{ customer(customerId: "c-ann") { stores(first: 10) { totalCount nodes { storeId storeName city } } } }',
    )
    page = data["customer"]["stores"]
    expected = sorted(store for customer, store in MANAGES if customer == "c-ann")
    assert [n["storeId"] for n in page["nodes"]] == expected
    assert [n["storeName"] for n in page["nodes"]] == [STORES[one][1] for one in expected]
    assert page["totalCount"] == 2
    assert cost == (2, 1) and sent == {"BatchGetItem": 1, "Query": 1}


def test_a_store_s_customers_come_with_the_customer_data(business: Gateway) -> None:
    data, cost, _ = _run(
        business, '{ store(storeId: "s-bondi") { customers(first: 10) { nodes { customerId firstName lastName } } } }'
    )
    nodes = data["store"]["customers"]["nodes"]
    assert [(n["customerId"], n["firstName"]) for n in nodes] == [("c-ann", "Ann"), ("c-ben", "Ben")]
    assert cost == (2, 1)


def test_a_tag_s_orders_and_an_order_s_tags_are_one_query_each(business: Gateway) -> None:
    """tag#t AND begins_with(type, order#) on the table; typeGsi, the table inverted, for the other way."""
    data, cost, _ = _run(
        business, '{ tag(tagName: "music") { orders(first: 10) { totalCount nodes { orderId city } } } }'
    )
    music = sorted(ORDERS[n][0] for n in TAGS["music"])
    assert [n["orderId"] for n in data["tag"]["orders"]["nodes"]] == music
    assert data["tag"]["orders"]["totalCount"] == len(music)
    assert cost == (2, 1)
    both = ORDERS[4][0]  # tagged music and office
    data, cost, sent = _run(
        business,
        "query($id: ID!) { order(orderId: $id) { tags(first: 5) { totalCount nodes { tagName } } } }",
        {"id": both},
    )
    assert [n["tagName"] for n in data["order"]["tags"]["nodes"]] == ["music", "office"]
    assert data["order"]["tags"]["totalCount"] == 2
    assert cost == (2, 1) and sent == {"BatchGetItem": 1, "Query": 1}


def test_an_order_its_customer_and_its_business_are_two_rounds(business: Gateway) -> None:
    """The order's key has its id only: its customer and business ids come with the item, then one batch reads both."""
    order = ORDERS[0]
    data, cost, sent = _run(
        business,
        "query($id: ID!) { order(orderId: $id) { status customer { firstName } business { businessName } } }",
        {"id": order[0]},
    )
    assert data["order"]["customer"]["firstName"] == CUSTOMERS[order[2]][1]
    assert cost == (2, 2) and sent == {"BatchGetItem": 2}


def test_an_order_placed_is_counted_for_its_business_and_its_customer_in_one_transaction(business: Gateway) -> None:
    before, _, _ = _run(
        business, '{ business(businessId: "b-books") { orderCount } customer(customerId: "c-cat") { orderCount } }'
    )
    data = {"businessId": "b-books", "customerId": "c-cat", "status": "PLACED", "city": "Hobart"}
    result, sent = mutate(business, "createOrder", data, "... on Order { orderId placed }")
    assert result["__typename"] == "Order", result
    assert sent == {"TransactWriteItems": 1}
    after, _, _ = _run(
        business, '{ business(businessId: "b-books") { orderCount } customer(customerId: "c-cat") { orderCount } }'
    )
    assert after["business"]["orderCount"] == before["business"]["orderCount"] + 1
    assert after["customer"]["orderCount"] == before["customer"]["orderCount"] + 1
    newest, _, _ = _run(business, '{ customer(customerId: "c-cat") { orders(first: 1) { nodes { orderId city } } } }')
    assert newest["customer"]["orders"]["nodes"] == [{"orderId": result["orderId"], "city": "Hobart"}]


def test_a_store_renamed_rewrites_its_copies_found_through_the_inverted_index(business: Gateway) -> None:
    """UpdateItem, one typeGsi Query (type = store#s AND begins_with(id, customer#)), one transaction of the copies,
    and the mark cleared; then the customer's stores read the new name with no read of the store."""
    store = "s-rename"
    created, _ = mutate(
        business, "createStore", {"storeId": store, "businessId": "b-books", "storeName": "Old", "city": "Perth"}
    )
    assert created["__typename"] == "Store", created
    for customer in ("c-ann", "c-cat"):
        linked, sent = mutate(business, "createCustomerStore", {"customerId": customer, "storeId": store})
        assert linked["__typename"] == "CustomerStore", linked
        assert sent == {"GetItem": 1, "TransactWriteItems": 1}  # the store read for its copy, then the write
    renamed, sent = mutate(
        business,
        "updateStore",
        {"storeId": store, "expectedVersion": 1, "storeName": "New"},
        "... on Store { version }",
    )
    assert renamed["__typename"] == "Store", renamed
    # The update needs no read: the copies' parent is found from the item it returns.
    assert sent == {"UpdateItem": 2, "Query": 2, "TransactWriteItems": 1}
    data, cost, _ = _run(
        business, '{ customer(customerId: "c-cat") { stores(first: 10) { nodes { storeId storeName } } } }'
    )
    assert {"storeId": store, "storeName": "New"} in data["customer"]["stores"]["nodes"]
    assert cost == (2, 1)


def test_explain_names_the_index_of_each_access_pattern(business: Gateway) -> None:
    response = business.http.post(
        "/graphql",
        json={
            "query": """{ business(businessId: "b") { orders(first: 5) { nodes { orderId } } }
            customer(customerId: "c") { orders(first: 5) { nodes { orderId } } stores(first: 5) { nodes { storeId } } }
            order(orderId: "o") { tags(first: 5) { nodes { tagName } } } }"""
        },
        headers={"X-Tablegraph-Explain": "1"},
    )
    explained = response.json()["extensions"]["explain"]
    queries = sorted(one["keyCondition"] for one in explained["requests"] if one["operation"] == "Query")
    assert queries == [
        "businessId = {businessId} AND begins_with(type, order#)",
        "customerId = {customerId} AND begins_with(type, order#)",
        "id = customer#{customerId} AND begins_with(type, store#)",
        "type = order#{orderId} AND begins_with(id, tag#)",
    ]
    assert explained["rounds"] == 1


@pytest.mark.parametrize(
    ("a", "b", "told_apart"),
    [
        (("{orderId}", "order#{orderId}"), ("tag#{tagName}", "order#{orderId}"), True),
        (("{orderId}", "order#{orderId}"), ("{tagName}", "order#{orderId}"), False),
        (("x#{a}", "s"), ("x#{a}#{b}", "s"), True),
    ],
)
def test_key_shapes_with_different_numbers_of_separators_are_told_apart(
    a: tuple[str, str], b: tuple[str, str], told_apart: bool
) -> None:
    """Ids never hold the separator, so a key of one shape holds exactly as many as the shape's literal text."""
    one, other = Entity("One", {None: KeyShape.of(*a)}), Entity("Other", {None: KeyShape.of(*b)})
    if told_apart:
        model = Model("t", (Index(None, "id", "type"),), (one, other))
        item = model.item(other, {name: "v" for name in other.all_id_fields}, {})
        assert model.recognise(item) == (other, {name: "v" for name in other.all_id_fields})
    else:
        with pytest.raises(ValueError, match="mistaken for each other"):
            Model("t", (Index(None, "id", "type"),), (one, other))
