"""AWS's recurring payments design, served from a YAML declaration written from our docs alone.

An account's subscriptions and receipts share its partition; the reminder and payment jobs find subscriptions by
date in two GSIs that project a few attributes (INCLUDE). Each pattern is asked through the gateway and through the
design's own request (plain boto3); answers and calls/rounds are compared, and writes are made twice, the design's
way and the gateway's, on twin items read back with GetItem. See recurring_payments/README.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.server.declaration_file import load_file, parse
from gateway.surface.graph import build
from tests.corpus.checked import check_errors
from tests.corpus.recurring_payments import data
from tests.corpus.reference import Design, table, typed, without_gateway_bookkeeping
from tests.support.gateway import Gateway, answered, assert_pattern, fill
from tests.support.mutations import mutate

FILE = Path(__file__).parent / "recurring_payments" / "recurring_payments.yaml"
DECLARATION = load_file(FILE)
SUBSCRIPTION = "subId sku email paymentAmount nextPaymentDate"


@pytest.fixture(scope="module")
def deployed(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, Design]]:
    with table(dynamodb, "ReoccuringPayments", data.create_table) as name:
        fill(endpoint, name, data.items())
        with gateway_factory(name, declaration=DECLARATION) as gateway:
            yield gateway, Design(dynamodb, name)


def _subscription(item: dict[str, Any]) -> dict[str, Any]:
    sub, sku = item["SK"].removeprefix("SUB#").split("#SKU#")
    return {
        "subId": sub,
        "sku": sku,
        "email": item["Email"],
        "paymentAmount": float(item["PaymentAmount"]),
        "nextPaymentDate": item["NextPaymentDate"],
    }


def _by_account(design: Design, account: str, prefix: str) -> list[dict[str, Any]]:
    return design.query("PK = :pk AND begins_with(SK, :prefix)", {":pk": f"ACC#{account}", ":prefix": prefix})


# --- reads --------------------------------------------------------------------------------------------------------


def test_get_subscriptions_by_account(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    found = _by_account(design, "456", "SUB#")
    assert len(found) == 2
    expected = {"subscriptionsByAccount": {"nodes": [_subscription(one) for one in found]}}
    assert_pattern(
        gateway,
        f'{{ subscriptionsByAccount(accountId: "456") {{ nodes {{ {SUBSCRIPTION} }} }} }}',
        expected,
        (design.calls, 1),
    )


def test_a_new_subscription_is_listed_with_its_account(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    found = _by_account(design, "123", "SUB#")
    assert [one["SK"] for one in found] == ["SUB#123#SKU#999", "SUB#124#SKU#555", "SUB#125#SKU#777"]
    expected = {"subscriptionsByAccount": {"nodes": [_subscription(one) for one in found]}}
    assert_pattern(
        gateway,
        f'{{ subscriptionsByAccount(accountId: "123") {{ nodes {{ {SUBSCRIPTION} }} }} }}',
        expected,
        (design.calls, 1),
    )


def test_get_receipts_by_account(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    found = _by_account(design, "123", "REC#")
    assert len(found) == 3
    expected = {
        "receiptsByAccount": {
            "nodes": [
                {
                    "sku": one["SKU"],
                    "processedDate": one["ProcessedDate"],
                    "processedAmount": float(one["ProcessedAmount"]),
                }
                for one in found
            ]
        }
    }
    query = '{ receiptsByAccount(accountId: "123") { nodes { sku processedDate processedAmount } } }'
    assert_pattern(gateway, query, expected, (design.calls, 1))


def test_get_a_subscription(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    design.calls = 0
    item = design.get({"PK": "ACC#789", "SK": "SUB#790#SKU#999"})
    assert item is not None
    query = f'{{ accountSubscription(accountId: "789", subId: "790", sku: "999") {{ {SUBSCRIPTION} paymentDay }} }}'
    expected = {"accountSubscription": _subscription(item) | {"paymentDay": int(item["PaymentDay"])}}
    assert_pattern(gateway, query, expected, (design.calls, 1))


def _due(design: Design, index: str, key: str, day: str) -> list[dict[str, Any]]:
    return design.query(f"{key} = :day", {":day": day}, IndexName=index)


def test_get_due_reminders_by_date(deployed: tuple[Gateway, Design]) -> None:
    # GSI-1 projects SKU, Email and NextPaymentDate: what the reminder job selects is there. The new subscription,
    # due the same day, has no LastReminderDate and is not in GSI-1, as DynamoDB has it.
    gateway, design = deployed
    design.calls = 0
    found = _due(design, "GSI-1", "NextReminderDate", "2023-06-21")
    assert len(found) == 3
    expected = {
        "dueRemindersByDate": {
            "nodes": [
                {"sku": one["SKU"], "email": one["Email"], "nextPaymentDate": one["NextPaymentDate"]} for one in found
            ]
        }
    }
    query = '{ dueRemindersByDate(nextReminderDate: "2023-06-21") { nodes { sku email nextPaymentDate } } }'
    assert_pattern(gateway, query, expected, (design.calls, 1))


@pytest.mark.xfail(
    strict=True,
    reason="the projection of each index: GSI-1 projects INCLUDE (SKU, Email, NextPaymentDate); an attribute it "
    "leaves out must be read from the table, not served as null (today the list is empty altogether: see "
    "test_get_due_reminders_by_date)",
)
def test_a_due_reminder_with_what_gsi1_does_not_project(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    keys = _due(design, "GSI-1", "NextReminderDate", "2023-06-21")
    assert all("PaymentAmount" not in one for one in keys)  # the design reads the item for it
    full = [design.get({"PK": one["PK"], "SK": one["SK"]}) or {} for one in keys]
    expected = {"dueRemindersByDate": {"nodes": [{"paymentAmount": float(one["PaymentAmount"])} for one in full]}}
    got, _ = answered(gateway, '{ dueRemindersByDate(nextReminderDate: "2023-06-21") { nodes { paymentAmount } } }')
    assert got == expected


def test_get_due_payments_by_date(deployed: tuple[Gateway, Design]) -> None:
    # GSI-2 projects what the payment job needs: amount, day, SKU, email, payment details.
    gateway, design = deployed
    design.calls = 0
    found = _due(design, "GSI-2", "NextPaymentDate", "2023-06-28")
    assert len(found) == 3
    expected = {
        "duePaymentsByDate": {
            "nodes": [
                {
                    "sku": one["SKU"],
                    "paymentAmount": float(one["PaymentAmount"]),
                    "paymentDay": int(one["PaymentDay"]),
                    "paymentDetails": one["PaymentDetails"],
                }
                for one in found
            ]
        }
    }
    query = (
        '{ duePaymentsByDate(nextPaymentDate: "2023-06-28") { nodes { sku paymentAmount paymentDay paymentDetails } } }'
    )
    assert_pattern(gateway, query, expected, (design.calls, 1))


# --- writes -------------------------------------------------------------------------------------------------------


def _stored_as_theirs(design: Design, mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    """The gateway's item equals the design's twin, but for the keys and ids that tell them apart."""
    stored = without_gateway_bookkeeping(design.get({"PK": mine["PK"], "SK": mine["SK"]}))
    reference = design.get({"PK": theirs["PK"], "SK": theirs["SK"]})
    assert reference is not None
    assert stored == {**reference, **{name: mine[name] for name in ("PK", "SK", "Email") if name in mine}}


def test_create_subscription(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    theirs = data.subscription("900", "901", "999", "28", "12.99", "2023-07-28", "2023-07-21", "2023-06-28")
    mine = data.subscription("910", "911", "999", "28", "12.99", "2023-07-28", "2023-07-21", "2023-06-28")
    design.send("put_item", TableName=design.table, Item=typed(theirs))
    given = {
        "accountId": "910",
        "subId": "911",
        "sku": "999",
        "email": mine["Email"],
        "paymentDay": 28,
        "paymentAmount": 12.99,
        "nextPaymentDate": mine["NextPaymentDate"],
        "nextReminderDate": mine["NextReminderDate"],
        "lastPaymentDate": mine["LastPaymentDate"],
        "lastReminderDate": mine["LastReminderDate"],
        "paymentDetails": mine["PaymentDetails"],
        "createdDate": mine["CreatedDate"],
    }
    result, operations = mutate(gateway, "createAccountSubscription", given, "... on AccountSubscription { subId }")
    assert result == {"__typename": "AccountSubscription", "subId": "911"}
    assert operations == {"PutItem": 1}
    _stored_as_theirs(design, mine, theirs)


def test_create_receipt(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    theirs = data.receipt("920", "2023-06-28T14:15:39.247Z", "999", "12.99")
    mine = data.receipt("930", "2023-06-28T14:15:39.247Z", "999", "12.99")
    design.send("put_item", TableName=design.table, Item=typed(theirs))
    given = {
        "accountId": "930",
        "processedDate": mine["ProcessedDate"],
        "sku": "999",
        "email": mine["Email"],
        "processedAmount": 12.99,
        "ttl": 1700318200,
    }
    result, operations = mutate(gateway, "createReceipt", given, "... on Receipt { sku }")
    assert result == {"__typename": "Receipt", "sku": "999"}
    assert operations == {"PutItem": 1}
    _stored_as_theirs(design, mine, theirs)


def test_update_subscription_after_a_payment(deployed: tuple[Gateway, Design]) -> None:
    # The payment job's update: SET LastPaymentDate = now, NextPaymentDate = a month on. It moves in GSI-2.
    gateway, design = deployed
    theirs = data.subscription("940", "941", "555", "21", "5.00", "2023-06-21", "2023-06-14", "2023-05-21")
    mine = data.subscription("950", "951", "555", "21", "5.00", "2023-06-21", "2023-06-14", "2023-05-21")
    for item in (theirs, mine):
        design.dynamodb.put_item(TableName=design.table, Item=typed(item))
    paid = "2023-06-21T14:15:39.247Z"
    design.calls = 0
    design.send(
        "update_item",
        TableName=design.table,
        Key=typed({"PK": theirs["PK"], "SK": theirs["SK"]}),
        UpdateExpression="SET LastPaymentDate = :paid, NextPaymentDate = :next",
        ExpressionAttributeValues=typed({":paid": paid, ":next": "2023-07-21"}),
    )
    change = {
        "accountId": "950",
        "subId": "951",
        "sku": "555",
        "lastPaymentDate": paid,
        "nextPaymentDate": "2023-07-21",
        "expectedVersion": 0,
    }
    result, operations = mutate(
        gateway, "updateAccountSubscription", change, "... on AccountSubscription { nextPaymentDate }"
    )
    assert result == {"__typename": "AccountSubscription", "nextPaymentDate": "2023-07-21"}
    assert sum(operations.values()) == design.calls
    _stored_as_theirs(design, mine, theirs)


def test_an_entity_named_subscription_is_served_or_refused() -> None:
    # It was silently shadowed by GraphQL's root Subscription type: the model and the schema built, and none of its
    # fields could be asked. It is now refused when the file is loaded, naming its line and the fix.
    text = FILE.read_text().replace("AccountSubscription", "Subscription")
    try:
        schema = build(parse(text, "recurring_payments.yaml")).schema
    except ValueError as refused:
        assert "Subscription" in str(refused)
        return
    assert "subscriptionsByAccount" in schema.as_str()
    assert "subId" in schema.as_str().split("type Subscription ", 1)[1].split("}", 1)[0]


@pytest.mark.xfail(
    strict=True,
    reason="check agrees with the gateway's reads, and both with the design only once two features land: the new "
    "subscription without Last* dates is unrecognised (index membership by DynamoDB's rule), and GSI-1 and GSI-2 "
    "project INCLUDE, which the declaration can't say yet (projection)",
)
def test_the_filled_table_passes_check(
    deployed: tuple[Gateway, Design], endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, design = deployed
    assert check_errors(endpoint, design.table, FILE, capsys) == []
