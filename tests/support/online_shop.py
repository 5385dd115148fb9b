"""The Online Shop (docs/online-shop.md): its table, our own items spelled as its model spells them, and a reference.

Everything here is plain Python and plain boto3 and shares no code with ``gateway/`` or ``schema/``: it is the
yardstick the gateway's Online Shop declaration is measured against. The reference answers each of the 16 access
patterns from the items' meaning (their ``EntityType`` and the ids and dates each type keeps in its keys), not by
repeating the key conditions, so a documented request that reads the wrong range disagrees with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

Item = dict[str, Any]

INDEXES = {"GSI1": ("GSI1-PK", "GSI1-SK"), "GSI2": ("GSI2-PK", "GSI2-SK")}
ENTITY_TYPES = (
    "customer",
    "product",
    "warehouse",
    "warehouseItem",
    "orderItem",
    "shipment",
    "shipmentItem",
    "invoice",
    "payment",
)
_STAMP = "%Y-%m-%dT%H:%M:%S"


def create_table(client: Any, name: str) -> None:
    """The model's table: ``PK``/``SK`` and two GSIs on ``GSI1-PK``/``GSI1-SK`` and ``GSI2-PK``/``GSI2-SK``."""
    names = ["PK", "SK", *(attribute for pair in INDEXES.values() for attribute in pair)]
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": one, "AttributeType": "S"} for one in names],
        GlobalSecondaryIndexes=[
            {
                "IndexName": index,
                "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index, (pk, sk) in INDEXES.items()
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def load(client: Any, name: str, items: Iterable[Item]) -> None:
    """Write ``items`` with BatchWriteItem, retrying what DynamoDB leaves unprocessed."""
    serializer = TypeSerializer()
    requests = [{"PutRequest": {"Item": {k: serializer.serialize(v) for k, v in item.items()}}} for item in items]
    for start in range(0, len(requests), 25):
        pending: Mapping[str, Any] = {name: requests[start : start + 25]}
        while pending:
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}


def plain(wire: Mapping[str, Any]) -> Item:
    """An item as DynamoDB's wire format spells it, as the plain values ``items()`` writes."""
    deserializer = TypeDeserializer()
    return {name: deserializer.deserialize(value) for name, value in wire.items()}


# --- the data --------------------------------------------------------------------------------------------------------

CUSTOMERS = {"10001": "Ada", "10002": "Bo", "10003": "Cyd", "10004": "Dee"}  # 10004 never orders
PRODUCTS = {  # id: (name, description, price); 20005 is in no warehouse, 20006 is never ordered
    "20001": ("Options Open", "An album", "100"),
    "20002": ("The Book", "A book", "40"),
    "20003": ("Lamp", "A desk lamp", "25"),
    "20004": ("Kettle", "A kettle", "35"),
    "20005": ("Poster", "A printed poster", "9"),
    "20006": ("Chair", "An office chair", "120"),
}
WAREHOUSES = {"30001": ("Goteborg", "41111"), "30002": ("Boras", "50330"), "30003": ("Malmo", "21119")}  # 30003: empty
STOCK = [  # (productId, warehouseId, quantity)
    ("20001", "30001", 50),
    ("20001", "30002", 7),
    ("20002", "30001", 4),
    ("20003", "30002", 12),
    ("20004", "30001", 0),
    ("20004", "30002", 3),
    ("20006", "30001", 9),
]


@dataclass(frozen=True)
class Order:
    """One order as its partition holds it; an order item is stamped ``placed`` plus two minutes per line."""

    order_id: str
    customer_id: str
    placed: str
    lines: tuple[tuple[str, int], ...]  # (productId, quantity)
    payments: tuple[tuple[str, int], ...] = ()  # (type, amount): an invoice when there are any
    shipments: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (shipmentId, warehouseId, productIds)


# Stamps sit on the boundaries the range patterns use: midnight, the last second of a day, a day's bare date.
ORDERS = (
    Order(
        "40001",
        "10001",
        "2020-06-01T00:00:00",
        (("20001", 2), ("20002", 1)),
        (("GiftCard", 50), ("MasterCard", 190)),
        (("70001", "30001", ("20001", "20002")),),
    ),
    Order(
        "40002",
        "10001",
        "2020-06-15T10:00:00",
        (("20001", 1), ("20003", 3)),
        (("MasterCard", 175),),
        (("70002", "30001", ("20001",)), ("70003", "30002", ("20003",))),
    ),
    Order(
        "40003",
        "10002",
        "2020-06-21T19:18:00",
        (("20001", 2), ("20002", 5)),
        (("GiftCard", 100), ("Visa", 300)),
        (("70004", "30002", ("20001", "20002")),),
    ),
    Order("40004", "10002", "2020-06-21T23:59:00", (("20004", 1),), (("Visa", 35),)),
    Order(
        "40005",
        "10001",
        "2020-06-30T23:59:59",
        (("20005", 4), ("20003", 1), ("20002", 1)),
        (("Visa", 101),),
        (("70005", "30002", ("20003",)),),
    ),
    Order("40006", "10003", "2020-07-02T08:30:00", (("20001", 1),)),  # placed, not invoiced yet
    Order(
        "40007",
        "10003",
        "2020-07-15T12:00:00",
        (("20002", 2), ("20004", 2)),
        (("GiftCard", 20), ("Visa", 130)),
        (("70006", "30001", ("20002", "20004")), ("70007", "30002", ("20004",))),
    ),
)


def _stamp(placed: str, minutes: int) -> str:
    return (datetime.strptime(placed, _STAMP) + timedelta(minutes=minutes)).strftime(_STAMP)


def _address(city: str, zip_code: str, street: str, number: str) -> dict[str, str]:
    return {
        "Country": "Sweden",
        "County": "Vastra Gotaland",
        "City": city,
        "Street": street,
        "Number": number,
        "ZipCode": zip_code,
    }


def items() -> list[Item]:
    """Every item of the shop, as the model spells them: S keys, numbers as strings, maps for details."""
    out: list[Item] = []
    for customer_id, name in CUSTOMERS.items():
        out.append(
            {
                "PK": f"c#{customer_id}",
                "SK": f"c#{customer_id}",
                "EntityType": "customer",
                "Email": f"{name.lower()}@example.com",
                "Name": name,
            }
        )
    for product_id, (name, description, price) in PRODUCTS.items():
        out.append(
            {
                "PK": f"p#{product_id}",
                "SK": f"p#{product_id}",
                "EntityType": "product",
                "Detail": {"Name": name, "Description": description},
                "Price": price,
            }
        )
    for warehouse_id, (city, zip_code) in WAREHOUSES.items():
        out.append(
            {
                "PK": f"w#{warehouse_id}",
                "SK": f"w#{warehouse_id}",
                "EntityType": "warehouse",
                "Address": _address(city, zip_code, "MainStreet", "20"),
            }
        )
    for product_id, warehouse_id, quantity in STOCK:
        out.append(
            {
                "PK": f"p#{product_id}",
                "SK": f"w#{warehouse_id}",
                "EntityType": "warehouseItem",
                "GSI2-PK": f"w#{warehouse_id}",
                "GSI2-SK": f"p#{product_id}",
                "Quantity": str(quantity),
            }
        )
    invoice_ids = iter(range(50001, 60000))
    payment_ids = iter(range(60001, 70000))
    shipment_item_ids = iter(range(80001, 90000))
    for order in ORDERS:
        out += _order_items(order, invoice_ids, payment_ids, shipment_item_ids)
    return out


def _order_items(
    order: Order, invoice_ids: Iterator[int], payment_ids: Iterator[int], shipment_item_ids: Iterator[int]
) -> list[Item]:
    pk = f"o#{order.order_id}"
    out: list[Item] = []
    for n, (product_id, quantity) in enumerate(order.lines):
        ordered_at = _stamp(order.placed, 2 * n)
        out.append(
            {
                "PK": pk,
                "SK": f"p#{product_id}",
                "EntityType": "orderItem",
                "GSI1-PK": f"p#{product_id}",
                "GSI1-SK": ordered_at,
                "GSI2-PK": f"c#{order.customer_id}",
                "GSI2-SK": f"p#{ordered_at}",
                "Quantity": str(quantity),
                "Price": PRODUCTS[product_id][2],
            }
        )
    if order.payments:
        invoice_id = str(next(invoice_ids))
        total = sum(quantity * int(PRODUCTS[product_id][2]) for product_id, quantity in order.lines)
        assert total == sum(amount for _, amount in order.payments), f"order {order.order_id} is not paid in full"
        paid_at = _stamp(order.placed, 70)
        payments = [
            {"Type": kind, "Amount": Decimal(amount), "Data": f"{kind} data"} for kind, amount in order.payments
        ]
        out.append(
            {
                "PK": pk,
                "SK": f"i#{invoice_id}",
                "EntityType": "invoice",
                "GSI1-PK": f"i#{invoice_id}",
                "GSI1-SK": f"i#{invoice_id}",
                "GSI2-PK": f"c#{order.customer_id}",
                "GSI2-SK": f"i#{order.placed}",
                "Amount": str(total),
                "Date": order.placed,
                "Detail": {"Payments": payments},
            }
        )
        for kind, amount in order.payments:
            payment_id = str(next(payment_ids))
            out.append(
                {
                    "PK": pk,
                    "SK": f"pmn#{payment_id}",
                    "EntityType": "payment",
                    "GSI1-PK": f"i#{invoice_id}",
                    "GSI1-SK": f"pmn#{payment_id}",
                    "Type": kind,
                    "Amount": str(amount),
                    "Date": paid_at,
                }
            )
    quantities = dict(order.lines)
    for n, (shipment_id, warehouse_id, product_ids) in enumerate(order.shipments):
        out.append(
            {
                "PK": pk,
                "SK": f"sh#{shipment_id}",
                "EntityType": "shipment",
                "GSI1-PK": f"sh#{shipment_id}",
                "GSI1-SK": f"sh#{shipment_id}",
                "GSI2-PK": f"w#{warehouse_id}",
                "GSI2-SK": f"sh#{shipment_id}",
                "Address": _address("Goteborg", "98765", "Slanbarsvagen", str(100 + n)),
                "Type": "Express",
                "Date": _stamp(order.placed, 24 * 60 + n),
            }
        )
        for product_id in product_ids:
            out.append(
                {
                    "PK": pk,
                    "SK": f"shp#{next(shipment_item_ids)}",
                    "EntityType": "shipmentItem",
                    "GSI1-PK": f"sh#{shipment_id}",
                    "GSI1-SK": f"p#{product_id}",
                    "Quantity": str(quantities[product_id]),
                }
            )
    return out


# --- the reference ---------------------------------------------------------------------------------------------------


def facts(item: Item) -> dict[str, str]:
    """What an item says, by its ``EntityType``: the ids and stamps its type keeps in its keys, by their names."""
    kind = item["EntityType"]

    def after(attribute: str, prefix: str) -> str:
        value: str = item[attribute]
        assert value.startswith(prefix), f"{kind} {item['PK']}/{item['SK']}: {attribute} is not {prefix}<...>"
        return value[len(prefix) :]

    match kind:
        case "customer":
            return {"customerId": after("PK", "c#")}
        case "product":
            return {"productId": after("PK", "p#")}
        case "warehouse":
            return {"warehouseId": after("PK", "w#")}
        case "warehouseItem":
            return {"productId": after("PK", "p#"), "warehouseId": after("SK", "w#")}
        case "orderItem":
            return {
                "orderId": after("PK", "o#"),
                "productId": after("SK", "p#"),
                "orderedAt": item["GSI1-SK"],
                "customerId": after("GSI2-PK", "c#"),
            }
        case "shipment":
            return {
                "orderId": after("PK", "o#"),
                "shipmentId": after("SK", "sh#"),
                "warehouseId": after("GSI2-PK", "w#"),
            }
        case "shipmentItem":
            return {
                "orderId": after("PK", "o#"),
                "shipmentItemId": after("SK", "shp#"),
                "shipmentId": after("GSI1-PK", "sh#"),
                "productId": after("GSI1-SK", "p#"),
            }
        case "invoice":
            return {
                "orderId": after("PK", "o#"),
                "invoiceId": after("SK", "i#"),
                "customerId": after("GSI2-PK", "c#"),
                "invoicedAt": after("GSI2-SK", "i#"),
            }
        case "payment":
            return {"orderId": after("PK", "o#"), "paymentId": after("SK", "pmn#"), "invoiceId": after("GSI1-PK", "i#")}
    raise AssertionError(f"unknown EntityType {kind!r}")


@dataclass(frozen=True)
class Expected:
    """An access pattern's answer in order, and the fewest DynamoDB requests that read it."""

    answer: list[Any]
    requests: int = 1


class Shop:
    """The 16 access patterns answered from the items alone. Range bounds are inclusive and compared as strings,
    as DynamoDB compares them (code point order is UTF-8 byte order); lists come in ascending order unless
    ``descending``."""

    def __init__(self, items: Iterable[Item]) -> None:
        self.items = [dict(item) for item in items]

    def _of(self, kind: str, **where: str) -> list[tuple[dict[str, str], Item]]:
        found = [(facts(item), item) for item in self.items if item["EntityType"] == kind]
        return [(f, item) for f, item in found if all(f[name] == value for name, value in where.items())]

    def _one(self, kind: str, **where: str) -> Expected:
        return Expected([item for _, item in self._of(kind, **where)])

    @staticmethod
    def _sorted(found: list[tuple[dict[str, str], Item]], by: Callable[[dict[str, str]], str], desc: bool) -> Expected:
        return Expected([item for _, item in sorted(found, key=lambda pair: by(pair[0]), reverse=desc)])

    def customer(self, customer_id: str) -> Expected:  # 1
        return self._one("customer", customerId=customer_id)

    def product(self, product_id: str) -> Expected:  # 2
        return self._one("product", productId=product_id)

    def warehouse(self, warehouse_id: str) -> Expected:  # 3
        return self._one("warehouse", warehouseId=warehouse_id)

    def product_inventory(self, product_id: str, descending: bool = False) -> Expected:  # 4
        found = self._of("warehouseItem", productId=product_id)
        return self._sorted(found, lambda f: f["warehouseId"], descending)

    def order(self, order_id: str, descending: bool = False) -> Expected:  # 5
        """Everything the order holds: no item of its own, so an order without lines is no answer at all."""
        found = [(facts(item), item) for item in self.items if facts(item).get("orderId") == order_id]
        return Expected([item for _, item in sorted(found, key=lambda pair: pair[1]["SK"], reverse=descending)])

    def order_products(self, order_id: str, descending: bool = False) -> Expected:  # 6
        return self._sorted(self._of("orderItem", orderId=order_id), lambda f: f["productId"], descending)

    def order_invoice(self, order_id: str) -> Expected:  # 7
        return self._one("invoice", orderId=order_id)

    def order_shipments(self, order_id: str, descending: bool = False) -> Expected:  # 8
        return self._sorted(self._of("shipment", orderId=order_id), lambda f: f["shipmentId"], descending)

    def product_orders(self, product_id: str, low: str, high: str, descending: bool = False) -> Expected:  # 9
        found = [pair for pair in self._of("orderItem", productId=product_id) if low <= pair[0]["orderedAt"] <= high]
        return self._sorted(found, lambda f: f["orderedAt"], descending)

    def invoice(self, invoice_id: str) -> Expected:  # 10
        return self._one("invoice", invoiceId=invoice_id)

    def invoice_payments(self, invoice_id: str) -> Expected:  # 11
        invoices = self._of("invoice", invoiceId=invoice_id)
        return Expected([payment for _, item in invoices for payment in item["Detail"]["Payments"]])

    def shipment(self, shipment_id: str, descending: bool = False) -> Expected:  # 12
        """The shipment and its items: the items by product, then the shipment (``p#`` sorts before ``sh#``)."""
        found = self._of("shipmentItem", shipmentId=shipment_id) + self._of("shipment", shipmentId=shipment_id)
        return self._sorted(
            found, lambda f: "1" + f["shipmentId"] if "productId" not in f else "0" + f["productId"], descending
        )

    def warehouse_shipments(self, warehouse_id: str, descending: bool = False) -> Expected:  # 13
        return self._sorted(self._of("shipment", warehouseId=warehouse_id), lambda f: f["shipmentId"], descending)

    def warehouse_inventory(self, warehouse_id: str, descending: bool = False) -> Expected:  # 14
        return self._sorted(self._of("warehouseItem", warehouseId=warehouse_id), lambda f: f["productId"], descending)

    def customer_invoices(self, customer_id: str, low: str, high: str, descending: bool = False) -> Expected:  # 15
        found = [pair for pair in self._of("invoice", customerId=customer_id) if low <= pair[0]["invoicedAt"] <= high]
        return self._sorted(found, lambda f: f["invoicedAt"], descending)

    def customer_products(self, customer_id: str, low: str, high: str, descending: bool = False) -> Expected:  # 16
        found = [pair for pair in self._of("orderItem", customerId=customer_id) if low <= pair[0]["orderedAt"] <= high]
        return self._sorted(found, lambda f: f["orderedAt"], descending)


# docs/online-shop.md, "Items": each type's key templates, as the model's authors wrote them: what a draft of
# the design (import workbench, init --from-table) must find.
SHOP_KEYS = {
    "Customer": {"table": ("c#{customerId}", "c#{customerId}")},
    "Product": {"table": ("p#{productId}", "p#{productId}")},
    "Warehouse": {"table": ("w#{warehouseId}", "w#{warehouseId}")},
    "WarehouseItem": {"table": ("p#{productId}", "w#{warehouseId}"), "GSI2": ("w#{warehouseId}", "p#{productId}")},
    "OrderItem": {
        "table": ("o#{orderId}", "p#{productId}"),
        "GSI1": ("p#{productId}", "{orderedAt}"),
        "GSI2": ("c#{customerId}", "p#{orderedAt}"),
    },
    "Shipment": {
        "table": ("o#{orderId}", "sh#{shipmentId}"),
        "GSI1": ("sh#{shipmentId}", "sh#{shipmentId}"),
        "GSI2": ("w#{warehouseId}", "sh#{shipmentId}"),
    },
    "ShipmentItem": {"table": ("o#{orderId}", "shp#{shipmentItemId}"), "GSI1": ("sh#{shipmentId}", "p#{productId}")},
    "Invoice": {
        "table": ("o#{orderId}", "i#{invoiceId}"),
        "GSI1": ("i#{invoiceId}", "i#{invoiceId}"),
        "GSI2": ("c#{customerId}", "i#{invoicedAt}"),
    },
    "Payment": {"table": ("o#{orderId}", "pmn#{paymentId}"), "GSI1": ("i#{invoiceId}", "pmn#{paymentId}")},
}
