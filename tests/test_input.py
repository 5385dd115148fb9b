"""Bad input is refused with BAD_USER_INPUT before any DynamoDB request; missing items are null."""

from __future__ import annotations

import pytest

from tests.conftest import Gateway

BAD_IDS = ["", "a#b", "WS#ws-main", "tab\there", "new\nline", "nul\x00", "\x85", "x" * 129]


@pytest.mark.parametrize("bad", BAD_IDS)
@pytest.mark.parametrize(
    ("query", "argument"),
    [
        ("query($v: ID!) { workspace(id: $v) { displayName } }", "id"),
        ('query($v: ID!) { project(workspaceId: $v, id: "2026-0001") { title } }', "workspaceId"),
        ('query($v: ID!) { user(organization: "o1", username: $v) { name } }', "username"),
        ("query($v: ID!) { ticket(id: $v) { title } }", "id"),
        ('query($v: ID!) { students(ids: ["stu-0001", $v]) { name } }', "ids"),
        ('query($v: ID!) { enrollment(studentId: "stu-0001", courseId: $v) { grade } }', "courseId"),
    ],
)
def test_malformed_ids_are_refused_before_any_request(gateway: Gateway, query: str, argument: str, bad: str) -> None:
    body = gateway.query(query, {"v": bad})
    assert body["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT", "argument": argument}
    assert "Traceback" not in body["errors"][0]["message"]
    assert body["extensions"]["dynamodb"]["calls"] == 0


def test_an_id_of_the_longest_allowed_length_is_read(gateway: Gateway) -> None:
    body = gateway.query("query($v: ID!) { workspace(id: $v) { displayName } }", {"v": "é" * 128})
    assert body["data"] == {"workspace": None}
    assert "errors" not in body


def test_missing_items_are_null(gateway: Gateway) -> None:
    body = gateway.query(
        '{ workspace(id: "nope") { displayName projects { nodes { id } } }'
        ' project(workspaceId: "ws-main", id: "2099-0001") { title workspace { displayName } }'
        ' organization(name: "nope") { name users { nodes { username } } }'
        ' user(organization: "o1", username: "nope") { name tickets { nodes { id } } }'
        ' ticket(id: "nope") { title }'
        ' student(id: "nope") { name courses { nodes { id } } }'
        ' course(id: "nope") { title students { nodes { id } } }'
        ' enrollment(studentId: "stu-0001", courseId: "nope") { grade } }'
    )
    assert "errors" not in body
    assert set(body["data"].values()) == {None}
    assert body["extensions"]["dynamodb"]["rounds"] == 1


def test_too_many_batch_ids_are_refused(gateway: Gateway) -> None:
    body = gateway.query("query($ids: [ID!]!) { courses(ids: $ids) { id } }", {"ids": ["c"] * 1001})
    assert body["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT", "argument": "ids"}
    assert body["extensions"]["dynamodb"]["calls"] == 0


def test_graphql_errors_carry_a_code(gateway: Gateway) -> None:
    syntax = gateway.http.post("/graphql", json={"query": "{ workspace(id: "}).json()
    assert syntax["errors"][0]["extensions"]["code"] == "GRAPHQL_PARSE_FAILED"
    unknown = gateway.http.post("/graphql", json={"query": "{ nothing }"}).json()
    assert unknown["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    variables = gateway.http.post(
        "/graphql",
        json={
            "query": 'query($n: Int) { workspace(id: "x") { projects(first: $n) { nodes { id } } } }',
            "variables": {"n": "many"},
        },
    ).json()
    assert variables["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    missing = gateway.http.post("/graphql", json={"query": "query($id: ID!) { workspace(id: $id) { region } }"}).json()
    assert missing["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    unused = gateway.http.post("/graphql", json={"query": "query($x: Int) { __typename }"}).json()
    assert unused["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
