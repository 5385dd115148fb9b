"""AWS's Online Shop (schema.online_shop:SHOP) served on its own table, filled with plain boto3 as the public model
spells the items: each access pattern the declaration serves is answered as the reference (tests/support/online_shop)
answers it, in the requests counted on the wire."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from schema.online_shop import SHOP
from tests.support.gateway import Gateway
from tests.support.online_shop import Item, Shop, create_table, facts, items, load


@pytest.fixture(scope="module")
def online_shop(dynamodb: Any, gateway_factory: Callable[..., Gateway]) -> Iterator[Gateway]:
    name = f"shop-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    load(dynamodb, name, items())
    with gateway_factory(name, declaration=SHOP) as running:
        yield running
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def reference() -> Shop:
    return Shop(items())


def _run(gateway: Gateway, query: str) -> tuple[Any, tuple[int, int], dict[str, int]]:
    body = gateway.query(query)
    assert "errors" not in body, body["errors"]
    accounted = body["extensions"]["dynamodb"]
    return body["data"], (accounted["calls"], accounted["rounds"]), accounted["operations"]


def _number(text: str) -> float:
    return float(text)


def _ids(item: Item, *names: str) -> dict[str, Any]:
    found = facts(item)
    return {name: found[name] for name in names}


# --- patterns 1 to 3: one entity by its key -------------------------------------------------------------------------


@pytest.mark.parametrize("customer_id", ["10001", "10004", "19999"])
def test_01_a_customer_by_its_id_is_one_read(online_shop: Gateway, reference: Shop, customer_id: str) -> None:
    data, cost, _ = _run(online_shop, f'{{ customer(customerId: "{customer_id}") {{ customerId email name }} }}')
    expected: list[dict[str, Any] | None] = [
        {**_ids(item, "customerId"), "email": item["Email"], "name": item["Name"]}
        for item in reference.customer(customer_id).answer
    ]
    assert [data["customer"]] == (expected or [None])
    assert cost == (1, 1)


@pytest.mark.parametrize("product_id", ["20002", "20006", "29999"])
def test_02_a_product_by_its_id_serves_its_price_kept_as_text_and_its_detail_map(
    online_shop: Gateway, reference: Shop, product_id: str
) -> None:
    data, cost, _ = _run(
        online_shop, f'{{ product(productId: "{product_id}") {{ productId price detail {{ name description }} }} }}'
    )
    expected: list[dict[str, Any] | None] = [
        {
            **_ids(item, "productId"),
            "price": _number(item["Price"]),
            "detail": {"name": item["Detail"]["Name"], "description": item["Detail"]["Description"]},
        }
        for item in reference.product(product_id).answer
    ]
    assert [data["product"]] == (expected or [None])
    assert cost == (1, 1)


@pytest.mark.parametrize("warehouse_id", ["30001", "30003", "39999"])
def test_03_a_warehouse_by_its_id_serves_its_address_map(
    online_shop: Gateway, reference: Shop, warehouse_id: str
) -> None:
    data, cost, _ = _run(
        online_shop, f'{{ warehouse(warehouseId: "{warehouse_id}") {{ warehouseId address {{ city zipCode }} }} }}'
    )
    expected: list[dict[str, Any] | None] = [
        {
            **_ids(item, "warehouseId"),
            "address": {"city": item["Address"]["City"], "zipCode": item["Address"]["ZipCode"]},
        }
        for item in reference.warehouse(warehouse_id).answer
    ]
    assert [data["warehouse"]] == (expected or [None])
    assert cost == (1, 1)


# --- patterns 4, 13, 14: a connection of one partition --------------------------------------------------------------


@pytest.mark.parametrize(
    ("product_id", "order"), [("20001", "ASCENDING"), ("20004", "DESCENDING"), ("20005", "ASCENDING")]
)
def test_04_a_products_inventory_is_one_query(
    online_shop: Gateway, reference: Shop, product_id: str, order: str
) -> None:
    data, cost, sent = _run(
        online_shop,
        f'{{ product(productId: "{product_id}") {{ productId inventory(first: 50, order: {order}) {{'
        " nodes { productId warehouseId quantity } } } }",
    )
    expected: list[dict[str, Any] | None] = [
        {**_ids(item, "productId", "warehouseId"), "quantity": _number(item["Quantity"])}
        for item in reference.product_inventory(product_id, descending=order == "DESCENDING").answer
    ]
    assert data["product"]["inventory"]["nodes"] == expected
    if order == "ASCENDING":  # the product's own item sorts first: one Query reads it and then its stock
        assert (cost, sent) == ((1, 1), {"Query": 1})
    else:  # it would sort last, past the page: a point read beside the Query
        assert (cost, sent) == ((2, 1), {"BatchGetItem": 1, "Query": 1})


@pytest.mark.parametrize(
    ("warehouse_id", "order"), [("30002", "ASCENDING"), ("30001", "DESCENDING"), ("30003", "ASCENDING")]
)
def test_13_14_a_warehouses_shipments_and_inventory_are_one_query_each_on_gsi2(
    online_shop: Gateway, reference: Shop, warehouse_id: str, order: str
) -> None:
    """The warehouse has no GSI2 keys, so its own item (the root's answer, null when absent) is a point read beside
    the Queries: one round."""
    data, cost, sent = _run(
        online_shop,
        f'{{ warehouse(warehouseId: "{warehouse_id}") {{'
        f" shipments(first: 50, order: {order}) {{ nodes {{ orderId shipmentId warehouseId type }} }}"
        f" inventory(first: 50, order: {order}) {{ nodes {{ productId warehouseId quantity }} }} }} }}",
    )
    descending = order == "DESCENDING"
    shipments = [
        {**_ids(item, "orderId", "shipmentId", "warehouseId"), "type": item["Type"]}
        for item in reference.warehouse_shipments(warehouse_id, descending=descending).answer
    ]
    inventory = [
        {**_ids(item, "productId", "warehouseId"), "quantity": _number(item["Quantity"])}
        for item in reference.warehouse_inventory(warehouse_id, descending=descending).answer
    ]
    assert data["warehouse"]["shipments"]["nodes"] == shipments
    assert data["warehouse"]["inventory"]["nodes"] == inventory
    assert (cost, sent) == ((3, 1), {"BatchGetItem": 1, "Query": 2})


# --- patterns 9, 15, 16: a range of a sort key that carries a date --------------------------------------------------


@pytest.fixture(scope="module")
def wire(online_shop: Gateway) -> list[dict[str, Any]]:
    """The Queries the gateway sends, as their bodies go on the wire: a listener on the real store."""
    sent: list[dict[str, Any]] = []

    def record(operation: str, headers: Mapping[str, str], body: bytes) -> None:
        if operation == "Query":
            sent.append(json.loads(body))

    online_shop.app.state.store.on_send(record)
    return sent


def _ranged_query(wire: list[dict[str, Any]], index: str) -> dict[str, Any]:
    (query,) = [one for one in wire if one.get("IndexName") == index]
    return query


RANGES = [  # (root, connection, range field, reference, id, low, high, descending)
    ("product", "orders", "orderedAt", "product_orders", "20001", "2020-06-21T00:00:00", "2020-06-21T23:59:00", False),
    ("product", "orders", "orderedAt", "product_orders", "20001", "2020-06-01", "2020-06-15", False),
    ("product", "orders", "orderedAt", "product_orders", "20002", "2020-06", "2020-08", True),
    ("product", "orders", "orderedAt", "product_orders", "20006", "2020", "2021", False),
    ("customer", "invoices", "invoicedAt", "customer_invoices", "10001", "2020-06-01", "2020-06-15", False),
    ("customer", "invoices", "invoicedAt", "customer_invoices", "10001", "2020-06-01", "2020-06-30T23:59:59", True),
    ("customer", "invoices", "invoicedAt", "customer_invoices", "10004", "2020", "2021", False),
    (
        "customer",
        "orderedProducts",
        "orderedAt",
        "customer_products",
        "10001",
        "2020-06-30T23:59:59",
        "2020-07-01",
        False,
    ),
    ("customer", "orderedProducts", "orderedAt", "customer_products", "10001", "2020-06-15", "2020-07-02", False),
    (
        "customer",
        "orderedProducts",
        "orderedAt",
        "customer_products",
        "10002",
        "2020-06-21T19:18:00",
        "2020-06-21T23:59:00",
        True,
    ),
]
_SELECTED = {
    "orders": ("orderId", "productId", "orderedAt"),
    "orderedProducts": ("orderId", "productId", "orderedAt"),
    "invoices": ("orderId", "invoiceId", "invoicedAt"),
}


@pytest.mark.parametrize("case", RANGES, ids=lambda case: "-".join(map(str, case[1:8:2])) + f"-{case[5]}-{case[6]}")
def test_09_15_16_a_range_of_dates_is_the_querys_key_condition(
    online_shop: Gateway, reference: Shop, wire: list[dict[str, Any]], case: tuple[Any, ...]
) -> None:
    root, connection, field, pattern, parent_id, low, high, descending = case
    order = "DESCENDING" if descending else "ASCENDING"
    selected = " ".join(_SELECTED[connection])
    wire.clear()
    data, cost, sent = _run(
        online_shop,
        f'{{ {root}({root}Id: "{parent_id}") {{ {connection}(first: 50, order: {order},'
        f' {field}: {{ between: ["{low}", "{high}"] }}) {{ nodes {{ {selected} }} pageInfo {{ hasNextPage }} }} }} }}',
    )
    expected = [
        _ids(item, *_SELECTED[connection])
        for item in getattr(reference, pattern)(parent_id, low, high, descending).answer
    ]
    found = data[root]
    assert found[connection]["nodes"] == expected
    assert found[connection]["pageInfo"]["hasNextPage"] is False
    # The root's own item is a point read beside the Query: the parent has no keys in that index.
    assert (cost, sent) == ((2, 1), {"BatchGetItem": 1, "Query": 1})
    query = _ranged_query(wire, "GSI1" if root == "product" else "GSI2")
    head = {"orders": "", "invoices": "i#", "orderedProducts": "p#"}[connection]
    assert query["KeyConditionExpression"] == "#pk = :pk AND #sk BETWEEN :sk AND :sk_end"
    assert (query["ExpressionAttributeValues"][":sk"], query["ExpressionAttributeValues"][":sk_end"]) == (
        {"S": head + low},
        {"S": head + high},
    )
    assert query["ScanIndexForward"] is not descending and "FilterExpression" not in query


def test_a_range_pages_both_ways_within_itself(online_shop: Gateway, reference: Shop) -> None:
    """first/after and last/before page through the range only; a cursor from outside it is refused."""
    low, high = "2020-06-01", "2020-07-01T23"
    expected = [_ids(item, "orderedAt")["orderedAt"] for item in reference.customer_products("10001", low, high).answer]
    assert len(expected) == 7
    ranged = f'orderedAt: {{ between: ["{low}", "{high}"] }}'
    seen: list[str] = []
    after = ""
    while True:
        data, cost, _ = _run(
            online_shop,
            f'{{ customer(customerId: "10001") {{ orderedProducts(first: 3, {ranged}{after}) {{'
            " nodes { orderedAt } pageInfo { hasNextPage endCursor } } } }",
        )
        page = data["customer"]["orderedProducts"]
        seen += [node["orderedAt"] for node in page["nodes"]]
        assert cost == (2, 1)
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = f', after: "{page["pageInfo"]["endCursor"]}"'
    assert seen == expected
    data, _, _ = _run(
        online_shop,
        f'{{ customer(customerId: "10001") {{ orderedProducts(last: 2, {ranged}) {{'
        " nodes { orderedAt } pageInfo { hasPreviousPage startCursor } } } }",
    )
    page = data["customer"]["orderedProducts"]
    assert [node["orderedAt"] for node in page["nodes"]] == expected[-2:]
    assert page["pageInfo"]["hasPreviousPage"] is True
    data, _, _ = _run(
        online_shop,
        f'{{ customer(customerId: "10001") {{ orderedProducts(last: 5, before: "{page["pageInfo"]["startCursor"]}",'
        f" {ranged}) {{ nodes {{ orderedAt }} }} }} }}",
    )
    assert [node["orderedAt"] for node in data["customer"]["orderedProducts"]["nodes"]] == expected[:5]
    # A cursor of the whole collection, at a position the range leaves out.
    data, _, _ = _run(
        online_shop, '{ customer(customerId: "10001") { orderedProducts(first: 6) { pageInfo { endCursor } } } }'
    )
    outside = data["customer"]["orderedProducts"]["pageInfo"]["endCursor"]
    body = online_shop.query(
        f'{{ customer(customerId: "10001") {{ orderedProducts(first: 2, after: "{outside}",'
        ' orderedAt: { between: ["2020-06-01", "2020-06-02"] }) { nodes { orderedAt } } } }'
    )
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "outside the range" in body["errors"][0]["message"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ('{ gte: "2020-07" }', ["2020-07-02T08:30:00", "2020-07-15T12:00:00", "2020-07-15T12:02:00"]),
        ('{ lte: "2020-06-15T10:00:00" }', ["2020-06-01T00:00:00", "2020-06-15T10:00:00"]),
        ('{ beginsWith: "2020-06-2" }', ["2020-06-21T19:18:00"]),
    ],
)
def test_open_bounds_and_a_prefix_are_key_conditions_too(
    online_shop: Gateway, wire: list[dict[str, Any]], given: str, expected: list[str]
) -> None:
    """Within the index's partition of a product, every item is an order line: bare stamps as the sort key."""
    wire.clear()
    data, cost, _ = _run(
        online_shop,
        '{ a: product(productId: "20001") { orders(orderedAt: ' + given + ") { nodes { orderedAt } } } }",
    )
    nodes = [node["orderedAt"] for node in data["a"]["orders"]["nodes"]]
    everything = [
        "2020-06-01T00:00:00",
        "2020-06-15T10:00:00",
        "2020-06-21T19:18:00",
        "2020-07-02T08:30:00",
    ]
    assert nodes == [one for one in everything if one in expected]
    assert cost == (2, 1)
    assert "FilterExpression" not in _ranged_query(wire, "GSI1")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("{ }", "takes one of between, gte, lte, beginsWith"),
        ('{ gte: "a", lte: "b" }', "takes one of"),
        ('{ between: ["a"] }', "takes two values"),
        ('{ between: ["2021", "2020"] }', "low bound first"),
        ('{ gte: "p#2020" }', "may not contain"),
    ],
)
def test_a_bad_range_is_refused_before_any_query(online_shop: Gateway, given: str, message: str) -> None:
    body = online_shop.query(
        f'{{ product(productId: "20001") {{ orders(orderedAt: {given}) {{ nodes {{ orderId }} }} }} }}'
    )
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT" and message in error["message"]
    assert body["extensions"]["dynamodb"]["operations"].get("Query") is None


