"""The recurring payments table as its model (RecurringPaymentsSchema.json) creates it, and our own items.

Subscriptions and receipts share an account's partition. Both GSIs are keyed by dates the payment job reads by
(``NextReminderDate``/``LastReminderDate``, ``NextPaymentDate``/``LastPaymentDate``) and project a few attributes
(INCLUDE). Amounts and the payment day are text, as the model's samples hold them; ``TTL`` is epoch seconds.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

GSI1_INCLUDES = ("SK", "PK", "SKU", "Email", "NextPaymentDate")
GSI2_INCLUDES = ("PK", "SK", "Email", "PaymentDay", "PaymentAmount", "SKU", "PaymentDetails")


def create_table(dynamodb: Any, name: str) -> None:
    def index(name: str, pk: str, sk: str, includes: tuple[str, ...]) -> dict[str, Any]:
        # DynamoDB projects the table's and the index's keys anyway: the model's INCLUDE list repeats PK and SK.
        extra = [attribute for attribute in includes if attribute not in ("PK", "SK")]
        return {
            "IndexName": name,
            "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": extra},
        }

    keys = ("PK", "SK", "NextReminderDate", "LastReminderDate", "NextPaymentDate", "LastPaymentDate")
    dynamodb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key in keys],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            index("GSI-1", "NextReminderDate", "LastReminderDate", GSI1_INCLUDES),
            index("GSI-2", "NextPaymentDate", "LastPaymentDate", GSI2_INCLUDES),
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def subscription(
    account: str, sub: str, sku: str, day: str, amount: str, next_payment: str, next_reminder: str, last: str | None
) -> dict[str, Any]:
    """A subscription; ``last`` is when the last payment and reminder ran: a new one has run neither yet."""
    item: dict[str, Any] = {
        "PK": f"ACC#{account}",
        "SK": f"SUB#{sub}#SKU#{sku}",
        "Email": f"{account}@example.com",
        "PaymentDay": day,
        "PaymentAmount": amount,
        "NextPaymentDate": next_payment,
        "NextReminderDate": next_reminder,
        "SKU": sku,
        "PaymentDetails": {"default-card": "1234123412341234", "default-address": "12 Bridge Street"},
        "CreatedDate": "2023-01-18T09:41:25.856Z",
    }
    if last is not None:
        item["LastPaymentDate"] = f"{last}T14:15:39.247Z"
        item["LastReminderDate"] = f"{last}T08:00:00.000Z"
    return item


def receipt(account: str, processed: str, sku: str, amount: str) -> dict[str, Any]:
    return {
        "PK": f"ACC#{account}",
        "SK": f"REC#{processed}#SKU#{sku}",
        "Email": f"{account}@example.com",
        "SKU": sku,
        "ProcessedDate": processed,
        "ProcessedAmount": amount,
        "TTL": Decimal(1700318200),
    }


SUBSCRIPTIONS = (
    # account, sub, sku, payment day, amount, next payment, next reminder, last run
    ("123", "123", "999", "28", "12.99", "2023-06-28", "2023-06-21", "2023-05-28"),
    ("123", "124", "555", "21", "5.00", "2023-06-21", "2023-06-14", "2023-05-21"),
    ("123", "125", "777", "28", "30.00", "2023-06-28", "2023-06-21", None),  # new: no payment, no reminder yet
    ("456", "456", "999", "28", "12.99", "2023-06-28", "2023-06-21", "2023-05-28"),
    ("456", "457", "111", "1", "1.99", "2023-07-01", "2023-06-24", "2023-06-01"),
    ("789", "789", "555", "21", "5.00", "2023-06-21", "2023-06-14", "2023-05-21"),
    ("789", "790", "999", "28", "12.99", "2023-06-28", "2023-06-21", "2023-05-28"),
)
RECEIPTS = (
    ("123", "2023-04-28T14:15:39.247Z", "999", "12.99"),
    ("123", "2023-05-21T14:15:39.247Z", "555", "5.00"),
    ("123", "2023-05-28T14:15:39.247Z", "999", "12.99"),
    ("456", "2023-05-28T14:15:39.247Z", "999", "12.99"),
    ("456", "2023-06-01T14:15:39.247Z", "111", "1.99"),
    ("789", "2023-05-21T14:15:39.247Z", "555", "5.00"),
)


def items() -> list[dict[str, Any]]:
    return [subscription(*one) for one in SUBSCRIPTIONS] + [receipt(*one) for one in RECEIPTS]
