"""Walking every connection page by page returns each member once, in order; cursors cannot be forged or moved."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.cursor import CursorCodec
from tests.conftest import Gateway
from tests.contract import COURSES, PROJECTS, STUDENTS, USERS, course_id, project_id, student_id, tickets_of, username

WALKS = [
    pytest.param(
        'workspace(workspaceId: "ws-main") { items: projects(first: $first, after: $after) { %s } }',
        [project_id(n) for n in range(PROJECTS, 0, -1)],
        "projectId",
        id="projects",
    ),
    pytest.param(
        'organization(orgName: "o1") { items: users(first: $first, after: $after) { %s } }',
        [username(n) for n in range(1, USERS + 1)],
        "username",
        id="users",
    ),
    pytest.param(
        'user(orgName: "o1", username: "user-07") { items: tickets(first: $first, after: $after) { %s } }',
        sorted(tickets_of(7), reverse=True),
        "ticketId",
        id="tickets",
    ),
    pytest.param(
        'student(studentId: "stu-0001") { items: courses(first: $first, after: $after) { %s } }',
        [course_id(n) for n in range(COURSES, 0, -1)],
        "courseId",
        id="student-courses",
    ),
    pytest.param(
        'course(courseId: "crs-0001") { items: students(first: $first, after: $after) { %s } }',
        [student_id(n) for n in range(1, STUDENTS)],
        "studentId",
        id="course-students",
    ),
]


def walk(gateway: Gateway, field: str, key: str, first: int) -> tuple[list[str], list[dict[str, Any]]]:
    query = (
        "query($first: Int, $after: String) { root: "
        + field % (f"edges {{ cursor node {{ {key} }} }} pageInfo {{ hasNextPage endCursor }}")
        + " }"
    )
    seen: list[str] = []
    costs: list[dict[str, Any]] = []
    after = None
    while True:
        body = gateway.query(query, {"first": first, "after": after})
        assert "errors" not in body, body["errors"]
        items = body["data"]["root"]["items"]
        costs.append(body["extensions"]["dynamodb"])
        seen += [edge["node"][key] for edge in items["edges"]]
        if items["edges"]:
            assert items["pageInfo"]["endCursor"] == items["edges"][-1]["cursor"]
        if not items["pageInfo"]["hasNextPage"]:
            return seen, costs
        after = items["pageInfo"]["endCursor"]


@pytest.mark.parametrize(("field", "expected", "key"), WALKS)
@pytest.mark.parametrize("first", [7, 100])
def test_walking_all_pages_loses_and_repeats_nothing(
    gateway: Gateway, field: str, expected: list[str], key: str, first: int
) -> None:
    seen, costs = walk(gateway, field, key, first)
    assert seen == expected
    assert len(costs) == max(1, -(-len(expected) // first))
    assert all(cost["rounds"] <= 2 for cost in costs)


def test_pages_of_one_item_walk_a_collection(gateway: Gateway) -> None:
    field, expected, key = WALKS[1].values
    assert walk(gateway, field, key, 1)[0] == expected


def test_default_page_size_is_twenty(gateway: Gateway) -> None:
    body = gateway.query(
        '{ workspace(workspaceId: "ws-main") { projects { nodes { projectId } pageInfo { hasNextPage } } } }'
    )
    projects = body["data"]["workspace"]["projects"]
    assert len(projects["nodes"]) == 20
    assert projects["pageInfo"]["hasNextPage"] is True


def test_empty_collections_have_no_edges_and_no_next_page(gateway: Gateway) -> None:
    body = gateway.query(
        '{ workspace(workspaceId: "ws-empty") { projects { edges { cursor } pageInfo { hasNextPage endCursor } } }'
        ' organization(orgName: "o-empty") { users { nodes { username } pageInfo { hasNextPage endCursor } } }'
        ' user(orgName: "o1", username: "user-08") { tickets { nodes { ticketId } pageInfo { hasNextPage } } }'
        ' student(studentId: "stu-0150") { courses { edges { grade } pageInfo { hasNextPage endCursor } } } }'
    )
    data = body["data"]
    assert data["workspace"]["projects"] == {"edges": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}
    assert data["organization"]["users"] == {"nodes": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}
    assert data["user"]["tickets"] == {"nodes": [], "pageInfo": {"hasNextPage": False}}
    assert data["student"]["courses"] == {"edges": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}


PROJECTS_PAGE = (
    "query($ws: ID!, $after: String) { workspace(workspaceId: $ws) { projects(first: 2, after: $after) "
    "{ pageInfo { endCursor } } } }"
)


def _end_cursor(gateway: Gateway, workspace: str) -> str:
    body = gateway.query(PROJECTS_PAGE, {"ws": workspace})
    cursor: str = body["data"]["workspace"]["projects"]["pageInfo"]["endCursor"]
    return cursor


def _assert_refused(gateway: Gateway, workspace: str, after: str) -> None:
    body = gateway.query(PROJECTS_PAGE, {"ws": workspace, "after": after})
    error = body["errors"][0]
    assert error["extensions"] == {"code": "BAD_USER_INPUT", "argument": "after"}
    assert error["path"] == ["workspace", "projects"]
    assert body["extensions"]["dynamodb"]["operations"].get("Query", 0) == 0


def test_a_tampered_cursor_is_refused_without_a_query(gateway: Gateway) -> None:
    cursor = _end_cursor(gateway, "ws-main")
    flipped = cursor[:10] + ("A" if cursor[10] != "A" else "B") + cursor[11:]
    for forged in [flipped, cursor[:-3], cursor + "AAAA", "not-a-cursor", "", "=="]:
        _assert_refused(gateway, "ws-main", forged)


def test_a_cursor_from_another_parent_is_refused(gateway: Gateway) -> None:
    _assert_refused(gateway, "ws-big", _end_cursor(gateway, "ws-main"))


def test_a_cursor_from_another_field_is_refused(gateway: Gateway) -> None:
    users = gateway.query('{ organization(orgName: "o1") { users(first: 2) { pageInfo { endCursor } } } }')
    _assert_refused(gateway, "ws-main", users["data"]["organization"]["users"]["pageInfo"]["endCursor"])


def test_a_cursor_signed_with_another_secret_is_refused(
    gateway_factory: Any, contract_table: str, gateway: Gateway
) -> None:
    with gateway_factory(contract_table, cursor_secret="another-secret") as other:
        cursor = _end_cursor(other, "ws-main")
    _assert_refused(gateway, "ws-main", cursor)


@pytest.mark.parametrize("first", [0, -1, 101])
def test_first_out_of_range_is_refused(gateway: Gateway, first: int) -> None:
    body = gateway.query(
        'query($n: Int) { workspace(workspaceId: "ws-main") { projects(first: $n) { nodes { projectId } } } }',
        {"n": first},
    )
    assert body["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT", "argument": "first"}
    assert body["errors"][0]["path"] == ["workspace", "projects"]
    assert body["extensions"]["dynamodb"]["operations"].get("Query", 0) == 0


def test_a_bad_page_size_on_a_combined_read_is_reported_at_the_connection(gateway: Gateway) -> None:
    body = gateway.query('{ organization(orgName: "o1") { orgName users(first: 0) { nodes { username } } } }')
    # The connection is non-null, so its error nulls the organization; the error names the field at fault.
    assert body["data"] == {"organization": None}
    assert body["errors"][0]["path"] == ["organization", "users"]
    assert body["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT", "argument": "first"}


@pytest.mark.parametrize(
    ("selection", "signed"),
    [
        ("nodes { projectId }", 0),
        ("nodes { projectId } pageInfo { endCursor }", 1),
        ("edges { cursor node { projectId } }", 10),
    ],
)
def test_cursors_are_signed_only_when_asked_for(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, selection: str, signed: int
) -> None:
    """Signing a cursor per edge is work most queries (nodes, hasNextPage) never use."""
    calls: list[str] = []
    real = CursorCodec.encode

    def spy(self: CursorCodec, binding: str, position: dict[str, str]) -> str:
        calls.append(binding)
        return real(self, binding, position)

    monkeypatch.setattr(CursorCodec, "encode", spy)
    body = gateway.query(f'{{ workspace(workspaceId: "ws-main") {{ projects(first: 10) {{ {selection} }} }} }}')
    projects = body["data"]["workspace"]["projects"]
    assert len(projects.get("nodes") or projects.get("edges")) == 10
    assert len(calls) == signed