# --- patterns 9, 13 to 16 from the root: the list alone, without its parent's item ---------------------------------

ROOT_CONNECTIONS = [  # (root field, parent root, nested field, parent id, connection arguments, selected)
    ("warehouseShipments", "warehouse", "shipments", "30002", "first: 50", "orderId shipmentId warehouseId type"),
    ("warehouseShipments", "warehouse", "shipments", "30001", "first: 2, order: DESCENDING", "shipmentId"),
    ("warehouseInventory", "warehouse", "inventory", "30002", "first: 50", "productId warehouseId quantity"),
    ("productOrders", "product", "orders", "20001", 'orderedAt: {between: ["2020-06", "2020-08"]}', "orderId"),
    ("customerInvoices", "customer", "invoices", "10001", 'invoicedAt: {gte: "2020-06-01"}', "invoiceId invoicedAt"),
    ("customerOrderedProducts", "customer", "orderedProducts", "10001", "last: 3", "productId orderedAt"),
]


@pytest.mark.parametrize("case", ROOT_CONNECTIONS, ids=lambda case: f"{case[0]}-{case[3]}")
def test_09_13_to_16_a_root_connection_answers_as_the_nested_field_in_one_query(
    online_shop: Gateway, case: tuple[str, ...]
) -> None:
    """The parent's item is never read: the members' Query alone, in the estimate and on the wire."""
    field, parent, nested, parent_id, arguments, selected = case
    argument = f'{parent}Id: "{parent_id}"'
    page = f"{{ nodes {{ {selected} }} pageInfo {{ hasNextPage hasPreviousPage endCursor }} }}"
    query = f"{{ {field}({argument}, {arguments}) {page} }}"
    data, cost, sent = _run(online_shop, query)
    through, _, _ = _run(online_shop, f"{{ {parent}({argument}) {{ {nested}({arguments}) {page} }} }}")
    assert data[field] == through[parent][nested]
    assert data[field]["nodes"]
    assert (cost, sent) == ((1, 1), {"Query": 1})
    explained = online_shop.query(query, **{"X-Tablegraph-Explain": "1"})["extensions"]["explain"]
    assert (explained["calls"], explained["rounds"]) == (1, 1)


