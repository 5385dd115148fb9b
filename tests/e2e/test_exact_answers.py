"""Exact answers after faults: a retried cascade never under-reports, and a refused read reveals nothing."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gateway.config import Settings
from gateway.server.app import ACCOUNTING_HEADER
from tests.support.contract import create_table, enrol_student, tickets_of
from tests.support.faults import FaultProxy, Rule
from tests.support.gateway import Gateway
from tests.support.identity import Issuer

COURSES = 120
DELETE = (
    'mutation { deleteStudent(input: {studentId: "stu-x", cascade: true}, clientToken: "%s") { __typename '
    "... on Deleted { items { type count } } } }"
)
WHOLE = {
    "__typename": "Deleted",
    "items": [{"type": "Enrollment", "count": COURSES}, {"type": "Student", "count": 1}],
}


@pytest.fixture
def enrolled(dynamodb: Any, endpoint: str) -> Iterator[str]:
    """A student in 120 courses, with exact counters, written by boto3."""
    name = f"x-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    enrol_student(endpoint, name, COURSES)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture
def proxy(endpoint: str) -> Iterator[FaultProxy]:
    with FaultProxy(endpoint, seed=7) as running:
        yield running


@pytest.fixture
def proxied(proxy: FaultProxy, enrolled: str) -> Iterator[Gateway]:
    settings = Settings(endpoint_url=proxy.url, table=enrolled, cursor_secret="test-secret", auth_open=True)
    with Gateway(settings) as running:
        yield running


def edges(dynamodb: Any, table: str) -> int:
    answer = dynamodb.query(
        TableName=table,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :edge)",
        ExpressionAttributeValues={":pk": {"S": "STU#stu-x"}, ":edge": {"S": "ENROLL#"}},
        Select="COUNT",
        ConsistentRead=True,
    )
    count: int = answer["Count"]
    return count


def send(proxied: Gateway, query: str) -> dict[str, Any]:
    response = proxied.http.post("/graphql", json={"query": query})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _half_way(
    proxied: Gateway, proxy: FaultProxy, dynamodb: Any, enrolled: str
) -> tuple[str, threading.Thread, list[dict[str, Any]]]:
    """A cascading delete sent from a thread, each of its transactions slowed, once it has deleted some of the
    enrolments: its token, its thread, and the list its answer goes to."""
    proxy.set_rules([Rule("delay", operations=frozenset({"TransactWriteItems"}), delay=0.3)])
    token = uuid.uuid4().hex
    answers: list[dict[str, Any]] = []
    first = threading.Thread(target=lambda: answers.append(send(proxied, DELETE % token)))
    first.start()
    deadline = time.monotonic() + 30
    while edges(dynamodb, enrolled) == COURSES and time.monotonic() < deadline:
        time.sleep(0.01)
    return token, first, answers


def test_a_retry_while_the_cascade_runs_is_told_it_is_in_progress_never_a_part(
    proxied: Gateway, proxy: FaultProxy, dynamodb: Any, enrolled: str
) -> None:
    # Each transaction takes a while, so that the retry comes while the first request is half way.
    token, first, answers = _half_way(proxied, proxy, dynamodb, enrolled)
    assert 0 < edges(dynamodb, enrolled) < COURSES, "the first request was not half way"
    retried = send(proxied, DELETE % token)
    first.join(60)
    again = send(proxied, DELETE % token)
    assert retried.get("data") is None or retried["data"]["deleteStudent"] is None
    (error,) = retried["errors"]
    assert error["extensions"] == {"code": "UNAVAILABLE", "outcome": "IN_PROGRESS"}
    assert answers[0]["data"]["deleteStudent"] == WHOLE
    assert again["data"]["deleteStudent"] == WHOLE
    assert edges(dynamodb, enrolled) == 0


def test_a_retry_after_the_cascade_failed_half_way_reports_the_whole(
    proxied: Gateway, proxy: FaultProxy, dynamodb: Any, enrolled: str
) -> None:
    token, first, answers = _half_way(proxied, proxy, dynamodb, enrolled)
    # DynamoDB stops answering writes: the cascade stops half way.
    proxy.set_rules([Rule("error_before", operations=frozenset({"TransactWriteItems"}))])
    first.join(60)
    left = edges(dynamodb, enrolled)
    assert 0 < left < COURSES
    assert answers[0]["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
    proxy.set_rules([])
    retried = send(proxied, DELETE % token)
    # What the first attempt deleted is counted too.
    assert retried["data"]["deleteStudent"] == WHOLE
    assert edges(dynamodb, enrolled) == 0


def test_a_retry_after_the_first_attempt_died_half_way_reports_the_whole(
    proxied: Gateway, proxy: FaultProxy, dynamodb: Any, enrolled: str
) -> None:
    """As if the first attempt's process died: nothing released its claim, which then lapsed. Each transaction
    counted its deletes on the claim, so the retry still answers the whole."""
    token, first, _ = _half_way(proxied, proxy, dynamodb, enrolled)
    # Every write fails from now on, the claim's release included: the claim stays as a dead process leaves it.
    proxy.set_rules([Rule("error_before", operations=frozenset({"TransactWriteItems", "PutItem", "UpdateItem"}))])
    first.join(60)
    left = edges(dynamodb, enrolled)
    assert 0 < left < COURSES
    (claim,) = dynamodb.scan(
        TableName=enrolled,
        FilterExpression="begins_with(PK, :token)",
        ExpressionAttributeValues={":token": {"S": "TOKEN#"}},
        ConsistentRead=True,
    )["Items"]
    assert "released" not in claim and "result" not in claim
    dynamodb.update_item(
        TableName=enrolled,
        Key={"PK": claim["PK"], "SK": claim["SK"]},
        UpdateExpression="SET expiresAt = :past",
        ExpressionAttributeValues={":past": {"N": "1"}},
    )
    proxy.set_rules([])
    retried = send(proxied, DELETE % token)
    assert retried["data"]["deleteStudent"] == WHOLE
    assert edges(dynamodb, enrolled) == 0


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


def test_a_refused_read_costs_the_same_whether_the_item_exists_or_not(
    gateway_factory: Callable[..., Gateway], contract_table: str, issuer: Issuer
) -> None:
    other_tenant = {"organizations": ["o-empty"], "workspaces": ["ws-empty"], "students": ["stu-0149"]}
    token = issuer.token("bob", other_tenant)
    query = "query($id: ID!) { ticket(ticketId: $id) { title } }"
    with gateway_factory(contract_table, **issuer.settings()) as proxied:

        def read(ticket: str) -> dict[str, Any]:
            response = proxied.http.post(
                "/graphql",
                json={"query": query, "variables": {"id": ticket}},
                headers={"Authorization": f"Bearer {token}", ACCOUNTING_HEADER: "1"},
            )
            body: dict[str, Any] = response.json()
            return body

        anothers = read(tickets_of(2)[0])  # exists, in organization o1
        missing = read("20260101T000000Z-9999")
    assert anothers["data"] == missing["data"] == {"ticket": None}
    assert anothers["extensions"]["dynamodb"] == missing["extensions"]["dynamodb"]
