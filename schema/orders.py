"""Orders and their items, the one-to-many design of boto3-assist's article, on a table of its own.

| entity    | pk                | sk                |
|-----------|-------------------|-------------------|
| Order     | order#<orderId>   | order#<orderId>   |
| OrderItem | order#<orderId>   | item#<itemId>     |

``item#`` sorts before ``order#``: read descending, an order's partition starts with the order and goes on with its
items, so an order and its first page of items are one Query. Orders name no tenant: every caller reads them, and
only an admin writes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gateway import Attribute, Collection, Declaration, Entity, Index, Item, KeyShape, Link, Model

ORDER = Entity(
    "Order",
    {None: KeyShape.of("order#{orderId}", "order#{orderId}")},
    {
        "user_id": Attribute("S", "The customer who placed the order."),
        "total": Attribute("N", "The amount charged, in the order's currency."),
        "status": Attribute(
            "S",
            "Where the order stands.",
            default="pending",
            enum={"pending": "Placed, not paid yet.", "paid": "Paid, not shipped yet.", "shipped": "On its way."},
        ),
        "item_count": Attribute("INT", "How many items the order has, kept exact by the writes.", writable=False),
    },
    description="A customer's order: one partition holds it and its items.",
)
ORDER_ITEM = Entity(
    "OrderItem",
    {None: KeyShape.of("order#{orderId}", "item#{itemId}")},
    {
        "product_id": Attribute("S", "The product ordered.", required=True),
        "quantity": Attribute("INT", "How many of the product.", minimum=1, maximum=10_000),
        "price": Attribute("N", "The price of one."),
    },
    description="One line of an order.",
)
ORDER_ITEMS = Collection(
    "Order.items", ORDER, ORDER_ITEM, ascending=False, counter="item_count", description="By item id, descending."
)
ORDER_ITEM_ORDER = Link("OrderItem.order", ORDER_ITEM, ORDER, "The order the item belongs to.")

MODEL = Model(
    table="orders",
    indexes=(Index(None, "pk", "sk"),),
    entities=(ORDER, ORDER_ITEM),
    collections=(ORDER_ITEMS,),
    links=(ORDER_ITEM_ORDER,),
)


def seed() -> Iterator[Item]:
    """The article's order xyz-789 and its two items; an order of 25 items, one of a single item, one of none."""
    orders = {
        "xyz-789": ("user-123", "99.99", "pending", [("prod-456", 2, "29.99"), ("prod-789", 1, "39.99")]),
        "bulk-100": ("user-456", "250", "paid", [(f"prod-{n:03d}", 1, "10") for n in range(1, 26)]),
        "one-001": ("user-456", "5.50", "shipped", [("prod-001", 1, "5.50")]),
        "empty-000": ("user-123", "0", "pending", []),
    }
    for order_id, (user_id, total, status, lines) in orders.items():
        attributes = {"user_id": user_id, "total": Decimal(total), "status": status}
        yield MODEL.item(ORDER, {"orderId": order_id}, attributes)
        for n, (product_id, quantity, price) in enumerate(lines, start=1):
            ids = {"orderId": order_id, "itemId": f"item-{n:03d}"}
            yield MODEL.item(ORDER_ITEM, ids, {"product_id": product_id, "quantity": quantity, "price": Decimal(price)})


ORDERS = Declaration(MODEL, seed=seed)
"""``tablegraph serve --model schema.orders:ORDERS``: no tenancy, so every caller reads and admins write."""