def test_a_root_connection_takes_the_nested_fields_cursor(online_shop: Gateway) -> None:
    """One connection type, one cursor: a page of the nested field resumes from the root, and the other way."""
    nested, _, _ = _run(
        online_shop, '{ warehouse(warehouseId: "30002") { shipments(first: 1) { pageInfo { endCursor } } } }'
    )
    cursor = nested["warehouse"]["shipments"]["pageInfo"]["endCursor"]
    data, cost, _ = _run(
        online_shop,
        f'{{ warehouseShipments(warehouseId: "30002", first: 50, after: "{cursor}") {{ nodes {{ shipmentId }} }} }}',
    )
    whole, _, _ = _run(online_shop, '{ warehouseShipments(warehouseId: "30002", first: 50) { nodes { shipmentId } } }')
    assert data["warehouseShipments"]["nodes"] == whole["warehouseShipments"]["nodes"][1:]
    assert cost == (1, 1)


def test_a_root_connection_of_a_parent_that_does_not_exist_is_empty(online_shop: Gateway) -> None:
    """Not null, as warehouse(...) would be: telling a missing parent apart would cost the read this field saves."""
    data, cost, _ = _run(
        online_shop,
        '{ warehouseShipments(warehouseId: "39999") { nodes { shipmentId } pageInfo { hasNextPage } } }',
    )
    assert data["warehouseShipments"] == {"nodes": [], "pageInfo": {"hasNextPage": False}}
    assert cost == (1, 1)


