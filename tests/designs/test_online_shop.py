"""AWS's Online Shop (schema.online_shop:SHOP) served on its own table, filled with plain boto3 as the public model
spells the items: each access pattern the declaration serves is answered as the reference (tests/support/online_shop)
answers it, in the requests counted on the wire."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
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
