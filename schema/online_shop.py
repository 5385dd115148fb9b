"""AWS's Online Shop (docs/online-shop.md), declared as its authors spelled the table: ``PK``/``SK``, two sparse GSIs
keyed ``GSI1-PK``/``GSI1-SK`` and ``GSI2-PK``/``GSI2-SK``, an ``EntityType`` on every item, numbers kept as text and
details in maps.

Its ids are numbers written as strings (``12345``) and its stamps ``YYYY-MM-DDTHH:MM:SS``. An order item's
``orderedAt`` and an invoice's ``invoicedAt`` are kept only in index sort keys (``GSI1-SK`` is the bare stamp), so
they are read from the keys: ids of the item, not attributes. An order has no item of its own: its partition
``o#<orderId>`` holds its lines, shipments, shipment items, invoice and payments, and ``Order`` is declared as that
partition; ``details`` lists all of them from one Query of it, as a union. Invoices and shipments are also found
by their own ids alone, through ``GSI1`` (the lookups).
"""

from __future__ import annotations

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Link, Lookup, Model
from gateway.design.model import Shape

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1-PK", "GSI1-SK")
GSI2 = Index("GSI2", "GSI2-PK", "GSI2-SK")

NUMBER = Attribute("N", "A number, stored as text.", text=True)
STAMP = Attribute("S", "When, as YYYY-MM-DDTHH:MM:SS.")
ADDRESS = Shape(
    "Address",
    {"Country": "S", "County": "S", "City": "S", "Street": "S", "Number": "S", "ZipCode": "S"},
    "A postal address.",
)
PRODUCT_DETAIL = Shape("ProductDetail", {"Name": "S", "Description": "S"}, "What a product is.")
PAYMENT_ENTRY = Shape(
    "InvoicePayment",
    {"Type": "S", "Amount": "N", "Data": "S"},
    "One payment as the invoice lists it.",
)
INVOICE_DETAIL = Shape(
    "InvoiceDetail",
    {"Payments": Attribute("L", "How the invoice was paid.", shape=PAYMENT_ENTRY)},
    "What an invoice holds.",
)


def _entity_type(value: str) -> tuple[str, str]:
    return ("EntityType", value)


CUSTOMER = Entity(
    "Customer",
    {None: KeyShape.of("c#{customerId}", "c#{customerId}")},
    {"Email": Attribute("S", "Where to write to."), "Name": Attribute("S", "The customer's name.")},
    "Someone who orders.",
    discriminator=_entity_type("customer"),
)
PRODUCT = Entity(
    "Product",
    {None: KeyShape.of("p#{productId}", "p#{productId}")},
    {"Detail": Attribute("M", "Its name and description.", shape=PRODUCT_DETAIL), "Price": NUMBER},
    "Something the shop sells.",
    discriminator=_entity_type("product"),
)
WAREHOUSE = Entity(
    "Warehouse",
    {None: KeyShape.of("w#{warehouseId}", "w#{warehouseId}")},
    {"Address": Attribute("M", "Where it is.", shape=ADDRESS)},
    "Where products are kept.",
    discriminator=_entity_type("warehouse"),
)
WAREHOUSE_ITEM = Entity(
    "WarehouseItem",
    {
        None: KeyShape.of("p#{productId}", "w#{warehouseId}"),
        "GSI2": KeyShape.of("w#{warehouseId}", "p#{productId}"),
    },
    {"Quantity": NUMBER},
    "A product's stock in one warehouse.",
    discriminator=_entity_type("warehouseItem"),
)
ORDER_ITEM = Entity(
    "OrderItem",
    {
        None: KeyShape.of("o#{orderId}", "p#{productId}"),
        "GSI1": KeyShape.of("p#{productId}", "{orderedAt}"),
        "GSI2": KeyShape.of("c#{customerId}", "p#{orderedAt}"),
    },
    {"Quantity": NUMBER, "Price": NUMBER},
    "One product of an order.",
    discriminator=_entity_type("orderItem"),
)
SHIPMENT = Entity(
    "Shipment",
    {
        None: KeyShape.of("o#{orderId}", "sh#{shipmentId}"),
        "GSI1": KeyShape.of("sh#{shipmentId}", "sh#{shipmentId}"),
        "GSI2": KeyShape.of("w#{warehouseId}", "sh#{shipmentId}"),
    },
    {
        "Address": Attribute("M", "Where it goes.", shape=ADDRESS),
        "Type": Attribute("S", "How it travels (Express)."),
        "Date": STAMP,
    },
    "Part of an order, sent from one warehouse.",
    discriminator=_entity_type("shipment"),
)
SHIPMENT_ITEM = Entity(
    "ShipmentItem",
    {
        None: KeyShape.of("o#{orderId}", "shp#{shipmentItemId}"),
        "GSI1": KeyShape.of("sh#{shipmentId}", "p#{productId}"),
    },
    {"Quantity": NUMBER},
    "One product of a shipment.",
    discriminator=_entity_type("shipmentItem"),
)
INVOICE = Entity(
    "Invoice",
    {
        None: KeyShape.of("o#{orderId}", "i#{invoiceId}"),
        "GSI1": KeyShape.of("i#{invoiceId}", "i#{invoiceId}"),
        "GSI2": KeyShape.of("c#{customerId}", "i#{invoicedAt}"),
    },
    {
        "Amount": NUMBER,
        "Date": STAMP,
        "Detail": Attribute("M", "Its payments.", shape=INVOICE_DETAIL),
    },
    "What an order costs, and how it was paid.",
    discriminator=_entity_type("invoice"),
)
PAYMENT = Entity(
    "Payment",
    {
        None: KeyShape.of("o#{orderId}", "pmn#{paymentId}"),
        "GSI1": KeyShape.of("i#{invoiceId}", "pmn#{paymentId}"),
    },
    {"Type": Attribute("S", "How it was paid."), "Amount": NUMBER, "Date": STAMP},
    "One payment of an invoice.",
    discriminator=_entity_type("payment"),
)