@pytest.mark.parametrize(
    "query",
    [
        '{ warehouseShipments(warehouseId: "a#b") { nodes { shipmentId } } }',
        '{ customerInvoices(customerId: "") { nodes { invoiceId } } }',
        '{ productOrders(productId: "20001", orderedAt: {gte: "2020", lte: "2021"}) { nodes { orderId } } }',
    ],
)
def test_a_root_connection_refuses_bad_arguments_before_any_request(online_shop: Gateway, query: str) -> None:
    body = online_shop.query(query)
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["extensions"]["dynamodb"]["calls"] == 0


# --- patterns 10 to 12: an entity by an id of its index key alone ---------------------------------------------------


@pytest.mark.parametrize("invoice_id", ["50003", "50006", "59999"])
def test_10_11_an_invoice_by_its_id_alone_is_one_query_on_gsi1_with_its_payments_map(
    online_shop: Gateway, reference: Shop, wire: list[dict[str, Any]], invoice_id: str
) -> None:
    wire.clear()
    data, cost, sent = _run(
        online_shop,
        f'{{ invoiceById(invoiceId: "{invoice_id}") {{ orderId invoiceId customerId invoicedAt amount'
        " detail { payments { type amount data } } } }",
    )
    expected: list[dict[str, Any] | None] = [
        {**_ids(item, "orderId", "invoiceId", "customerId", "invoicedAt"), "amount": _number(item["Amount"])}
        for item in reference.invoice(invoice_id).answer
    ]
    payments = [
        {"type": one["Type"], "amount": float(one["Amount"]), "data": one["Data"]}
        for one in reference.invoice_payments(invoice_id).answer
    ]
    found = data["invoiceById"]
    assert [found and {k: v for k, v in found.items() if k != "detail"}] == (expected or [None])
    assert (found["detail"]["payments"] if found else []) == payments
    assert (cost, sent) == ((1, 1), {"Query": 1})
    (query,) = wire
    assert query["IndexName"] == "GSI1" and query["KeyConditionExpression"] == "#pk = :pk AND #sk = :sk"
    assert query["ExpressionAttributeValues"] == {":pk": {"S": f"i#{invoice_id}"}, ":sk": {"S": f"i#{invoice_id}"}}


