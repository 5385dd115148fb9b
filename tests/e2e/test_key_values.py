"""Key values as a model library writes them: a table filled the way ElectroDB fills it (lower-cased keys
``$shop#storeid_portland hq``, the ids kept as plain attributes with their capitals, ``__edb_e__``/``__edb_v__``,
epoch-millisecond ``createdAt``/``updatedAt``, enum values that are no GraphQL names) is read and written through the
gateway, and checked with plain boto3."""

from __future__ import annotations

import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import boto3
import pytest

from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Model
from tests.support.gateway import Gateway, answered, fill
from tests.support.mutations import mutate

TABLE = Index(None, "pk", "sk")
GSI1 = Index("gsi1", "gsi1pk", "gsi1sk")
IDENTITY = {"__edb_v__": "1"}
STORE = Entity(
    "Store",
    {
        None: KeyShape.of("$shop#storeid_{storeId:lower}", "$store_1"),
        "gsi1": KeyShape.of("$shop#country_{country:lower}", "$store_1#storeid_{storeId:lower}"),
    },
    {
        "storeId": Attribute("S", from_id="storeId"),
        "country": Attribute("S", from_id="country"),
        "name": Attribute("S", required=True),
        "status": Attribute(
            "S", enum=("open", "on hold", "in-progress", "2fa"), enum_names={"2fa": "TWO_FACTOR"}, default="in-progress"
        ),
        "createdAt": Attribute("N", on_create="now", clock="milliseconds"),
        "updatedAt": Attribute("N", on_update="now", clock="milliseconds"),
    },
    constants={"__edb_e__": "store", **IDENTITY},
)
EMPLOYEE = Entity(
    "Employee",
    {None: KeyShape.of("$shop#storeid_{storeId:lower}", "$employee_1#employeeid_{employeeId:lower}")},
    {
        "storeId": Attribute("S", from_id="storeId"),
        "employeeId": Attribute("S", from_id="employeeId"),
        "name": "S",
        "role": Attribute("S", enum=("store-manager", "clerk")),
        "createdAt": Attribute("S", on_create="now"),
    },
    constants={"__edb_e__": "employee", **IDENTITY},
)
EMPLOYEES = Collection("Store.employees", STORE, EMPLOYEE, filters=("role",))
COUNTRY = Entity("Country", {None: KeyShape.of("$shop#country_{country:lower}", "$country")}, partition=True)
STORES = Collection("Country.stores", COUNTRY, STORE, "gsi1", root="storesIn")
SHOP = Declaration(Model("shop", (TABLE, GSI1), (STORE, EMPLOYEE, COUNTRY), (EMPLOYEES, STORES)))

CREATED = Decimal(1767225600000)  # 2026-01-01T00:00:00Z in epoch milliseconds, as ElectroDB's Date.now()
ITEMS: list[dict[str, Any]] = [
    {
        "pk": "$shop#storeid_portland hq",
        "sk": "$store_1",
        "gsi1pk": "$shop#country_us",
        "gsi1sk": "$store_1#storeid_portland hq",
        "storeId": "Portland HQ",
        "country": "US",
        "name": "Portland",
        "status": "in-progress",
        "createdAt": CREATED,
        "updatedAt": CREATED,
        "__edb_e__": "store",
        "__edb_v__": "1",
    },
    {
        "pk": "$shop#storeid_portland hq",
        "sk": "$employee_1#employeeid_ann lee",
        "storeId": "Portland HQ",
        "employeeId": "Ann Lee",
        "name": "Ann",
        "role": "store-manager",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "__edb_e__": "employee",
        "__edb_v__": "1",
    },
]
KEPT = {"version", "writeId"}
"""What the gateway keeps on every item it writes, besides what the design's own library writes."""


@pytest.fixture(scope="module")
def shop(served: Callable[..., Gateway], endpoint: str) -> Gateway:
    gateway = served(SHOP)
    fill(endpoint, gateway.table, ITEMS)
    return gateway


def _stored(dynamodb: Any, gateway: Gateway, pk: str, sk: str) -> dict[str, Any]:
    """The item at this key, read with plain boto3, as plain Python values."""
    found = dynamodb.get_item(TableName=gateway.table, Key={"pk": {"S": pk}, "sk": {"S": sk}})
    assert "Item" in found, (pk, sk)
    deserialize = boto3.dynamodb.types.TypeDeserializer().deserialize
    return {name: deserialize(value) for name, value in found["Item"].items()}


@pytest.mark.parametrize("typed", ["Portland HQ", "portland hq", "PORTLAND HQ"])
def test_a_lower_cased_key_is_found_from_the_id_as_typed_and_serves_its_capitals(shop: Gateway, typed: str) -> None:
    data, cost = answered(
        shop,
        f'{{ store(storeId: "{typed}") {{ storeId name status createdAt updatedAt'
        " employees(first: 5) { nodes { storeId employeeId name createdAt } } } }",
    )
    assert data["store"] == {
        "storeId": "Portland HQ",
        "name": "Portland",
        "status": "in_progress",
        "createdAt": float(CREATED),
        "updatedAt": float(CREATED),
        "employees": {
            "nodes": [
                {
                    "storeId": "Portland HQ",
                    "employeeId": "Ann Lee",
                    "name": "Ann",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                }
            ]
        },
    }
    assert cost == (2, 1)  # ``$store_1`` sorts after ``$employee_1#...``: GetItem ∥ Query


def test_the_global_id_of_a_lower_cased_key_round_trips_with_its_capitals(shop: Gateway) -> None:
    data, _ = answered(shop, '{ store(storeId: "portland hq") { id } }')
    node, _ = answered(shop, f'{{ node(id: "{data["store"]["id"]}") {{ ... on Store {{ storeId name }} }} }}')
    assert node["node"] == {"storeId": "Portland HQ", "name": "Portland"}


