"""A table another tool created and filled to the key design is served as it is."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import boto3
import pytest

from tests.support.gateway import Gateway

ITEMS: list[dict[str, Any]] = [
    {"PK": "WS#w1", "SK": "META", "displayName": "Foreign", "region": "eu", "seatLimit": 3, "owner": {"id": 7}},
    {"PK": "WS#w1", "SK": "AUDIT#2026-01-01", "who": "someone"},
    {"PK": "WS#w1", "SK": "PROJ#2026-0001", "title": "one", "status": "active", "createdBy": "x", "tags": {"a"}},
    {"PK": "WS#w1", "SK": "PROJ#2026-0002#draft", "title": "not a project shape"},
    {"PK": "WS#w1", "SK": "PROJ#2026-0003", "title": "three"},
    {"PK": "WS#w1", "SK": "PROJ#2026-0004", "title": 4},
    {"PK": "ORG#acme", "SK": "METADATA#acme", "name": "Acme", "subscriptionLevel": "pro"},
    {"PK": "ORG#acme", "SK": "NOTE#1", "text": "sorts between the organization and its users"},
    {"PK": "ORG#acme", "SK": "USER#ann", "GSI1PK": "ORG#acme#USER#ann", "GSI1SK": "USER#ann", "name": "Ann"},
    {"PK": "ORG#acme", "SK": "USER#bob", "GSI1PK": "ORG#acme#USER#bob", "GSI1SK": "USER#bob", "name": "Bob"},
    {"PK": "TICKET#t1", "SK": "TICKET#t1", "GSI1PK": "ORG#acme#USER#ann", "GSI1SK": "TICKET#t1", "title": "T1"},
    {"PK": "STU#s1", "SK": "PROFILE", "name": "Sam", "year": "two"},
    {"PK": "STU#s1", "SK": "ENROLL#CRS#c1", "GSI1PK": "CRS#c1", "GSI1SK": "STU#s1", "grade": "A"},
    {"PK": "CRS#c1", "SK": "METADATA", "title": "Chemistry", "credits": Decimal("2.5")},
]


@pytest.fixture
def foreign(endpoint: str, fresh_table: str, gateway_factory: Callable[..., Gateway]) -> Iterator[Gateway]:
    resource: Any = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with resource.Table(fresh_table).batch_writer() as batch:
        for item in ITEMS:
            batch.put_item(Item=item)
    with gateway_factory(fresh_table) as gateway:
        yield gateway


def test_unknown_attributes_and_shapes_are_skipped_and_logged(
    foreign: Gateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    body = foreign.query(
        '{ workspace(workspaceId: "w1") { displayName seatLimit projects(first: 2) { nodes { projectId title status } '
        "pageInfo { hasNextPage } } } }"
    )
    # A title stored as a number is no title: an error at its field, not a null (it was served as null before).
    assert body["errors"] == [
        {
            "message": "Project.title holds a number 4 where S is declared",
            "locations": [{"line": 1, "column": 95}],
            "path": ["workspace", "projects", "nodes", 0, "title"],
            "extensions": {
                "code": "DATA_MISMATCH",
                "entity": "Project",
                "attribute": "title",
                "key": {"PK": "WS#w1", "SK": "PROJ#2026-0004"},
            },
        }
    ]
    workspace = body["data"]["workspace"]
    assert workspace["displayName"] == "Foreign"
    assert workspace["seatLimit"] == 3
    assert workspace["projects"]["nodes"] == [
        {"projectId": "2026-0004", "title": None, "status": None},
        {"projectId": "2026-0003", "title": "three", "status": None},
    ]
    assert workspace["projects"]["pageInfo"]["hasNextPage"] is True
    everything = foreign.query(
        '{ workspace(workspaceId: "w1") { projects { nodes { projectId } pageInfo { hasNextPage } } } }'
    )
    assert [p["projectId"] for p in everything["data"]["workspace"]["projects"]["nodes"]] == [
        "2026-0004",
        "2026-0003",
        "2026-0001",
    ]
    assert "PROJ#2026-0002#draft" in caplog.text


def test_an_unknown_item_inside_a_combined_query_does_not_shorten_the_page(foreign: Gateway) -> None:
    body = foreign.query(
        '{ organization(orgName: "acme") { orgName users(first: 1)'
        " { nodes { username name } pageInfo { hasNextPage } } } }"
    )
    organization = body["data"]["organization"]
    assert organization["users"] == {"nodes": [{"username": "ann", "name": "Ann"}], "pageInfo": {"hasNextPage": True}}


def test_links_and_edges_work_on_foreign_items(foreign: Gateway) -> None:
    body = foreign.query(
        '{ ticket(ticketId: "t1") { title user { name organization { orgName } } }'
        ' student(studentId: "s1") { name year courses { edges { grade node { title credits } } } } }'
    )
    assert body["data"]["ticket"] == {"title": "T1", "user": {"name": "Ann", "organization": {"orgName": "acme"}}}
    # A mistyped attribute, and a number that is not an integer (not squeezed into Int), are errors at their fields:
    # they were served as null before.
    assert body["data"]["student"]["year"] is None
    edge = body["data"]["student"]["courses"]["edges"][0]
    assert edge["grade"] == "A"
    assert edge["node"] == {"title": "Chemistry", "credits": None}
    assert {
        (tuple(error["path"]), error["extensions"]["code"], error["extensions"]["attribute"])
        for error in body["errors"]
    } == {
        (("student", "year"), "DATA_MISMATCH", "year"),
        (("student", "courses", "edges", 0, "node", "credits"), "DATA_MISMATCH", "credits"),
    }


def test_items_of_other_shapes_around_the_members_cost_no_query_per_item(
    endpoint: str, fresh_table: str, gateway_factory: Callable[..., Gateway]
) -> None:
    resource: Any = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with resource.Table(fresh_table).batch_writer() as batch:
        batch.put_item(Item={"PK": "ORG#big", "SK": "METADATA#big", "name": "Big"})
        for n in range(3):
            user = f"u{n}"
            batch.put_item(
                Item={"PK": "ORG#big", "SK": f"USER#{user}", "GSI1PK": f"ORG#big#USER#{user}", "GSI1SK": f"USER#{user}"}
            )
        for n in range(300):  # after the users, outside the range the combined Query reads
            batch.put_item(Item={"PK": "ORG#big", "SK": f"VIEW#{n:04d}"})
        for n in range(300):  # between the organization and its users: read, skipped, in large steps
            batch.put_item(Item={"PK": "ORG#big", "SK": f"NOTE#{n:04d}"})
    with gateway_factory(fresh_table) as gateway:
        body = gateway.query('{ organization(orgName: "big") { users(first: 5) { nodes { username } } } }')
    assert [u["username"] for u in body["data"]["organization"]["users"]["nodes"]] == ["u0", "u1", "u2"]
    assert body["extensions"]["dynamodb"]["operations"]["Query"] <= 4
