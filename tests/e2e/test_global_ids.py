"""Global ids: every object has one, unique across types, and node(id:)/nodes(ids:) read any object back by it."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.support.contract import course_id, project_id, student_id, tickets_of, username
from tests.support.gateway import Gateway

# One query per entity type, each selecting the global id and the natural keys of one object.
OBJECTS = {
    "Workspace": ('{ workspace(workspaceId: "ws-main") { id workspaceId } }', "workspace"),
    "Project": (
        f'{{ project(workspaceId: "ws-main", projectId: "{project_id(3)}") {{ id workspaceId projectId }} }}',
        "project",
    ),
    "Organization": ('{ organization(orgName: "o1") { id orgName } }', "organization"),
    "User": (f'{{ user(orgName: "o1", username: "{username(2)}") {{ id orgName username }} }}', "user"),
    "Ticket": (f'{{ ticket(ticketId: "{tickets_of(2)[0]}") {{ id ticketId orgName username }} }}', "ticket"),
    "Student": (f'{{ student(studentId: "{student_id(1)}") {{ id studentId }} }}', "student"),
    "Course": (f'{{ course(courseId: "{course_id(1)}") {{ id courseId }} }}', "course"),
    "Enrollment": (
        f'{{ enrollment(studentId: "{student_id(1)}", courseId: "{course_id(1)}") {{ id studentId courseId }} }}',
        "enrollment",
    ),
}


def _object(gateway: Gateway, type_name: str) -> dict[str, Any]:
    query, field = OBJECTS[type_name]
    found: dict[str, Any] = gateway.query(query)["data"][field]
    return found


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


@pytest.mark.parametrize("type_name", OBJECTS)
def test_node_reads_any_object_back_by_its_global_id(gateway: Gateway, type_name: str) -> None:
    expected = _object(gateway, type_name)
    keys = " ".join(name for name in expected if name != "id")
    body = gateway.query(
        f"query($id: ID!) {{ node(id: $id) {{ __typename id ... on {type_name} {{ {keys} }} }} }}",
        {"id": expected["id"]},
    )
    assert body["data"]["node"] == {"__typename": type_name, **expected}
    assert (body["extensions"]["dynamodb"]["calls"], body["extensions"]["dynamodb"]["rounds"]) == (1, 1)


def test_global_ids_are_unique_across_types_with_the_same_natural_key(gateway: Gateway) -> None:
    ids = {type_name: _object(gateway, type_name)["id"] for type_name in OBJECTS}
    assert len(set(ids.values())) == len(ids)
    # A student and a course whose natural keys were equal would still differ: the type is part of the id.
    body = gateway.query(
        "query($ids: [ID!]!) { nodes(ids: $ids) { __typename } }", {"ids": [_b64("Student#x1"), _b64("Course#x1")]}
    )
    assert body["data"] == {"nodes": [None, None]}


def test_nodes_keeps_the_order_asked_with_null_for_missing_in_one_batch(gateway: Gateway) -> None:
    wanted = [_object(gateway, name)["id"] for name in ("Ticket", "Workspace", "Course")]
    missing = _b64("Workspace#no-such-workspace")
    body = gateway.query(
        "query($ids: [ID!]!) { nodes(ids: $ids) { id __typename } }", {"ids": [wanted[0], missing, *wanted[1:]]}
    )
    assert [node and node["id"] for node in body["data"]["nodes"]] == [wanted[0], None, *wanted[1:]]
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}


def test_an_object_reached_by_global_id_reads_ahead_like_its_root_field(gateway: Gateway) -> None:
    organization = _object(gateway, "Organization")["id"]
    body = gateway.query(
        "query($id: ID!) { node(id: $id) { ... on Organization { users(first: 3) { nodes { username } } } } }",
        {"id": organization},
    )
    assert [user["username"] for user in body["data"]["node"]["users"]["nodes"]] == [username(n) for n in (1, 2, 3)]
    # The organization and its first users come back from one Query, as with organization(orgName:).
    assert body["extensions"]["dynamodb"]["operations"] == {"Query": 1}


@pytest.mark.parametrize(
    "bad",
    [
        "not base64!",
        _b64("Nope#x"),
        _b64("Workspace"),
        _b64("Workspace#a#b"),
        _b64("Project#ws-main"),
        _b64("Workspace#"),
        _b64("MutationToken#abc"),
        _b64("Workspace#a\x00b"),
        _b64("Workspace#ws-main") + "==",
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
    ],
)
def test_a_malformed_or_forged_global_id_is_bad_user_input_and_reads_nothing(gateway: Gateway, bad: str) -> None:
    for query, variables in (
        ("query($id: ID!) { node(id: $id) { id } }", {"id": bad}),
        ("query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": [bad]}),
    ):
        body = gateway.query(query, variables)
        assert [error["extensions"]["code"] for error in body["errors"]] == ["BAD_USER_INPUT"], body
        assert body["extensions"]["dynamodb"]["calls"] == 0