def test_11_an_invoices_payment_items_come_in_the_same_query_as_the_invoice(
    online_shop: Gateway, reference: Shop
) -> None:
    """The facets' spelling of pattern 11: the payments as items of the invoice's GSI1 partition, after it."""
    data, cost, _ = _run(
        online_shop, '{ invoiceById(invoiceId: "50001") { invoiceId payments { nodes { paymentId type amount } } } }'
    )
    expected = [(one["Type"], float(one["Amount"])) for one in reference.invoice_payments("50001").answer]
    assert [(node["type"], node["amount"]) for node in data["invoiceById"]["payments"]["nodes"]] == expected
    assert cost == (1, 1)


@pytest.mark.parametrize("shipment_id", ["70001", "70006", "79999"])
def test_12_a_shipment_by_its_id_comes_with_its_items_from_one_gsi1_query(
    online_shop: Gateway, reference: Shop, shipment_id: str
) -> None:
    data, cost, sent = _run(
        online_shop,
        f'{{ shipmentById(shipmentId: "{shipment_id}") {{ orderId shipmentId warehouseId type'
        " items { nodes { orderId shipmentItemId shipmentId productId quantity } pageInfo { hasNextPage } } } }",
    )
    answer = reference.shipment(shipment_id, descending=True).answer  # the shipment, then its items
    if not answer:
        assert data["shipmentById"] is None
    else:
        shipment, *lines = answer
        found = data["shipmentById"]
        assert {k: v for k, v in found.items() if k != "items"} == {
            **_ids(shipment, "orderId", "shipmentId", "warehouseId"),
            "type": shipment["Type"],
        }
        assert found["items"]["nodes"] == [
            {
                **_ids(line, "orderId", "shipmentItemId", "shipmentId", "productId"),
                "quantity": _number(line["Quantity"]),
            }
            for line in lines
        ]
        assert found["items"]["pageInfo"]["hasNextPage"] is False
    assert (cost, sent) == ((1, 1), {"Query": 1})


