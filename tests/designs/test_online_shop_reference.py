"""The Online Shop's 16 access patterns: the one request docs/online-shop.md gives each reads what the reference says.

Plain boto3 against DynamoDB Local: this proves the fixture, the reference and the documented requests agree, before
the gateway is measured against them.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.online_shop import (
    ENTITY_TYPES,
    INDEXES,
    Expected,
    Item,
    Shop,
    create_table,
    facts,
    items,
    load,
    plain,
)


@pytest.fixture(scope="module")
def shop_table(dynamodb: Any) -> Iterator[str]:
    name = f"shop-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    load(dynamodb, name, items())
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def shop() -> Shop:
    return Shop(items())


# --- the documented requests, one per access pattern ----------------------------------------------------------------

Request = tuple[str, dict[str, Any]]


def _get(pk: str, sk: str) -> Request:
    return "GetItem", {"Key": {"PK": {"S": pk}, "SK": {"S": sk}}}


def _query(index: str | None, pk: str, sk: tuple[str, ...] = (), descending: bool = False) -> Request:
    """A Query on the table or an index: the partition, and a sort key condition ``("begins_with", v)``,
    ``("=", v)`` or ``("between", low, high)``."""
    pk_name, sk_name = INDEXES[index] if index else ("PK", "SK")
    values = {":pk": {"S": pk}}
    condition = "#pk = :pk"
    if sk:
        op, *operands = sk
        values.update({f":v{n}": {"S": value} for n, value in enumerate(operands)})
        condition += {
            "begins_with": " AND begins_with(#sk, :v0)",
            "=": " AND #sk = :v0",
            "between": " AND #sk BETWEEN :v0 AND :v1",
        }[op]
    request: dict[str, Any] = {
        "KeyConditionExpression": condition,
        "ExpressionAttributeNames": {"#pk": pk_name, **({"#sk": sk_name} if sk else {})},
        "ExpressionAttributeValues": values,
        "ScanIndexForward": not descending,
    }
    if index:
        request["IndexName"] = index
    return "Query", request


@dataclass(frozen=True)
class Pattern:
    number: int
    request: Callable[..., Request]
    answer: Callable[[Shop], Callable[..., Expected]]
    pick: Callable[[list[Item]], list[Any]] = lambda found: found
    """What the pattern answers from the items the request returns (all of them, for most)."""


def _payments(found: list[Item]) -> list[Any]:
    return [payment for invoice in found for payment in invoice["Detail"]["Payments"]]


PATTERNS = {
    "customer": Pattern(1, lambda c: _get(f"c#{c}", f"c#{c}"), lambda s: s.customer),
    "product": Pattern(2, lambda p: _get(f"p#{p}", f"p#{p}"), lambda s: s.product),
    "warehouse": Pattern(3, lambda w: _get(f"w#{w}", f"w#{w}"), lambda s: s.warehouse),
    "product_inventory": Pattern(
        4,
        lambda p, descending=False: _query(None, f"p#{p}", ("begins_with", "w#"), descending),
        lambda s: s.product_inventory,
    ),
    "order": Pattern(5, lambda o, descending=False: _query(None, f"o#{o}", (), descending), lambda s: s.order),
    "order_products": Pattern(
        6,
        lambda o, descending=False: _query(None, f"o#{o}", ("begins_with", "p#"), descending),
        lambda s: s.order_products,
    ),
    "order_invoice": Pattern(7, lambda o: _query(None, f"o#{o}", ("begins_with", "i#")), lambda s: s.order_invoice),
    "order_shipments": Pattern(
        8,
        lambda o, descending=False: _query(None, f"o#{o}", ("begins_with", "sh#"), descending),
        lambda s: s.order_shipments,
    ),
    "product_orders": Pattern(
        9,
        lambda p, low, high, descending=False: _query("GSI1", f"p#{p}", ("between", low, high), descending),
        lambda s: s.product_orders,
    ),
    "invoice": Pattern(10, lambda i: _query("GSI1", f"i#{i}", ("=", f"i#{i}")), lambda s: s.invoice),
    "invoice_payments": Pattern(
        11, lambda i: _query("GSI1", f"i#{i}", ("=", f"i#{i}")), lambda s: s.invoice_payments, _payments
    ),
    "shipment": Pattern(
        12, lambda sh, descending=False: _query("GSI1", f"sh#{sh}", (), descending), lambda s: s.shipment
    ),
    "warehouse_shipments": Pattern(
        13,
        lambda w, descending=False: _query("GSI2", f"w#{w}", ("begins_with", "sh#"), descending),
        lambda s: s.warehouse_shipments,
    ),
    "warehouse_inventory": Pattern(
        14,
        lambda w, descending=False: _query("GSI2", f"w#{w}", ("begins_with", "p#"), descending),
        lambda s: s.warehouse_inventory,
    ),
    "customer_invoices": Pattern(
        15,
        lambda c, low, high, descending=False: _query(
            "GSI2", f"c#{c}", ("between", f"i#{low}", f"i#{high}"), descending
        ),
        lambda s: s.customer_invoices,
    ),
    "customer_products": Pattern(
        16,
        lambda c, low, high, descending=False: _query(
            "GSI2", f"c#{c}", ("between", f"p#{low}", f"p#{high}"), descending
        ),
        lambda s: s.customer_products,
    ),
}

CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("customer", ("10001",), {}),
    ("customer", ("10004",), {}),
    ("customer", ("19999",), {}),
    ("product", ("20002",), {}),
    ("product", ("20006",), {}),
    ("product", ("29999",), {}),
    ("warehouse", ("30001",), {}),
    ("warehouse", ("30003",), {}),
    ("warehouse", ("39999",), {}),
    ("product_inventory", ("20001",), {}),
    ("product_inventory", ("20004",), {"descending": True}),
    ("product_inventory", ("20005",), {}),
    ("order", ("40002",), {}),
    ("order", ("40007",), {"descending": True}),
    ("order", ("40006",), {}),
    ("order", ("49999",), {}),
    ("order_products", ("40005",), {}),
    ("order_products", ("40005",), {"descending": True}),
    ("order_products", ("49999",), {}),
    ("order_invoice", ("40003",), {}),
    ("order_invoice", ("40006",), {}),
    ("order_shipments", ("40002",), {}),
    ("order_shipments", ("40007",), {"descending": True}),
    ("order_shipments", ("40004",), {}),
    # The README's own example range: one day, to the minute.
    ("product_orders", ("20001", "2020-06-21T00:00:00", "2020-06-21T23:59:00"), {}),
    ("product_orders", ("20001", "2020-06-01T00:00:00", "2020-06-15T10:00:00"), {}),
    ("product_orders", ("20001", "2020-06-01", "2020-06-15"), {}),
    ("product_orders", ("20002", "2020-06", "2020-08"), {"descending": True}),
    ("product_orders", ("20006", "2020", "2021"), {}),
    ("invoice", ("50003",), {}),
    ("invoice", ("59999",), {}),
    ("invoice_payments", ("50001",), {}),
    ("invoice_payments", ("50006",), {}),
    ("invoice_payments", ("59999",), {}),
    ("shipment", ("70001",), {}),
    ("shipment", ("70006",), {"descending": True}),
    ("shipment", ("79999",), {}),
    ("warehouse_shipments", ("30002",), {}),
    ("warehouse_shipments", ("30001",), {"descending": True}),
    ("warehouse_shipments", ("30003",), {}),
    ("warehouse_inventory", ("30001",), {}),
    ("warehouse_inventory", ("30002",), {"descending": True}),
    ("warehouse_inventory", ("30003",), {}),
    # The README's own example range: a bare date as the upper bound leaves that day's stamps out.
    ("customer_invoices", ("10001", "2020-06-01", "2020-06-15"), {}),
    ("customer_invoices", ("10001", "2020-06-01", "2020-06-30T23:59:59"), {"descending": True}),
    ("customer_invoices", ("10003", "2020-07", "2020-07-31"), {}),
    ("customer_invoices", ("10004", "2020", "2021"), {}),
    ("customer_products", ("10001", "2020-06-30T23:59:59", "2020-07-01"), {}),
    ("customer_products", ("10001", "2020-06-15", "2020-07-02"), {}),
    ("customer_products", ("10002", "2020-06-21T19:18:00", "2020-06-21T23:59:00"), {"descending": True}),
    ("customer_products", ("10004", "2020", "2021"), {}),
]


def _case_id(case: tuple[str, tuple[Any, ...], dict[str, Any]]) -> str:
    name, args, options = case
    number = PATTERNS[name].number
    return "-".join([f"{number:02d}", name, *args, *(["desc"] if options.get("descending") else [])])


def send(dynamodb: Any, table: str, request: Request) -> tuple[list[Item], Counter[str]]:
    """Send one documented request; the items it read and the requests sent (a Query is followed while it pages)."""
    operation, arguments = request
    sent: Counter[str] = Counter()
    if operation == "GetItem":
        sent[operation] += 1
        found = dynamodb.get_item(TableName=table, **arguments).get("Item")
        return ([plain(found)] if found else []), sent
    out: list[Item] = []
    start: dict[str, Any] = {}
    while True:
        sent[operation] += 1
        page = dynamodb.query(TableName=table, **arguments, **start)
        out += [plain(item) for item in page["Items"]]
        if "LastEvaluatedKey" not in page:
            return out, sent
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


@pytest.mark.parametrize("case", CASES, ids=[_case_id(case) for case in CASES])
def test_the_documented_request_reads_the_references_answer_in_the_fewest_requests(
    dynamodb: Any, shop_table: str, shop: Shop, case: tuple[str, tuple[Any, ...], dict[str, Any]]
) -> None:
    name, args, options = case
    pattern = PATTERNS[name]
    expected = pattern.answer(shop)(*args, **options)
    found, sent = send(dynamodb, shop_table, pattern.request(*args, **options))
    assert pattern.pick(found) == expected.answer
    assert sum(sent.values()) == expected.requests == 1


def test_every_access_pattern_is_documented_and_has_a_case_with_an_answer_and_one_without(shop: Shop) -> None:
    assert sorted(pattern.number for pattern in PATTERNS.values()) == list(range(1, 17))
    answered = {name for name, args, options in CASES if PATTERNS[name].answer(shop)(*args, **options).answer}
    unanswered = {name for name, args, options in CASES if not PATTERNS[name].answer(shop)(*args, **options).answer}
    assert answered == set(PATTERNS)
    assert unanswered == set(PATTERNS)


def test_the_range_cases_cut_through_the_data(shop: Shop) -> None:
    """Each date-ranged pattern has a case whose range leaves out some of the partition's items: a Query that ignored
    the range (or a reference that did) would disagree."""
    for name, everything in [
        ("product_orders", ("", "~")),
        ("customer_invoices", ("", "~")),
        ("customer_products", ("", "~")),
    ]:
        ranged = [(args, options) for case_name, args, options in CASES if case_name == name]
        answer = PATTERNS[name].answer(shop)
        assert any(
            0 < len(answer(*args, **options).answer) < len(answer(args[0], *everything).answer)
            for args, options in ranged
        ), name


def test_every_item_is_its_entity_type_by_key_shape_and_no_index_partition_has_ties(shop: Shop) -> None:
    kinds = Counter(item["EntityType"] for item in shop.items)
    assert set(kinds) == set(ENTITY_TYPES) and min(kinds.values()) >= 3
    for item in shop.items:
        facts(item)  # raises when a key does not have its type's prefix
    keys = [(item["PK"], item["SK"]) for item in shop.items]
    assert len(set(keys)) == len(keys)
    for pk_name, sk_name in INDEXES.values():
        indexed = [(item[pk_name], item[sk_name]) for item in shop.items if pk_name in item]
        assert len(set(indexed)) == len(indexed), f"{pk_name}: two items share a position, their order is undefined"


def test_payment_items_agree_with_their_invoices_map(dynamodb: Any, shop_table: str, shop: Shop) -> None:
    """The facets' payment items and the README's payments map say the same thing: the invoice's GSI1 partition
    holds the invoice, then its payments."""
    invoices = [item for item in shop.items if item["EntityType"] == "invoice"]
    for invoice in invoices:
        found, _ = send(dynamodb, shop_table, _query("GSI1", invoice["GSI1-PK"], ("begins_with", "pmn#")))
        assert [(p["Type"], p["Amount"]) for p in found] == [
            (p["Type"], str(p["Amount"])) for p in invoice["Detail"]["Payments"]
        ]
        whole, _ = send(dynamodb, shop_table, _query("GSI1", invoice["GSI1-PK"]))
        assert [item["EntityType"] for item in whole] == ["invoice"] + ["payment"] * len(found)
