"""A cascade that stops half way leaves nothing orphaned, and running it again finishes the job exactly."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from gateway.design.model import Item
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.requests import WriteOp
from gateway.dynamo.store import Store
from gateway.errors import Unavailable
from tests.support.contract import create_table, enrol_student
from tests.support.gateway import Gateway

COURSES = 120
DELETE_STUDENT = (
    'mutation { deleteStudent(input: {studentId: "stu-x", cascade: true}) { __typename '
    "... on Deleted { items { type count } } } }"
)


@pytest.fixture
def enrolled(dynamodb: Any, endpoint: str) -> Iterator[str]:
    """A student in 120 courses (each course has only this student), with exact counters, written by boto3."""
    name = f"k-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    enrol_student(endpoint, name, COURSES)
    yield name
    dynamodb.delete_table(TableName=name)


def state(dynamodb: Any, table: str) -> tuple[list[str], int | None, dict[str, int]]:
    """The student's enrolment edges, its courseCount, and every course's enrolledCount."""
    items: list[dict[str, Any]] = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items += page["Items"]
    edges = sorted(i["SK"]["S"] for i in items if i["SK"]["S"].startswith("ENROLL#"))
    profile = [i for i in items if i["SK"]["S"] == "PROFILE"]
    count = int(profile[0]["courseCount"]["N"]) if profile else None
    courses = {i["PK"]["S"]: int(i["enrolledCount"]["N"]) for i in items if i["SK"]["S"] == "METADATA"}
    return edges, count, courses


def test_an_interrupted_cascade_is_exact_so_far_and_its_retry_completes_it(
    gateway_factory: Callable[..., Gateway], dynamodb: Any, enrolled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with gateway_factory(enrolled) as gateway:
        store: Store = gateway.app.state.store
        real_write = store.write
        transactions = 0

        async def cut_after_one_batch(ops: Sequence[WriteOp], ledger: Ledger) -> Item | None:
            nonlocal transactions
            if len(ops) > 1:
                transactions += 1
                if transactions == 2:
                    raise Unavailable("DynamoDB could not be reached")
            return await real_write(ops, ledger)

        monkeypatch.setattr(store, "write", cut_after_one_batch)
        body = gateway.query(DELETE_STUDENT)
        assert body["errors"][0]["extensions"]["code"] == "UNAVAILABLE"

        edges, count, courses = state(dynamodb, enrolled)
        # The first batch (49 edges with their counters) went through as a whole; nothing else changed.
        assert len(edges) == COURSES - 49
        assert count == len(edges)
        remaining = {edge.removeprefix("ENROLL#") for edge in edges}
        assert courses == {course: int(course in remaining) for course in courses}

        monkeypatch.setattr(store, "write", real_write)
        body = gateway.query(DELETE_STUDENT)
        assert body["data"]["deleteStudent"] == {
            "__typename": "Deleted",
            "items": [{"type": "Enrollment", "count": COURSES - 49}, {"type": "Student", "count": 1}],
        }
        assert body["extensions"]["dynamodb"]["operations"] == {"DeleteItem": 2, "Query": 1, "TransactWriteItems": 2}

    edges, count, courses = state(dynamodb, enrolled)
    assert (edges, count) == ([], None)
    assert set(courses.values()) == {0} and len(courses) == COURSES


def test_a_cascade_skips_edges_to_courses_that_do_not_exist(
    gateway_factory: Callable[..., Gateway], dynamodb: Any, enrolled: str
) -> None:
    for n in range(0, COURSES, 2):
        dynamodb.delete_item(TableName=enrolled, Key={"PK": {"S": f"CRS#crs-{n:03d}"}, "SK": {"S": "METADATA"}})
    with gateway_factory(enrolled) as gateway:
        body = gateway.query(DELETE_STUDENT)
    assert body["data"]["deleteStudent"]["items"] == [
        {"type": "Enrollment", "count": COURSES},
        {"type": "Student", "count": 1},
    ]
    edges, count, courses = state(dynamodb, enrolled)
    assert (edges, count) == ([], None)
    # No counter item was made up for the missing courses.
    assert len(courses) == COURSES // 2 and set(courses.values()) == {0}
