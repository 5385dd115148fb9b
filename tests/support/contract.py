"""The contract data set, written with plain boto3 and literal key strings (not the gateway's key code).

Sizes are chosen to cross every boundary the canonical operations care about: more items than a page, more
keys than one BatchGetItem, a collection over 1 MB, and empty collections.
"""

from __future__ import annotations

from typing import Any

import boto3

from gateway.dynamo.store import table_definition
from schema.model import MODEL

PROJECTS = 30  # in ws-main and ws-big
USERS = 12  # in org o1
STUDENTS = 150  # stu-0001 .. stu-0150; stu-0150 has no enrolments
COURSES = 120  # crs-0001 .. crs-0120; stu-0001 takes them all, crs-0001 has students 1..149
BIG_NOTES = 50_000  # bytes of an unknown attribute on each ws-big project: 30 of them pass 1 MB


def student_id(n: int) -> str:
    return f"stu-{n:04d}"


def course_id(n: int) -> str:
    return f"crs-{n:04d}"


def project_id(n: int) -> str:
    return f"2026-{n:04d}"


def username(n: int) -> str:
    return f"user-{n:02d}"


def tickets_of(user: int) -> list[str]:
    """user-08 has none; the others have up to 7, ids sorted by time."""
    return [f"202601{user:02d}T{hour:02d}0000Z-{user:02d}{hour:02d}" for hour in range(user % 8)]


def create_table(client: Any, name: str) -> None:
    client.create_table(TableName=name, **table_definition(MODEL))


def contract_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for ws, name in [("ws-main", "Main"), ("ws-empty", "Empty"), ("ws-big", "Big")]:
        items.append({"PK": f"WS#{ws}", "SK": "META", "displayName": name, "region": "eu-west-1", "seatLimit": 25})
    for n in range(1, PROJECTS + 1):
        project = {"title": f"Project {n}", "status": "active", "createdBy": "alice"}
        items.append({"PK": "WS#ws-main", "SK": f"PROJ#{project_id(n)}", **project})
        items.append({"PK": "WS#ws-big", "SK": f"PROJ#{project_id(n)}", **project, "notes": "n" * BIG_NOTES})
    for org, name in [("o1", "Org One"), ("o-empty", "Empty Org")]:
        items.append({"PK": f"ORG#{org}", "SK": f"METADATA#{org}", "name": name, "subscriptionLevel": "pro"})
    for n in range(1, USERS + 1):
        user = username(n)
        items.append(
            {
                "PK": "ORG#o1",
                "SK": f"USER#{user}",
                "GSI1PK": f"ORG#o1#USER#{user}",
                "GSI1SK": f"USER#{user}",
                "username": user,
                "name": f"User {n}",
                "role": "member",
            }
        )
        for ticket in tickets_of(n):
            items.append(
                {
                    "PK": f"TICKET#{ticket}",
                    "SK": f"TICKET#{ticket}",
                    "GSI1PK": f"ORG#o1#USER#{user}",
                    "GSI1SK": f"TICKET#{ticket}",
                    "title": f"Ticket {ticket}",
                    "status": "open",
                }
            )
    for n in range(1, STUDENTS + 1):
        items.append(
            {"PK": f"STU#{student_id(n)}", "SK": "PROFILE", "name": f"Student {n}", "year": 2, "major": "physics"}
        )
    for n in range(1, COURSES + 1):
        items.append(
            {"PK": f"CRS#{course_id(n)}", "SK": "METADATA", "title": f"Course {n}", "credits": 5, "term": "2026-fall"}
        )
    edges = {(1, n) for n in range(1, COURSES + 1)} | {(n, 1) for n in range(1, STUDENTS)}
    for s, c in sorted(edges):
        items.append(
            {
                "PK": f"STU#{student_id(s)}",
                "SK": f"ENROLL#CRS#{course_id(c)}",
                "GSI1PK": f"CRS#{course_id(c)}",
                "GSI1SK": f"STU#{student_id(s)}",
                "enrolledOn": "2026-09-01",
                "grade": f"G{s}-{c}",
            }
        )
    return items


def load_contract_data(client: Any, table: str) -> None:
    import boto3

    resource = boto3.resource(
        "dynamodb",
        endpoint_url=client.meta.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    with resource.Table(table).batch_writer() as batch:
        for item in contract_items():
            batch.put_item(Item=item)


def enrol_student(endpoint: str, table: str, courses: int) -> None:
    """A student ``stu-x`` in ``courses`` courses of its own (each has only this student), with exact counters,
    written with plain boto3 in the key shapes of DESIGN.md."""
    resource = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )
    with resource.Table(table).batch_writer() as batch:
        batch.put_item(Item={"PK": "STU#stu-x", "SK": "PROFILE", "name": "X", "courseCount": courses, "version": 1})
        for n in range(courses):
            course = f"crs-{n:03d}"
            batch.put_item(Item={"PK": f"CRS#{course}", "SK": "METADATA", "title": "C", "enrolledCount": 1})
            batch.put_item(
                Item={
                    "PK": "STU#stu-x",
                    "SK": f"ENROLL#CRS#{course}",
                    "GSI1PK": f"CRS#{course}",
                    "GSI1SK": "STU#stu-x",
                    "enrolledOn": "2026-09-01",
                }
            )