def test_a_lookup_then_reads_what_its_ids_start_in_the_next_round(online_shop: Gateway) -> None:
    data, cost, sent = _run(
        online_shop,
        '{ shipmentById(shipmentId: "70002") { warehouse { warehouseId } items(first: 1) { nodes { productId'
        " product { price } } } } }",
    )
    found = data["shipmentById"]
    assert found == {
        "warehouse": {"warehouseId": "30001"},
        "items": {"nodes": [{"productId": "20001", "product": {"price": 100.0}}]},
    }
    assert (cost, sent) == ((2, 2), {"Query": 1, "BatchGetItem": 1})


LOOKUPS = [
    '{ invoiceById(invoiceId: "50001") { invoiceId amount } }',
    '{ invoiceById(invoiceId: "50001") { invoiceId payments { nodes { paymentId type amount } } } }',
    '{ shipmentById(shipmentId: "70002") { shipmentId items(first: 5) { nodes { productId quantity } } } }',
    '{ shipmentById(shipmentId: "70002") { warehouse { warehouseId } items(first: 1) { nodes { productId'
    " product { price } } } } }",
    '{ a: shipmentById(shipmentId: "70002") { warehouse { warehouseId } } b: invoiceById(invoiceId: "50001") {'
    ' invoiceId } customer(customerId: "10001") { email } }',
]


@pytest.mark.parametrize("query", LOOKUPS)
def test_the_estimate_of_a_lookup_is_what_it_sends(online_shop: Gateway, query: str) -> None:
    """A lookup is a Query like any other: the estimate the cost limits judge counts it, and what the entity it
    finds starts, in the rounds execution takes."""
    explained = online_shop.query(query, **{"X-Tablegraph-Explain": "1"})["extensions"]["explain"]
    _, cost, _ = _run(online_shop, query)
    assert (explained["calls"], explained["rounds"]) == cost
    lookups = [one for one in explained["requests"] if one["operation"] == "Query" and one["round"] == 1]
    assert lookups and all(one["index"] == "GSI1" for one in lookups)


def test_a_lookup_past_the_call_budget_is_refused_before_any_request(
    dynamodb: Any, gateway_factory: Callable[..., Gateway]
) -> None:
    name = f"shop-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    try:
        with gateway_factory(name, declaration=SHOP, max_calls=1) as gateway:
            body = gateway.query(LOOKUPS[3])
            assert body["errors"][0]["extensions"]["code"] == "COST_LIMIT"
            assert body["extensions"]["dynamodb"]["calls"] == 0
            assert "errors" not in gateway.query(LOOKUPS[0])  # one Query: within the budget
    finally:
        dynamodb.delete_table(TableName=name)


@pytest.mark.parametrize(
    "query", ['{ invoiceById(invoiceId: "a#b") { orderId } }', '{ shipmentById(shipmentId: "") { orderId } }']
)
def test_a_lookup_refuses_an_id_no_key_can_hold_before_any_request(online_shop: Gateway, query: str) -> None:
    body = online_shop.query(query)
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["extensions"]["dynamodb"]["calls"] == 0


# --- patterns 6 to 8: the collections of an order, which has no item of its own -------------------------------------


@pytest.mark.parametrize(
    ("order_id", "order"),
    [("40005", "ASCENDING"), ("40007", "DESCENDING"), ("40006", "ASCENDING"), ("49999", "ASCENDING")],
)
def test_06_07_08_an_orders_lines_invoice_and_shipments_are_one_query_each_and_the_order_is_never_read(
    online_shop: Gateway, reference: Shop, wire: list[dict[str, Any]], order_id: str, order: str
) -> None:
    wire.clear()
    data, cost, sent = _run(
        online_shop,
        f'{{ order(orderId: "{order_id}") {{ orderId items(order: {order}) {{ nodes {{ orderId productId quantity }} }}'
        f" shipments(order: {order}) {{ nodes {{ shipmentId warehouseId }} }}"
        " invoices { nodes { invoiceId amount } } } }",
    )
    descending = order == "DESCENDING"
    found = data["order"]
    assert found["orderId"] == order_id  # an order exists whenever its id is given: its partition may be empty
    assert found["items"]["nodes"] == [
        {**_ids(item, "orderId", "productId"), "quantity": _number(item["Quantity"])}
        for item in reference.order_products(order_id, descending=descending).answer
    ]
    assert found["shipments"]["nodes"] == [
        _ids(item, "shipmentId", "warehouseId") for item in reference.order_shipments(order_id, descending).answer
    ]
    assert found["invoices"]["nodes"] == [
        {**_ids(item, "invoiceId"), "amount": _number(item["Amount"])}
        for item in reference.order_invoice(order_id).answer
    ]
    assert (cost, sent) == ((3, 1), {"Query": 3})
    conditions = sorted(query["ExpressionAttributeValues"][":sk"]["S"] for query in wire)
    assert conditions == ["i#", "p#", "sh#"]
    assert all(query["KeyConditionExpression"] == "#pk = :pk AND begins_with(#sk, :sk)" for query in wire)


