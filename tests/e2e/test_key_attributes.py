"""An attribute that is itself an index's key (``{LastPaymentDate}``): written once per update, read back by date."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gateway import Attribute, Collection, Entity, Index, KeyShape, Model
from gateway.design.declaration import Declaration
from tests.support.gateway import Gateway
from tests.support.mutations import mutate

TABLE = Index(None, "PK", "SK")
BY_PAYMENT = Index("GSI2", "NextPaymentDate", "LastPaymentDate")
ACCOUNT = Entity("Account", {None: KeyShape.of("ACC#{accountId}", "ACCOUNT")}, partition=True)
PAYMENT_DAY = Entity("PaymentDay", {None: KeyShape.of("PAYMENTS#{NextPaymentDate}", "DAY")}, partition=True)
# As AWS's recurring payments design keeps them: the dates are attributes of their own, and GSI-2's keys.
PLAN = Entity(
    "Plan",
    {
        None: KeyShape.of("ACC#{accountId}", "SUB#{subId}"),
        "GSI2": KeyShape.of("{NextPaymentDate}", "{LastPaymentDate}", sparse=True),
    },
    {"Email": "S", "LastPaymentDate": Attribute("S")},
)
PAYMENTS = Declaration(
    Model(
        "payments",
        (TABLE, BY_PAYMENT),
        (ACCOUNT, PAYMENT_DAY, PLAN),
        (
            Collection("Account.plans", ACCOUNT, PLAN),
            Collection("PaymentDay.duePlans", PAYMENT_DAY, PLAN, index="GSI2", root="duePlans"),
        ),
    )
)


@pytest.fixture(scope="module")
def payments(served: Callable[..., Gateway]) -> Gateway:
    return served(PAYMENTS)


def stored(dynamodb: Any, gateway: Gateway, sk: str) -> dict[str, Any]:
    key = {"PK": {"S": "ACC#a1"}, "SK": {"S": sk}}
    item: dict[str, Any] = dynamodb.get_item(TableName=gateway.table, Key=key, ConsistentRead=True)["Item"]
    return item


def test_an_update_of_an_attribute_that_is_an_index_key_writes_it_once(payments: Gateway, dynamodb: Any) -> None:
    created = {"accountId": "a1", "subId": "s1", "email": "a@example.com", "nextPaymentDate": "2026-12-01"}
    result, _ = mutate(payments, "createPlan", {**created, "lastPaymentDate": "2026-11-01"}, "... on Plan { subId }")
    assert result == {"__typename": "Plan", "subId": "s1"}
    # DynamoDB refused the update that named LastPaymentDate twice ("Two document paths overlap"): INTERNAL.
    changed = {"accountId": "a1", "subId": "s1", "lastPaymentDate": "2026-12-01", "expectedVersion": 1}
    result, _ = mutate(payments, "updatePlan", changed, "... on Plan { lastPaymentDate }")
    assert result == {"__typename": "Plan", "lastPaymentDate": "2026-12-01"}
    item = stored(dynamodb, payments, "SUB#s1")
    assert item["LastPaymentDate"] == {"S": "2026-12-01"}
    assert item["NextPaymentDate"] == {"S": "2026-12-01"}
    due = payments.query('{ duePlans(nextPaymentDate: "2026-12-01") { nodes { subId lastPaymentDate } } }')
    assert due["data"]["duePlans"]["nodes"] == [{"subId": "s1", "lastPaymentDate": "2026-12-01"}]


def test_an_attribute_named_like_an_index_key_written_from_another_template_is_refused() -> None:
    other = Entity(
        "Other",
        {None: KeyShape.of("O#{otherId}", "O"), "GSI2": KeyShape.of("N#{day}", "{LastPaymentDate}", sparse=True)},
        {"NextPaymentDate": "S", "LastPaymentDate": "S"},
    )
    with pytest.raises(ValueError, match="'NextPaymentDate' is a declared attribute and the key attribute of 'GSI2'"):
        Model("t", (TABLE, BY_PAYMENT), (other,))