def test_a_create_writes_the_item_electrodb_writes(shop: Gateway, dynamodb: Any) -> None:
    before = time.time() * 1000
    result, _ = mutate(
        shop,
        "createStore",
        {"storeId": "Seattle Pier", "country": "US", "name": "Seattle", "status": "TWO_FACTOR"},
        "... on Store { storeId status createdAt }",
    )
    after = time.time() * 1000
    item = _stored(dynamodb, shop, "$shop#storeid_seattle pier", "$store_1")
    stamp = item["createdAt"]
    assert isinstance(stamp, Decimal) and before - 1 <= stamp <= after + 1
    assert {name: value for name, value in item.items() if name not in KEPT} == {
        "pk": "$shop#storeid_seattle pier",
        "sk": "$store_1",
        "gsi1pk": "$shop#country_us",
        "gsi1sk": "$store_1#storeid_seattle pier",
        "storeId": "Seattle Pier",
        "country": "US",
        "name": "Seattle",
        "status": "2fa",
        "createdAt": stamp,
        "updatedAt": stamp,
        "__edb_e__": "store",
        "__edb_v__": "1",
    }
    assert result == {"__typename": "Store", "storeId": "Seattle Pier", "status": "TWO_FACTOR", "createdAt": stamp}


def test_a_member_created_under_a_lower_cased_parent_writes_iso_time_and_both_constants(
    shop: Gateway, dynamodb: Any
) -> None:
    result, _ = mutate(
        shop,
        "createEmployee",
        {"storeId": "Portland HQ", "employeeId": "Bo Kim", "name": "Bo"},
        "... on Employee { storeId employeeId createdAt }",
    )
    item = _stored(dynamodb, shop, "$shop#storeid_portland hq", "$employee_1#employeeid_bo kim")
    assert result == {
        "__typename": "Employee",
        "storeId": "Portland HQ",
        "employeeId": "Bo Kim",
        "createdAt": item["createdAt"],
    }
    assert time.strptime(item["createdAt"], "%Y-%m-%dT%H:%M:%S.%f%z")
    assert item["createdAt"].endswith("Z") and len(item["createdAt"]) == len("2026-01-01T00:00:00.000Z")
    assert (item["storeId"], item["employeeId"], item["__edb_e__"], item["__edb_v__"]) == (
        "Portland HQ",
        "Bo Kim",
        "employee",
        "1",
    )
    data, _ = answered(shop, '{ store(storeId: "Portland HQ") { employees(first: 5) { nodes { employeeId } } } }')
    assert [node["employeeId"] for node in data["store"]["employees"]["nodes"]] == ["Ann Lee", "Bo Kim"]


def test_an_update_moves_updated_at_and_keeps_created_at(shop: Gateway, dynamodb: Any) -> None:
    mutate(shop, "createStore", {"storeId": "Boise Mall", "country": "us", "name": "Boise"})
    created = _stored(dynamodb, shop, "$shop#storeid_boise mall", "$store_1")
    assert created["status"] == "in-progress"  # the default, as stored
    time.sleep(0.01)
    result, _ = mutate(
        shop,
        "updateStore",
        {"storeId": "BOISE MALL", "expectedVersion": 1, "status": "on_hold"},
        "... on Store { storeId status }",
    )
    assert result == {"__typename": "Store", "storeId": "Boise Mall", "status": "on_hold"}
    item = _stored(dynamodb, shop, "$shop#storeid_boise mall", "$store_1")
    assert item["status"] == "on hold"
    assert item["createdAt"] == created["createdAt"]
    assert item["updatedAt"] > created["updatedAt"]


def test_enum_values_that_are_no_graphql_names_are_named_and_described_by_their_stored_text(shop: Gateway) -> None:
    schema = shop.query('{ __type(name: "StoreStatus") { enumValues { name description } } }')
    values = {one["name"]: one["description"] for one in schema["data"]["__type"]["enumValues"]}
    assert values == {
        "open": "Stored as 'open'.",
        "on_hold": "Stored as 'on hold'.",
        "in_progress": "Stored as 'in-progress'.",
        "TWO_FACTOR": "Stored as '2fa'.",
    }


def test_a_filter_on_an_enum_value_that_is_no_graphql_name_compares_the_stored_text(shop: Gateway) -> None:
    mutate(shop, "createEmployee", {"storeId": "Portland HQ", "employeeId": "Cy", "name": "Cy", "role": "clerk"})
    data, _ = answered(
        shop,
        '{ store(storeId: "Portland HQ") { employees(first: 5, where: {role: {eq: store_manager}}) {'
        " nodes { employeeId role } } } }",
    )
    assert data["store"]["employees"]["nodes"] == [{"employeeId": "Ann Lee", "role": "store_manager"}]


def test_an_index_partition_written_lower_cased_is_listed_from_the_argument_as_typed(shop: Gateway) -> None:
    data, cost = answered(shop, '{ storesIn(country: "US", first: 10) { nodes { storeId country } } }')
    nodes = data["storesIn"]["nodes"]
    assert {"storeId": "Portland HQ", "country": "US"} in nodes
    assert all(node["country"] in ("US", "us") for node in nodes)
    assert cost == (1, 1)


def test_one_store_asked_for_in_two_cases_is_read_once_and_answered_twice(shop: Gateway) -> None:
    data, cost = answered(shop, '{ stores(storeIds: ["Portland HQ", "portland hq", "Nowhere"]) { storeId } }')
    assert data["stores"] == [{"storeId": "Portland HQ"}, {"storeId": "Portland HQ"}, None]
    assert cost == (1, 1)
