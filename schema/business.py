"""Business partners: businesses, their customers, orders and stores, and tags, on a table of its own.

| entity        | id                      | type                    | businessId     | customerId     |
|---------------|-------------------------|-------------------------|----------------|----------------|
| Business      | <businessId>            | business                |                |                |
| Customer      | <customerId>            | customer                | <businessId>   |                |
| Store         | <storeId>               | store                   | <businessId>   |                |
| Order         | <orderId>               | order#<orderId>         | <businessId>   | <customerId>   |
| CustomerStore | customer#<customerId>   | store#<storeId>         |                |                |
| StoreCustomer | store#<storeId>         | customer#<customerId>   |                |                |
| Tag           | tag#<tagName>           | tag                     |                |                |
| TagOrder      | tag#<tagName>           | order#<orderId>         |                |                |

The article's table, ``id``/``type``, with its three indexes: ``businessIdGsi`` (``businessId``, ``type``) holds a
business's customers, stores and orders; ``customerIdGsi`` (``customerId``, ``type``) a customer's orders;
``typeGsi`` (``type``, ``id``), the table's key inverted, finds the relationship items that hold a copy of an item's
data. Order ids are minted and start with their creation time, so ``order#<orderId>`` sorts orders by when they were
placed, as the article's ``order#<epoch>`` does, and an order is read by its id alone.

A customer manages stores and a store has customers: a many-to-many relation kept, as the article keeps it, as two
items per pair, each holding the other side's data (``CustomerStore`` holds the store's name and city,
``StoreCustomer`` the customer's name). Tags are the same pattern: ``TagOrder`` holds the order's city. Each copy is
a :class:`Copy`: creating the relationship item copies from the item it points at, and a change of that item
rewrites its copies, found through ``typeGsi``.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gateway import Attribute, Collection, Copy, Declaration, Entity, Index, Item, KeyShape, Link, Model

TABLE = Index(None, "id", "type")
BY_BUSINESS = Index("businessIdGsi", "businessId", "type")
BY_CUSTOMER = Index("customerIdGsi", "customerId", "type")
BY_TYPE = Index("typeGsi", "type", "id")

STATUSES = {
    "PLACED": "Placed, not paid yet.",
    "PAID": "Paid, not shipped yet.",
    "FINISHED": "Delivered.",
    "CANCELLED": "Cancelled before delivery.",
}


def _copy(description: str) -> Attribute:
    return Attribute("S", f"{description} (a copy, kept by the gateway).", writable=False)


def _counter(what: str) -> Attribute:
    return Attribute("INT", f"How many {what}, kept exact by the writes.", writable=False)


PARTNER = Entity(
    "Business",
    {None: KeyShape.of("{businessId}", "business")},
    {
        "businessName": Attribute("S", "The partner's name.", required=True),
        "customer_count": _counter("customers the business has"),
        "store_count": _counter("stores the business has"),
        "order_count": _counter("orders the business's customers placed"),
    },
    description="A company the seller does business with.",
)
CUSTOMER = Entity(
    "Customer",
    {None: KeyShape.of("{customerId}", "customer"), "businessIdGsi": KeyShape.of("{businessId}", "customer")},
    {
        "firstName": Attribute("S", "The customer's first name.", required=True),
        "lastName": Attribute("S", "The customer's last name."),
        "order_count": _counter("orders the customer placed"),
        "store_count": _counter("stores the customer manages"),
    },
    description="A person at a business who orders from the seller.",
)
STORE = Entity(
    "Store",
    {None: KeyShape.of("{storeId}", "store"), "businessIdGsi": KeyShape.of("{businessId}", "store")},
    {
        "storeName": Attribute("S", "The store's name.", required=True),
        "city": Attribute("S", "Where the store is."),
        "customer_count": _counter("customers the store has"),
    },
    description="One of a business's stores.",
)
ORDER = Entity(
    "Order",
    {
        None: KeyShape.of("{orderId}", "order#{orderId}"),
        "businessIdGsi": KeyShape.of("{businessId}", "order#{orderId}"),
        "customerIdGsi": KeyShape.of("{customerId}", "order#{orderId}"),
    },
    {
        "status": Attribute("S", "Where the order stands.", enum=STATUSES, default="PLACED"),
        "placed": Attribute("DATE", "The day the order was placed (UTC).", on_create="today"),
        "city": Attribute("S", "Where the order is delivered.", max_length=100),
        "total": Attribute("N", "The amount charged."),
        "tag_count": _counter("tags the order has"),
    },
    description="An order a customer placed; its id starts with when.",
    mint="orderId",
)
CUSTOMER_STORE = Entity(
    "CustomerStore",
    {
        None: KeyShape.of("customer#{customerId}", "store#{storeId}"),
        "typeGsi": KeyShape.of("store#{storeId}", "customer#{customerId}"),
    },
    {"storeName": _copy("The store's name"), "city": _copy("The store's city")},
    description="A store a customer manages, with the store's data.",
)
STORE_CUSTOMER = Entity(
    "StoreCustomer",
    {
        None: KeyShape.of("store#{storeId}", "customer#{customerId}"),
        "typeGsi": KeyShape.of("customer#{customerId}", "store#{storeId}"),
    },
    {"firstName": _copy("The customer's first name"), "lastName": _copy("The customer's last name")},
    description="A customer of a store, with the customer's data.",
)
TAG = Entity(
    "Tag",
    {None: KeyShape.of("tag#{tagName}", "tag")},
    {"order_count": _counter("orders with the tag")},
    description="A label attached to orders.",
)
TAG_ORDER = Entity(
    "TagOrder",
    {
        None: KeyShape.of("tag#{tagName}", "order#{orderId}"),
        "typeGsi": KeyShape.of("order#{orderId}", "tag#{tagName}"),
    },
    {"city": _copy("The order's city")},
    description="An order that has a tag, with the order's city.",
)

ORDER_FILTERS = ("status", "placed", "city")
BUSINESS_CUSTOMERS = Collection(
    "Business.customers", PARTNER, CUSTOMER, "businessIdGsi", counter="customer_count", description="In businessIdGsi."
)
BUSINESS_STORES = Collection(
    "Business.stores", PARTNER, STORE, "businessIdGsi", counter="store_count", description="In businessIdGsi."
)
BUSINESS_ORDERS = Collection(
    "Business.orders",
    PARTNER,
    ORDER,
    "businessIdGsi",
    ascending=False,
    counter="order_count",
    description="Newest first, in businessIdGsi; filtered by status, day and city.",
    filters=ORDER_FILTERS,
)
CUSTOMER_ORDERS = Collection(
    "Customer.orders",
    CUSTOMER,
    ORDER,
    "customerIdGsi",
    ascending=False,
    counter="order_count",
    description="Newest first, in customerIdGsi; filtered by status, day and city.",
    filters=ORDER_FILTERS,
)
CUSTOMER_STORES = Collection(
    "Customer.stores", CUSTOMER, CUSTOMER_STORE, counter="store_count", description="By store id, with their data."
)
STORE_CUSTOMERS = Collection(
    "Store.customers", STORE, STORE_CUSTOMER, counter="customer_count", description="By customer id, with their data."
)
TAG_ORDERS = Collection("Tag.orders", TAG, TAG_ORDER, counter="order_count", description="By order id: oldest first.")
ORDER_TAGS = Collection(
    "Order.tags", ORDER, TAG_ORDER, "typeGsi", counter="tag_count", description="By tag name, in typeGsi."
)
# The relationship items that hold a copy of a store's or a customer's data, found through typeGsi.
STORE_COPIES = Collection("Store.managers", STORE, CUSTOMER_STORE, "typeGsi", description="Who manages the store.")
CUSTOMER_COPIES = Collection("Customer.storeLinks", CUSTOMER, STORE_CUSTOMER, "typeGsi", description="In typeGsi.")

MODEL = Model(
    table="business",
    indexes=(TABLE, BY_BUSINESS, BY_CUSTOMER, BY_TYPE),
    entities=(PARTNER, CUSTOMER, STORE, ORDER, CUSTOMER_STORE, STORE_CUSTOMER, TAG, TAG_ORDER),
    collections=(
        BUSINESS_CUSTOMERS,
        BUSINESS_STORES,
        BUSINESS_ORDERS,
        CUSTOMER_ORDERS,
        CUSTOMER_STORES,
        STORE_CUSTOMERS,
        TAG_ORDERS,
        ORDER_TAGS,
        STORE_COPIES,
        CUSTOMER_COPIES,
    ),
    links=(
        Link("Customer.business", CUSTOMER, PARTNER, "The business the customer works for."),
        Link("Store.business", STORE, PARTNER, "The business the store belongs to."),
        Link("Order.customer", ORDER, CUSTOMER, "Who placed the order."),
        Link("Order.business", ORDER, PARTNER, "The business the order was placed for."),
        Link("CustomerStore.store", CUSTOMER_STORE, STORE, "The store itself: a read of its own."),
        Link("CustomerStore.customer", CUSTOMER_STORE, CUSTOMER, "The customer who manages the store."),
        Link("StoreCustomer.customer", STORE_CUSTOMER, CUSTOMER, "The customer itself: a read of its own."),
        Link("TagOrder.order", TAG_ORDER, ORDER, "The order itself: a read of its own."),
        Link("TagOrder.tag", TAG_ORDER, TAG, "The tag."),
    ),
    copies=(
        Copy(STORE_COPIES, "storeName", "storeName"),
        Copy(STORE_COPIES, "city", "city"),
        Copy(CUSTOMER_COPIES, "firstName", "firstName"),
        Copy(CUSTOMER_COPIES, "lastName", "lastName"),
        Copy(ORDER_TAGS, "city", "city"),
    ),
)

BUSINESSES = {"b-coffee": "Bean There Coffee", "b-books": "Chapter Books"}
CUSTOMERS = {  # id: (business, first name, last name)
    "c-ann": ("b-coffee", "Ann", "Lee"),
    "c-ben": ("b-coffee", "Ben", "Ode"),
    "c-cat": ("b-books", "Cat", "Poe"),
}
STORES = {  # id: (business, name, city)
    "s-cbd": ("b-coffee", "Coffee CBD", "Melbourne"),
    "s-bondi": ("b-coffee", "Coffee Bondi", "Sydney"),
    "s-fitz": ("b-books", "Books Fitzroy", "Melbourne"),
}
MANAGES = [("c-ann", "s-cbd"), ("c-ann", "s-bondi"), ("c-ben", "s-bondi"), ("c-cat", "s-fitz")]
CITIES = ("Melbourne", "Sydney", "Brisbane")
ORDER_STATUSES = tuple(STATUSES)


def orders() -> Iterator[tuple[str, str, str, str, str, str]]:
    """30 orders: (orderId, business, customer, status, day, city), ids in the time order a mint gives."""
    customers = list(CUSTOMERS)
    for n in range(30):
        customer = customers[n % 3]
        day = f"2026-0{1 + n // 10}-{1 + n % 10:02d}"
        yield (
            f"{day.replace('-', '')}T0000{n:02d}Z-seed",
            CUSTOMERS[customer][0],
            customer,
            ORDER_STATUSES[n % 4],
            day,
            CITIES[n % 3],
        )


TAGS = {"music": [0, 4, 8, 12, 16], "office": [1, 2, 3, 4]}


def seed() -> Iterator[Item]:
    """Two businesses, three customers, three stores, who manages which (both items of each pair, with their copies),
    30 orders and two tags on some of them. The counters are set from these by ``tablegraph seed``."""
    for business_id, name in BUSINESSES.items():
        yield MODEL.item(PARTNER, {"businessId": business_id}, {"businessName": name})
    for customer_id, (business_id, first, last) in CUSTOMERS.items():
        ids = {"customerId": customer_id, "businessId": business_id}
        yield MODEL.item(CUSTOMER, ids, {"firstName": first, "lastName": last})
    for store_id, (business_id, name, city) in STORES.items():
        yield MODEL.item(STORE, {"storeId": store_id, "businessId": business_id}, {"storeName": name, "city": city})
    for customer_id, store_id in MANAGES:
        ids = {"customerId": customer_id, "storeId": store_id}
        _, name, city = STORES[store_id]
        yield MODEL.item(CUSTOMER_STORE, ids, {"storeName": name, "city": city})
        _, first, last = CUSTOMERS[customer_id]
        yield MODEL.item(STORE_CUSTOMER, ids, {"firstName": first, "lastName": last})
    listed = list(orders())
    for n, (order_id, business_id, customer_id, status, day, city) in enumerate(listed):
        ids = {"orderId": order_id, "businessId": business_id, "customerId": customer_id}
        yield MODEL.item(ORDER, ids, {"status": status, "placed": day, "city": city, "total": Decimal(10 + n)})
    for tag_name, numbers in TAGS.items():
        yield MODEL.item(TAG, {"tagName": tag_name}, {})
        for n in numbers:
            yield MODEL.item(TAG_ORDER, {"tagName": tag_name, "orderId": listed[n][0]}, {"city": listed[n][5]})


BUSINESS = Declaration(MODEL, seed=seed)
"""``tablegraph serve --model schema.business:BUSINESS``: no tenancy, so every caller reads and admins write."""