def test_07_an_orders_invoice_alone_is_one_query_and_links_back_to_the_order_with_no_read(
    online_shop: Gateway, reference: Shop
) -> None:
    data, cost, sent = _run(
        online_shop,
        '{ order(orderId: "40003") { invoices { nodes { invoiceId order { orderId'
        " items(first: 1) { nodes { productId } } } } } } }",
    )
    (invoice,) = data["order"]["invoices"]["nodes"]
    assert invoice["invoiceId"] == _ids(reference.order_invoice("40003").answer[0], "invoiceId")["invoiceId"]
    assert invoice["order"] == {"orderId": "40003", "items": {"nodes": [{"productId": "20001"}]}}
    assert (cost, sent) == ((2, 2), {"Query": 2})


def test_an_order_has_a_global_id_and_no_mutations(online_shop: Gateway) -> None:
    data, cost, _ = _run(online_shop, '{ orders(orderIds: ["40001", "49999"]) { id orderId } }')
    assert [one["orderId"] for one in data["orders"]] == ["40001", "49999"] and cost == (0, 0)
    again, cost, _ = _run(online_shop, f'{{ node(id: "{data["orders"][0]["id"]}") {{ ... on Order {{ orderId }} }} }}')
    assert again == {"node": {"orderId": "40001"}} and cost == (0, 0)
    body = online_shop.query('{ __type(name: "Mutation") { fields { name } } }')
    names = {field["name"] for field in body["data"]["__type"]["fields"]}
    assert "createInvoice" in names and not {"createOrder", "updateOrder", "deleteOrder"} & names


_OWN = {
    "orderItem": ("OrderItem", "productId"),
    "invoice": ("Invoice", "invoiceId"),
    "payment": ("Payment", "paymentId"),
    "shipment": ("Shipment", "shipmentId"),
    "shipmentItem": ("ShipmentItem", "shipmentItemId"),
}
DETAIL = (
    "__typename ... on OrderItem { productId } ... on Invoice { invoiceId } ... on Payment { paymentId }"
    " ... on Shipment { shipmentId } ... on ShipmentItem { shipmentItemId }"
)


def _detail(item: Item) -> dict[str, str]:
    type_name, own = _OWN[item["EntityType"]]
    return {"__typename": type_name, own: facts(item)[own]}


@pytest.mark.parametrize(
    ("order_id", "order"), [("40002", "ASCENDING"), ("40002", "DESCENDING"), ("49999", "ASCENDING")]
)
def test_05_all_of_an_orders_details_are_one_query_of_its_partition(
    online_shop: Gateway, reference: Shop, wire: list[dict[str, Any]], order_id: str, order: str
) -> None:
    query = f'{{ order(orderId: "{order_id}") {{ details(first: 50, order: {order}) {{ nodes {{ {DETAIL} }} }} }} }}'
    wire.clear()
    data, cost, sent = _run(online_shop, query)
    expected = reference.order(order_id, descending=order == "DESCENDING").answer
    assert data["order"]["details"]["nodes"] == [_detail(item) for item in expected]
    assert len(expected) == (8 if order_id == "40002" else 0)
    assert (cost, sent) == ((1, 1), {"Query": 1})
    (sent_query,) = wire
    assert sent_query["KeyConditionExpression"] == "#pk = :pk"  # the whole partition: every kind is a member
    explain = online_shop.query(query, **{"X-Tablegraph-Explain": "1"})["extensions"]["explain"]
    assert (explain["calls"], explain["rounds"]) == cost


