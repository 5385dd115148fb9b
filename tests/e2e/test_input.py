"""Bad input is refused with BAD_USER_INPUT before any DynamoDB request; missing items are null."""

from __future__ import annotations

import pytest

from tests.support.gateway import Gateway

BAD_IDS = ["", "a#b", "WS#ws-main", "tab\there", "new\nline", "nul\x00", "\x85", "x" * 129]


@pytest.mark.parametrize("bad", BAD_IDS)
@pytest.mark.parametrize(
    ("query", "argument"),
    [
        ("query($v: ID!) { workspace(workspaceId: $v) { displayName } }", "workspaceId"),
        ('query($v: ID!) { project(workspaceId: $v, projectId: "2026-0001") { title } }', "workspaceId"),
        ('query($v: ID!) { user(orgName: "o1", username: $v) { name } }', "username"),
        ("query($v: ID!) { ticket(ticketId: $v) { title } }", "ticketId"),
        ('query($v: ID!) { students(studentIds: ["stu-0001", $v]) { name } }', "studentIds"),
        ('query($v: ID!) { enrollment(studentId: "stu-0001", courseId: $v) { grade } }', "courseId"),
    ],
)
def test_malformed_ids_are_refused_before_any_request(gateway: Gateway, query: str, argument: str, bad: str) -> None:
    body = gateway.query(query, {"v": bad})
    assert body["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT", "argument": argument}
    assert "Traceback" not in body["errors"][0]["message"]
    assert body["extensions"]["dynamodb"]["calls"] == 0


def test_an_id_of_the_longest_allowed_length_is_read(gateway: Gateway) -> None:
    body = gateway.query("query($v: ID!) { workspace(workspaceId: $v) { displayName } }", {"v": "é" * 128})
    assert body["data"] == {"workspace": None}
    assert "errors" not in body


def test_missing_items_are_null(gateway: Gateway) -> None:
    body = gateway.query(
        '{ workspace(workspaceId: "nope") { displayName projects { nodes { projectId } } }'
        ' project(workspaceId: "ws-main", projectId: "2099-0001") { title workspace { displayName } }'
        ' organization(orgName: "nope") { orgName users { nodes { username } } }'
        ' user(orgName: "o1", username: "nope") { name tickets { nodes { ticketId } } }'
        ' ticket(ticketId: "nope") { title }'
        ' student(studentId: "nope") { name courses { nodes { courseId } } }'
        ' course(courseId: "nope") { title students { nodes { studentId } } }'
        ' enrollment(studentId: "stu-0001", courseId: "nope") { grade } }'
    )
    assert "errors" not in body
    assert set(body["data"].values()) == {None}
    assert body["extensions"]["dynamodb"]["rounds"] == 1


def test_too_many_batch_ids_are_refused(gateway: Gateway) -> None:
    body = gateway.query("query($ids: [ID!]!) { courses(courseIds: $ids) { courseId } }", {"ids": ["c"] * 1001})
    assert body["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT", "argument": "courseIds"}
    assert body["extensions"]["dynamodb"]["calls"] == 0


def test_graphql_errors_carry_a_code(gateway: Gateway) -> None:
    syntax = gateway.http.post("/graphql", json={"query": "{ workspace(workspaceId: "}).json()
    assert syntax["errors"][0]["extensions"]["code"] == "GRAPHQL_PARSE_FAILED"
    unknown = gateway.http.post("/graphql", json={"query": "{ nothing }"}).json()
    assert unknown["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    variables = gateway.http.post(
        "/graphql",
        json={
            "query": 'query($n: Int) { workspace(workspaceId: "x") { projects(first: $n) { nodes { projectId } } } }',
            "variables": {"n": "many"},
        },
    ).json()
    assert variables["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    missing = gateway.http.post(
        "/graphql", json={"query": "query($id: ID!) { workspace(workspaceId: $id) { region } }"}
    ).json()
    assert missing["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    unused = gateway.http.post("/graphql", json={"query": "query($x: Int) { __typename }"}).json()
    assert unused["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