ORDER = Entity(
    "Order",
    {None: KeyShape.of("o#{orderId}", "o#{orderId}")},
    description="An order: the partition its lines, shipments, shipment items, invoice and payments share. It has no"
    " item of its own, so it is never read: it exists whenever an orderId is given.",
    partition=True,
)

ORDER_ITEMS = Collection("Order.items", ORDER, ORDER_ITEM, description="Its lines, by product id.")
ORDER_SHIPMENTS = Collection("Order.shipments", ORDER, SHIPMENT, description="Its shipments, by shipment id.")
ORDER_INVOICES = Collection("Order.invoices", ORDER, INVOICE, description="Its invoice: one at most, none before.")
ORDER_SHIPMENT_ITEMS = Collection(
    "Order.shipmentItems", ORDER, SHIPMENT_ITEM, description="What its shipments hold, by shipment item id."
)
ORDER_PAYMENTS = Collection("Order.payments", ORDER, PAYMENT, description="How its invoice was paid, by payment id.")
ORDER_DETAILS = Collection(
    "Order.details",
    ORDER,
    (ORDER_ITEM, INVOICE, PAYMENT, SHIPMENT, SHIPMENT_ITEM),
    description="All of it (pattern 5): its lines, invoice, payments, shipments and shipment items, in sort-key"
    " order, from one Query of its partition.",
)
PRODUCT_INVENTORY = Collection(
    "Product.inventory", PRODUCT, WAREHOUSE_ITEM, description="Its stock in each warehouse, by warehouse id."
)
PRODUCT_ORDERS = Collection(
    "Product.orders",
    PRODUCT,
    ORDER_ITEM,
    "GSI1",
    range="orderedAt",
    description="The order lines that hold it, oldest first.",
    root="productOrders",
)
WAREHOUSE_INVENTORY = Collection(
    "Warehouse.inventory",
    WAREHOUSE,
    WAREHOUSE_ITEM,
    "GSI2",
    description="What it keeps, by product id.",
    root="warehouseInventory",
)
WAREHOUSE_SHIPMENTS = Collection(
    "Warehouse.shipments",
    WAREHOUSE,
    SHIPMENT,
    "GSI2",
    description="What it sent, by shipment id.",
    root="warehouseShipments",
)
CUSTOMER_INVOICES = Collection(
    "Customer.invoices",
    CUSTOMER,
    INVOICE,
    "GSI2",
    range="invoicedAt",
    description="Its invoices, oldest first.",
    root="customerInvoices",
)
CUSTOMER_PRODUCTS = Collection(
    "Customer.orderedProducts",
    CUSTOMER,
    ORDER_ITEM,
    "GSI2",
    range="orderedAt",
    description="What it ordered, oldest first.",
    root="customerOrderedProducts",
)
SHIPMENT_ITEMS = Collection(
    "Shipment.items", SHIPMENT, SHIPMENT_ITEM, "GSI1", ascending=False, description="What it holds."
)
INVOICE_PAYMENTS = Collection(
    "Invoice.payments", INVOICE, PAYMENT, "GSI1", description="The payments of the invoice, as items of their own."
)

MODEL = Model(
    "OnlineShop",
    (TABLE, GSI1, GSI2),
    (CUSTOMER, PRODUCT, WAREHOUSE, WAREHOUSE_ITEM, ORDER, ORDER_ITEM, SHIPMENT, SHIPMENT_ITEM, INVOICE, PAYMENT),
    collections=(
        ORDER_ITEMS,
        ORDER_SHIPMENTS,
        ORDER_INVOICES,
        ORDER_SHIPMENT_ITEMS,
        ORDER_PAYMENTS,
        ORDER_DETAILS,
        PRODUCT_INVENTORY,
        PRODUCT_ORDERS,
        WAREHOUSE_INVENTORY,
        WAREHOUSE_SHIPMENTS,
        CUSTOMER_INVOICES,
        CUSTOMER_PRODUCTS,
        SHIPMENT_ITEMS,
        INVOICE_PAYMENTS,
    ),
    links=(
        Link("WarehouseItem.product", WAREHOUSE_ITEM, PRODUCT),
        Link("WarehouseItem.warehouse", WAREHOUSE_ITEM, WAREHOUSE),
        Link("OrderItem.order", ORDER_ITEM, ORDER),
        Link("Shipment.order", SHIPMENT, ORDER),
        Link("Invoice.order", INVOICE, ORDER),
        Link("OrderItem.product", ORDER_ITEM, PRODUCT),
        Link("OrderItem.customer", ORDER_ITEM, CUSTOMER),
        Link("Shipment.warehouse", SHIPMENT, WAREHOUSE),
        Link("ShipmentItem.product", SHIPMENT_ITEM, PRODUCT),
        Link("ShipmentItem.shipment", SHIPMENT_ITEM, SHIPMENT),
        Link("Invoice.customer", INVOICE, CUSTOMER),
        Link("Payment.invoice", PAYMENT, INVOICE),
    ),
    lookups=(
        Lookup("invoiceById", INVOICE, "GSI1", "An invoice by its id alone, from GSI1; null if none."),
        Lookup("shipmentById", SHIPMENT, "GSI1", "A shipment by its id alone, from GSI1; null if none."),
    ),
)
SHOP = Declaration(MODEL)