def test_05_an_orders_details_page_both_ways_with_cursors(online_shop: Gateway, reference: Shop) -> None:
    expected = [_detail(item) for item in reference.order("40002").answer]
    page = f"edges {{ cursor node {{ {DETAIL} }} }} pageInfo {{ hasNextPage hasPreviousPage startCursor endCursor }}"
    forwards: list[dict[str, Any]] = []
    after = ""
    while True:
        data, cost, _ = _run(online_shop, f'{{ order(orderId: "40002") {{ details(first: 3{after}) {{ {page} }} }} }}')
        found = data["order"]["details"]
        forwards += [edge["node"] for edge in found["edges"]]
        assert cost == (1, 1)
        if not found["pageInfo"]["hasNextPage"]:
            break
        after = f', after: "{found["pageInfo"]["endCursor"]}"'
    backwards: list[dict[str, Any]] = []
    before = ""
    while True:
        data, cost, _ = _run(online_shop, f'{{ order(orderId: "40002") {{ details(last: 3{before}) {{ {page} }} }} }}')
        found = data["order"]["details"]
        backwards = [edge["node"] for edge in found["edges"]] + backwards
        if not found["pageInfo"]["hasPreviousPage"]:
            break
        before = f', before: "{found["pageInfo"]["startCursor"]}"'
    assert forwards == backwards == expected


def test_05_each_detail_is_a_node_of_its_own_kind(online_shop: Gateway) -> None:
    data, _, _ = _run(online_shop, '{ order(orderId: "40002") { details { nodes { ... on Node { id } } } } }')
    ids = [node["id"] for node in data["order"]["details"]["nodes"]]
    again, cost, _ = _run(online_shop, f"{{ nodes(ids: {json.dumps(ids)}) {{ {DETAIL} }} }}")
    direct, _, _ = _run(online_shop, f'{{ order(orderId: "40002") {{ details {{ nodes {{ {DETAIL} }} }} }} }}')
    assert again["nodes"] == direct["order"]["details"]["nodes"] and cost == (1, 1)


def test_05_what_each_kinds_fragment_reads_follows_in_one_batch_estimated_as_sent(
    online_shop: Gateway, reference: Shop
) -> None:
    query = (
        '{ order(orderId: "40002") { details { nodes { __typename ... on Shipment { shipmentId warehouse'
        " { warehouseId address { city } } } ... on OrderItem { productId product { price } } } } } }"
    )
    data, cost, sent = _run(online_shop, query)
    shipments = [facts(item) for item in reference.order("40002").answer if item["EntityType"] == "shipment"]
    lines = [facts(item) for item in reference.order("40002").answer if item["EntityType"] == "orderItem"]
    nodes = data["order"]["details"]["nodes"]
    assert [node["shipmentId"] for node in nodes if node["__typename"] == "Shipment"] == [
        one["shipmentId"] for one in shipments
    ]
    assert [node["warehouse"]["warehouseId"] for node in nodes if node["__typename"] == "Shipment"] == [
        one["warehouseId"] for one in shipments
    ]
    assert [node["productId"] for node in nodes if node["__typename"] == "OrderItem"] == [
        one["productId"] for one in lines
    ]
    assert all(node["product"]["price"] is not None for node in nodes if node["__typename"] == "OrderItem")
    assert {node["__typename"] for node in nodes if len(node) == 1} == {"Invoice", "Payment", "ShipmentItem"}
    # The partition's Query, then one BatchGetItem for the warehouses and products of every kind together.
    assert (cost, sent) == ((2, 2), {"Query": 1, "BatchGetItem": 1})
    explain = online_shop.query(query, **{"X-Tablegraph-Explain": "1"})["extensions"]["explain"]
    assert (explain["calls"], explain["rounds"]) == cost


def test_05_the_five_connections_of_one_kind_each_still_answer_the_same_in_one_round(
    online_shop: Gateway, reference: Shop
) -> None:
    """The per-kind connections remain for a client that wants one kind: five Queries, all at once."""
    data, cost, sent = _run(
        online_shop,
        '{ order(orderId: "40002") { items { nodes { productId } } invoices { nodes { invoiceId } }'
        " payments { nodes { paymentId } } shipments { nodes { shipmentId } }"
        " shipmentItems { nodes { shipmentItemId } } } }",
    )
    found = data["order"]
    read = [
        *(("orderItem", node["productId"]) for node in found["items"]["nodes"]),
        *(("invoice", node["invoiceId"]) for node in found["invoices"]["nodes"]),
        *(("payment", node["paymentId"]) for node in found["payments"]["nodes"]),
        *(("shipment", node["shipmentId"]) for node in found["shipments"]["nodes"]),
        *(("shipmentItem", node["shipmentItemId"]) for node in found["shipmentItems"]["nodes"]),
    ]
    expected = [
        (item["EntityType"], facts(item)[_OWN[item["EntityType"]][1]]) for item in reference.order("40002").answer
    ]
    assert sorted(read) == sorted(expected) and len(expected) == 8
    assert (cost, sent) == ((5, 1), {"Query": 5})
