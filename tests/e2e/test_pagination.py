"""Walking every connection page by page returns each member once, in order; cursors cannot be read, forged or
moved."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from gateway.errors import BadUserInput
from gateway.execution.cursors import CursorCodec
from tests.support.contract import (
    COURSES,
    PROJECTS,
    STUDENTS,
    USERS,
    course_id,
    project_id,
    student_id,
    tickets_of,
    username,
)
from tests.support.gateway import Gateway

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


def walk_back(gateway: Gateway, field: str, key: str, last: int) -> tuple[list[str], list[dict[str, Any]]]:
    """The collection read from its end, page by page back to its start with startCursor as before."""
    field = field.replace("first: $first, after: $after", "last: $last, before: $before")
    query = (
        "query($last: Int, $before: String) { root: "
        + field % (f"edges {{ cursor node {{ {key} }} }} pageInfo {{ hasPreviousPage hasNextPage startCursor }}")
        + " }"
    )
    seen: list[str] = []
    costs: list[dict[str, Any]] = []
    before = None
    while True:
        body = gateway.query(query, {"last": last, "before": before})
        assert "errors" not in body, body["errors"]
        items = body["data"]["root"]["items"]
        costs.append(body["extensions"]["dynamodb"])
        seen = [edge["node"][key] for edge in items["edges"]] + seen
        assert items["pageInfo"]["hasNextPage"] is (before is not None)
        if items["edges"]:
            assert items["pageInfo"]["startCursor"] == items["edges"][0]["cursor"]
        if not items["pageInfo"]["hasPreviousPage"]:
            return seen, costs
        before = items["pageInfo"]["startCursor"]


@pytest.mark.parametrize(("field", "expected", "key"), WALKS)
@pytest.mark.parametrize("last", [1, 7, 100])
def test_walking_back_from_the_end_loses_and_repeats_nothing(
    gateway: Gateway, field: str, expected: list[str], key: str, last: int
) -> None:
    seen, costs = walk_back(gateway, field, key, last)
    assert seen == expected
    assert len(costs) == max(1, -(-len(expected) // last))
    # A backward page is one Query, like a forward one: the parent and each page, never a second read of a page.
    assert all(cost["operations"].get("Query", 0) <= 2 and cost["rounds"] <= 2 for cost in costs)
    assert all("Scan" not in cost["operations"] for cost in costs)


@pytest.mark.parametrize(("field", "expected", "key"), WALKS)
def test_any_cursor_reads_on_after_it_and_back_before_it(
    gateway: Gateway, field: str, expected: list[str], key: str
) -> None:
    root, connection = field.split(" { items: ")
    name = connection.split("(")[0]
    selection = f"{{ nodes {{ {key} }} }}"
    query = (
        f"query($first: Int, $after: String, $last: Int, $before: String) {{ root: {root} {{ "
        f"items: {name}(first: $first, after: $after) {selection} back: {name}(last: $last, before: $before) "
        f"{selection} }} }}"
    )
    edges = _edges(gateway, field, key)
    for cursor, own_id in edges[1::3]:
        at = expected.index(own_id)
        body = gateway.query(query, {"first": 4, "after": cursor, "last": 4, "before": cursor})
        root = body["data"]["root"]
        assert [node[key] for node in root["items"]["nodes"]] == expected[at + 1 : at + 5]
        assert [node[key] for node in root["back"]["nodes"]] == expected[max(0, at - 4) : at]


@pytest.mark.parametrize(
    ("arguments", "variables", "argument"),
    [
        ("first: 3, last: 3", {}, "first"),
        ("first: $n, last: 3", {"n": 20}, "first"),
        ("first: 3, before: $c", {}, "first"),
        ("after: $c, last: 3", {}, "after"),
        ("after: $c, before: $c", {}, "after"),
        ("last: 0", {}, "last"),
        ("last: 101", {}, "last"),
    ],
)
def test_paging_both_ways_at_once_or_out_of_range_is_refused(
    gateway: Gateway, arguments: str, variables: dict[str, Any], argument: str
) -> None:
    declared = {"$n": "$n: Int", "$c": "$c: String"}
    used = ", ".join(declaration for name, declaration in declared.items() if name in arguments)
    cursor = _end_cursor(gateway, "ws-main")
    body = gateway.query(
        f'query{f"({used})" if used else ""} {{ workspace(workspaceId: "ws-main") {{ workspaceId '
        f"projects({arguments}) {{ nodes {{ projectId }} }} }} }}",
        {"c": cursor, **variables} if "$c" in arguments else variables,
    )
    assert body["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT", "argument": argument}
    assert body["errors"][0]["path"] == ["workspace", "projects"]


def test_first_left_to_its_default_does_not_stop_last(gateway: Gateway) -> None:
    """``first`` defaults to 20 in the SDL; a variable without a value or null leaves it unset, as omitting it does."""
    expected = [project_id(n) for n in range(PROJECTS, 0, -1)]
    with_variable = (
        'query($n: Int) { workspace(workspaceId: "ws-main") { projects(first: $n, last: 3) { nodes { projectId } } } }'
    )
    for query, variables in [
        ('{ workspace(workspaceId: "ws-main") { projects(last: 3) { nodes { projectId } } } }', {}),
        (with_variable, {}),
        (with_variable, {"n": None}),
    ]:
        body = gateway.query(query, variables)
        assert "errors" not in body, body
        assert [node["projectId"] for node in body["data"]["workspace"]["projects"]["nodes"]] == expected[-3:]


def test_before_alone_reads_back_the_default_page_size(gateway: Gateway) -> None:
    expected = [project_id(n) for n in range(PROJECTS, 0, -1)]
    last = gateway.query(
        '{ workspace(workspaceId: "ws-main") { projects(last: 1) { edges { cursor node { projectId } } } } }'
    )["data"]["workspace"]["projects"]["edges"][0]
    cursor, at = last["cursor"], expected.index(last["node"]["projectId"])
    assert at > 20
    body = gateway.query(
        'query($c: String) { workspace(workspaceId: "ws-main") { projects(before: $c) '
        "{ nodes { projectId } pageInfo { hasPreviousPage hasNextPage } } } }",
        {"c": cursor},
    )
    projects = body["data"]["workspace"]["projects"]
    assert [node["projectId"] for node in projects["nodes"]] == expected[at - 20 : at]
    assert projects["pageInfo"] == {"hasPreviousPage": True, "hasNextPage": True}


def test_a_foreign_cursor_as_before_is_refused_naming_before(gateway: Gateway) -> None:
    cursor = _end_cursor(gateway, "ws-big")
    body = gateway.query(
        'query($c: String) { workspace(workspaceId: "ws-main") '
        "{ projects(last: 2, before: $c) { nodes { projectId } } } }",
        {"c": cursor},
    )
    assert body["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT", "argument": "before"}
    assert body["extensions"]["dynamodb"]["operations"].get("Query", 0) == 0


def test_a_page_from_the_end_is_one_query_read_backwards_and_explained_so(gateway: Gateway) -> None:
    query = '{ organization(orgName: "o1") { name users(last: 2) { nodes { username } } } }'
    response = gateway.http.post("/graphql", json={"query": query}, headers={"X-Tablegraph-Explain": "1"})
    explained = response.json()["extensions"]["explain"]
    queries = [one for one in explained["requests"] if one["operation"] == "Query"]
    # The organization sorts at the head of its partition: a page from the end cannot bring it along.
    assert [one["scanIndexForward"] for one in queries] == [False]
    body = gateway.query(query)
    assert [node["username"] for node in body["data"]["organization"]["users"]["nodes"]] == [
        username(USERS - 1),
        username(USERS),
    ]
    cost = body["extensions"]["dynamodb"]
    assert cost["operations"] == {"Query": 1, "BatchGetItem": 1}
    assert (explained["calls"], explained["rounds"]) == (cost["calls"], cost["rounds"]) == (2, 1)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param("last: 3", [project_id(3), project_id(2), project_id(1)], id="last"),
        pytest.param("first: 3, order: ASCENDING", [project_id(1), project_id(2), project_id(3)], id="flipped"),
    ],
)
def test_a_page_read_up_from_the_parent_comes_with_it_in_one_query(
    gateway: Gateway, arguments: str, expected: list[str]
) -> None:
    # A workspace's item ("META") sorts just below its projects ("PROJ#…"), which are declared newest first: a page
    # from the end, or in the other order, reads up from the workspace, so both come from one Query.
    query = (
        '{ workspace(workspaceId: "ws-main") { displayName projects(' + arguments + ") { nodes { projectId }"
        " pageInfo { hasNextPage hasPreviousPage } } } }"
    )
    response = gateway.http.post("/graphql", json={"query": query}, headers={"X-Tablegraph-Explain": "1"})
    explained = response.json()["extensions"]["explain"]
    [request] = explained["requests"]
    assert request["operation"] == "Query" and request["scanIndexForward"] is True, request
    body = gateway.query(query)
    workspace = body["data"]["workspace"]
    assert workspace["displayName"] is not None
    assert [node["projectId"] for node in workspace["projects"]["nodes"]] == expected
    backward = arguments.startswith("last")
    assert workspace["projects"]["pageInfo"] == {"hasNextPage": not backward, "hasPreviousPage": backward}
    cost = body["extensions"]["dynamodb"]
    assert cost["operations"] == {"Query": 1}
    assert (explained["calls"], explained["rounds"]) == (cost["calls"], cost["rounds"]) == (1, 1)


def test_a_page_read_up_from_the_parent_of_a_missing_workspace_is_null(gateway: Gateway) -> None:
    body = gateway.query('{ workspace(workspaceId: "ws-none") { projects(last: 2) { nodes { projectId } } } }')
    assert body["data"] == {"workspace": None}
    assert body["extensions"]["dynamodb"]["calls"] == 1


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


# --- what a cursor shows: nothing, in few characters --------------------------------------------------------------

TAG = 16
"""AES-SIV's synthetic IV, the whole of a cursor's overhead."""
KEY_PREFIXES = ["WS#", "PROJ#", "ORG#", "USER#", "TICKET#", "STU#", "CRS#", "ENROLL#", "META", "PROFILE"]
ATTRIBUTES = ['"PK"', '"SK"', "GSI1"]


def _raw(cursor: str) -> bytes:
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))


def _edges(gateway: Gateway, field: str, key: str, after: str | None = None) -> list[tuple[str, str]]:
    """(cursor, the node's own id) for a page of ten."""
    query = "query($first: Int, $after: String) { root: " + field % f"edges {{ cursor node {{ {key} }} }}" + " }"
    body = gateway.query(query, {"first": 10, "after": after})
    return [(edge["cursor"], edge["node"][key]) for edge in body["data"]["root"]["items"]["edges"]]


def _windows(text: str, size: int = 4) -> set[bytes]:
    data = text.encode()
    return {data[i : i + size] for i in range(max(1, len(data) - size + 1))}


@pytest.mark.parametrize(("field", "expected", "key"), WALKS)
def test_a_cursor_shows_no_key_name_key_layout_or_id(
    gateway: Gateway, field: str, expected: list[str], key: str
) -> None:
    parent = field.split('"')[-2]  # the parent's id, from the root field's last argument
    for cursor, own_id in _edges(gateway, field, key):
        raw = _raw(cursor)
        # Any four bytes in a row of what the position is made of would show through an encoding that only hides.
        shown = set().union(*(_windows(text) for text in [own_id, parent, *KEY_PREFIXES, *ATTRIBUTES]))
        assert not [window for window in shown if window in raw], cursor


@pytest.mark.parametrize(("field", "expected", "key"), WALKS)
def test_a_cursor_is_its_tag_and_little_more_than_the_members_own_id(
    gateway: Gateway, field: str, expected: list[str], key: str
) -> None:
    """The position's partition is the parent's, its sort key starts with the page's prefix, and an index key that
    repeats a table key is written once: what is left is the member's own id and a byte or two per attribute."""
    # A roster member's table sort key (ENROLL#CRS#<courseId>) does not start with the roster's prefix (STU#).
    slack = 24 if key == "studentId" else 5
    for cursor, own_id in _edges(gateway, field, key):
        assert len(_raw(cursor)) <= TAG + len(own_id) + slack, cursor


def test_the_same_position_gives_the_same_cursor_and_each_position_its_own(gateway: Gateway) -> None:
    field, _, key = WALKS[2].values
    first, again = _edges(gateway, field, key), _edges(gateway, field, key)
    assert first == again
    assert len({cursor for cursor, _ in first}) == len(first) > 1


BINDING = "Workspace.projects\x00WS#ws-main\x00PROJ#"
NAMES = ["PK", "SK"]
POSITION = {"PK": "WS#ws-main", "SK": "PROJ#2026-0042"}


def _refused(codec: CursorCodec, cursor: str, binding: str = BINDING, names: list[str] = NAMES) -> bool:
    try:
        codec.decode(binding, cursor, names)
    except BadUserInput as error:
        assert error.extensions == {"code": "BAD_USER_INPUT", "argument": "after"}
        return True
    return False


def test_the_attribute_names_are_not_in_the_cursor() -> None:
    codec = CursorCodec("s")
    assert codec.encode(BINDING, POSITION) == codec.encode(BINDING, {"pk": "WS#ws-main", "sk": "PROJ#2026-0042"})
    assert codec.decode(BINDING, codec.encode(BINDING, POSITION), ["pk", "sk"]) == {
        "pk": "WS#ws-main",
        "sk": "PROJ#2026-0042",
    }


def test_every_altered_or_cut_cursor_is_refused() -> None:
    codec = CursorCodec("s")
    cursor = codec.encode(BINDING, POSITION)
    raw = _raw(cursor)
    for bit in range(len(raw) * 8):
        flipped = bytearray(raw)
        flipped[bit // 8] ^= 1 << (bit % 8)
        assert _refused(codec, base64.urlsafe_b64encode(bytes(flipped)).rstrip(b"=").decode()), bit
    for end in range(len(cursor)):
        assert _refused(codec, cursor[:end]), end
    for longer in [cursor + "A", cursor + "AAAA", cursor + "=", cursor + "==", "A" + cursor]:
        assert _refused(codec, longer)


def test_a_cursor_in_any_other_spelling_is_refused() -> None:
    """The base64 decoder would skip characters outside its alphabet; the codec takes only the text it wrote."""
    codec = CursorCodec("s")
    cursor = codec.encode(BINDING, POSITION)
    for spelling in [
        cursor[:5] + "." + cursor[5:],
        cursor[:5] + " " + cursor[5:],
        cursor[:5] + "\n" + cursor[5:],
        cursor.replace("-", "+").replace("_", "/"),
        cursor[:5] + "é" + cursor[5:],
        cursor[:5] + "\ud800" + cursor[5:],
        "x" * 10_000,
    ]:
        if spelling != cursor:
            assert _refused(codec, spelling), spelling


def test_a_cursor_opens_only_with_its_secret_its_binding_and_as_many_names() -> None:
    codec = CursorCodec("s")
    cursor = codec.encode(BINDING, POSITION)
    assert codec.decode(BINDING, cursor, NAMES) == POSITION
    assert _refused(CursorCodec("s2"), cursor)
    for binding in [
        "Workspace.projects\x00WS#ws-big\x00PROJ#",  # another parent
        "Organization.users\x00WS#ws-main\x00PROJ#",  # another field
        "Workspace.projects\x00WS#ws-main\x00PROJ#2026",  # another level of the sort key
    ]:
        assert _refused(codec, cursor, binding)
    assert _refused(codec, cursor, names=["PK", "SK", "GSI1PK", "GSI1SK"])
    assert _refused(codec, cursor, names=["PK"])


@pytest.mark.parametrize(
    "position",
    [
        {"PK": "WS#ws-main", "SK": "PROJ#2026-0042"},
        {"PK": "WS#ws-main", "SK": "PROJ#"},
        {"PK": "PROJ#x", "SK": "WS#ws-main", "GSI1PK": "PROJ#x", "GSI1SK": "Workspace.projects"},
        {"PK": "WS#é\U0001f600", "SK": "PROJ#\x00\x07#x"},
        {"PK": "WS#\ud800", "SK": "PROJ#x\udfff"},  # not valid Unicode: still the same value back
        {"PK": "W" * 2048, "SK": "PROJ#" + "s" * 1019},
        {"PK": "a", "SK": "a", "GSI1PK": "a", "GSI1SK": "a"},
    ],
)
def test_any_position_comes_back_as_it_went_in(position: dict[str, str]) -> None:
    codec = CursorCodec("s")
    assert codec.decode(BINDING, codec.encode(BINDING, position), list(position)) == position
    for binding in ["", "Workspace.projects", "a\x00b\x00c\x00d\x00e\x00f\x00g\x00h\x00PROJ#"]:
        assert codec.decode(binding, codec.encode(binding, position), list(position)) == position
