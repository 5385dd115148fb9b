"""Clients writing at the same time over real HTTP: DynamoDB's conditions keep edges and counters exact."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.gateway import Gateway
from tests.support.mutations import post_all

ENROLL = "mutation($input: EnrollInput!) { enroll(input: $input) { __typename ... on ConflictError { reason } } }"
UPDATE_COURSE = (
    "mutation($input: UpdateCourseInput!) { updateCourse(input: $input) { __typename "
    "... on Course { title version } ... on ConflictError { reason currentVersion } } }"
)


@pytest.fixture(scope="module")
def writable(served: Callable[..., Gateway]) -> Gateway:
    return served()


def create(gateway: Gateway, mutation: str, data: dict[str, Any]) -> None:
    name = mutation[0].upper() + mutation[1:]
    body = gateway.query(f"mutation($i: {name}Input!) {{ {mutation}(input: $i) {{ __typename }} }}", {"i": data})
    assert body["data"][mutation]["__typename"] in {"Student", "Course"}


def counter(dynamodb: Any, table: str, pk: str, sk: str, attribute: str) -> int:
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": pk}, "SK": {"S": sk}}, ConsistentRead=True)["Item"]
    return int(item[attribute]["N"])


def edges(dynamodb: Any, table: str, student: str) -> list[str]:
    found = dynamodb.query(
        TableName=table,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :e)",
        ExpressionAttributeValues={":pk": {"S": f"STU#{student}"}, ":e": {"S": "ENROLL#"}},
        ConsistentRead=True,
    )
    return [item["SK"]["S"] for item in found["Items"]]


def test_fifty_concurrent_enrolments_of_one_pair_leave_one_edge_and_a_count_of_one(
    writable: Gateway, dynamodb: Any
) -> None:
    create(writable, "createStudent", {"studentId": "solo", "name": "S"})
    create(writable, "createCourse", {"courseId": "popular", "title": "C"})
    bodies = post_all(writable, [(ENROLL, {"input": {"studentId": "solo", "courseId": "popular"}})] * 50)
    outcomes = Counter(
        body["data"]["enroll"]["__typename"] + ":" + body["data"]["enroll"].get("reason", "") for body in bodies
    )
    assert outcomes == {"Enrollment:": 1, "ConflictError:ALREADY_EXISTS": 49}
    assert edges(dynamodb, writable.table, "solo") == ["ENROLL#CRS#popular"]
    assert counter(dynamodb, writable.table, "STU#solo", "PROFILE", "courseCount") == 1
    assert counter(dynamodb, writable.table, "CRS#popular", "METADATA", "enrolledCount") == 1


def test_two_hundred_concurrent_enrolments_leave_exact_counters(writable: Gateway, dynamodb: Any) -> None:
    students = [f"many-s{n:02d}" for n in range(10)]
    courses = [f"many-c{n:02d}" for n in range(20)]
    for student in students:
        create(writable, "createStudent", {"studentId": student, "name": "S"})
    for course in courses:
        create(writable, "createCourse", {"courseId": course, "title": "C"})
    pairs = [{"input": {"studentId": s, "courseId": c}} for s in students for c in courses]
    bodies = post_all(writable, [(ENROLL, pair) for pair in pairs])
    assert all(body["data"]["enroll"]["__typename"] == "Enrollment" for body in bodies), bodies[:3]
    for student in students:
        assert len(edges(dynamodb, writable.table, student)) == len(courses)
        assert counter(dynamodb, writable.table, f"STU#{student}", "PROFILE", "courseCount") == len(courses)
    for course in courses:
        assert counter(dynamodb, writable.table, f"CRS#{course}", "METADATA", "enrolledCount") == len(students)


def test_concurrent_updates_from_the_same_version_let_exactly_one_win(writable: Gateway, dynamodb: Any) -> None:
    create(writable, "createCourse", {"courseId": "contested", "title": "Start"})
    requests = [
        (UPDATE_COURSE, {"input": {"courseId": "contested", "expectedVersion": 1, "title": f"Title {n}"}})
        for n in range(20)
    ]
    results = [body["data"]["updateCourse"] for body in post_all(writable, requests)]
    winners = [result for result in results if result["__typename"] == "Course"]
    losers = [result for result in results if result["__typename"] == "ConflictError"]
    assert len(winners) == 1 and len(losers) == 19
    assert winners[0]["version"] == 2
    assert all(
        loser == {"__typename": "ConflictError", "reason": "VERSION_MISMATCH", "currentVersion": 2} for loser in losers
    )
    item = dynamodb.get_item(TableName=writable.table, Key={"PK": {"S": "CRS#contested"}, "SK": {"S": "METADATA"}})[
        "Item"
    ]
    assert (item["title"]["S"], item["version"]["N"]) == (winners[0]["title"], "2")
