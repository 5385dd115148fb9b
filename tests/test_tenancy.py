"""Tenancy: a caller reads and writes only the partitions its token grants, by every path, checked on the wire.

Tenant A holds organization o1, workspace ws-main and student stu-0001; tenant B holds o-empty, ws-empty and
stu-0149 (enrolled in crs-0001 only). Every test that B runs asserts what B got back and what reached DynamoDB.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from gateway.design.tenancy import Tenancy
from gateway.errors import Forbidden
from gateway.execution.guard import OPEN, Guard, Principal
from gateway.writes import building
from schema.model import MODEL, TENANCY, TICKET, USER
from tests.conftest import Gateway
from tests.contract import tickets_of
from tests.identity import Issuer

A = {"organizations": ["o1"], "workspaces": ["ws-main"], "students": ["stu-0001"]}
B = {"organizations": ["o-empty"], "workspaces": ["ws-empty"], "students": ["stu-0149"]}
A_PARTITIONS = ("ORG#o1", "WS#ws-main", "STU#stu-0001")
A_TICKET = tickets_of(2)[0]
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}


class Wire:
    """Every DynamoDB request a gateway sends, as (operation, body)."""

    def __init__(self, gateway: Gateway) -> None:
        self.requests: list[tuple[str, str]] = []
        gateway.app.state.store.on_send(self._record)

    def _record(self, operation: str, headers: Mapping[str, str], body: bytes) -> None:
        self.requests.append((operation, body.decode()))

    def mentions(self, *partitions: str) -> list[tuple[str, str]]:
        return [(op, body) for op, body in self.requests if any(f'"{p}' in body for p in partitions)]


class Caller:
    def __init__(self, gateway: Gateway, wire: Wire, token: str) -> None:
        self._gateway, self.wire, self._token = gateway, wire, token

    def ask(self, query: str, **variables: Any) -> dict[str, Any]:
        self.wire.requests.clear()
        response = self._gateway.http.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {self._token}", "Accept": "application/graphql-response+json"},
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    @property
    def operations(self) -> list[str]:
        return [op for op, _ in self.wire.requests]


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


@pytest.fixture(scope="module")
def served(
    gateway_factory: Callable[..., Gateway], contract_table: str, issuer: Issuer
) -> Iterator[tuple[Gateway, Wire]]:
    with gateway_factory(contract_table, **issuer.settings()) as gateway:
        yield gateway, Wire(gateway)


@pytest.fixture(scope="module")
def tenant_a(served: tuple[Gateway, Wire], issuer: Issuer) -> Caller:
    return Caller(*served, issuer.token("alice", A))


@pytest.fixture(scope="module")
def tenant_b(served: tuple[Gateway, Wire], issuer: Issuer) -> Caller:
    return Caller(*served, issuer.token("bob", B))


@pytest.fixture(scope="module")
def admin(served: tuple[Gateway, Wire], issuer: Issuer) -> Caller:
    return Caller(*served, issuer.token("root", {"roles": ["admin"]}))


def codes(body: dict[str, Any]) -> list[str]:
    return [error["extensions"]["code"] for error in body.get("errors", [])]


ROOTS = {
    "workspace": '{ workspace(workspaceId: "ws-main") { displayName projects { nodes { projectId } } } }',
    "project": '{ project(workspaceId: "ws-main", projectId: "2026-0001") { title workspace { displayName } } }',
    "organization": '{ organization(orgName: "o1") { orgName users { nodes { username } } } }',
    "user": (
        '{ user(orgName: "o1", username: "user-02") { name tickets { nodes { ticketId } } organization { orgName } } }'
    ),
    "student": '{ student(studentId: "stu-0001") { name courses { edges { grade node { title } } } } }',
    "enrollment": '{ enrollment(studentId: "stu-0001", courseId: "crs-0001") { grade course { title } } }',
}


@pytest.mark.parametrize("field", ROOTS)
def test_another_tenants_root_fields_are_forbidden_and_never_read(tenant_b: Caller, field: str) -> None:
    body = tenant_b.ask(ROOTS[field])
    assert body["data"] == {field: None}
    assert codes(body) == ["FORBIDDEN"]
    assert body["errors"][0]["path"] == [field]
    assert tenant_b.operations == []


@pytest.mark.parametrize("field", ROOTS)
def test_the_tenant_itself_reads_them(tenant_a: Caller, field: str) -> None:
    body = tenant_a.ask(ROOTS[field])
    assert "errors" not in body
    assert body["data"][field] is not None


@pytest.mark.parametrize("field", ROOTS)
def test_global_ids_of_another_tenants_objects_are_forbidden_and_never_read(
    tenant_a: Caller, tenant_b: Caller, field: str
) -> None:
    # The global id of A's object, as A's own answer gave it: B presents it to node(id:) and nodes(ids:).
    global_id = tenant_a.ask(_with_id(ROOTS[field]))["data"][field]["id"]
    body = tenant_b.ask("query($id: ID!) { node(id: $id) { id } }", id=global_id)
    assert (body["data"], codes(body)) == ({"node": None}, ["FORBIDDEN"])
    assert tenant_b.operations == []
    body = tenant_b.ask("query($ids: [ID!]!) { nodes(ids: $ids) { id } }", ids=[global_id])
    assert codes(body) == ["FORBIDDEN"]
    assert tenant_b.operations == []


def _with_id(query: str) -> str:
    """The root query selecting the root object's global id too."""
    head, _, rest = query.partition(") {")
    return f"{head}) {{ id{rest}"


def test_a_ticket_by_global_id_is_hidden_from_another_tenant_as_if_missing(tenant_a: Caller, tenant_b: Caller) -> None:
    global_id = tenant_a.ask(f'{{ ticket(ticketId: "{A_TICKET}") {{ id }} }}')["data"]["ticket"]["id"]
    assert tenant_a.ask("query($id: ID!) { node(id: $id) { id } }", id=global_id)["data"] == {"node": {"id": global_id}}
    body = tenant_b.ask("query($id: ID!) { node(id: $id) { ... on Ticket { title } } }", id=global_id)
    assert body == {"data": {"node": None}}


def test_a_batch_with_one_foreign_id_is_forbidden_whole_before_any_read(tenant_b: Caller) -> None:
    body = tenant_b.ask("query($ids: [ID!]!) { students(studentIds: $ids) { name } }", ids=["stu-0149", "stu-0001"])
    assert codes(body) == ["FORBIDDEN"]
    assert tenant_b.operations == []
    assert tenant_b.ask('{ students(studentIds: ["stu-0149"]) { name } }')["data"] == {
        "students": [{"name": "Student 149"}]
    }


def test_the_course_catalog_is_shared_but_a_roster_needs_the_admin_role(tenant_b: Caller, admin: Caller) -> None:
    body = tenant_b.ask(
        '{ student(studentId: "stu-0149") { name courses { nodes {'
        " courseId title students(first: 5) { nodes { name } } } } } }"
    )
    assert codes(body) == ["FORBIDDEN"]
    assert body["errors"][0]["path"][-1] == "students"
    assert {op for op, _ in tenant_b.wire.mentions("CRS#")} == {"BatchGetItem"}
    assert not tenant_b.wire.mentions(*A_PARTITIONS)
    assert tenant_b.ask('{ courses(courseIds: ["crs-0001", "crs-0002"]) { title } }')["data"]["courses"][1] == {
        "title": "Course 2"
    }
    roster = admin.ask('{ course(courseId: "crs-0001") { students(first: 3) { nodes { studentId } } } }')
    assert roster["data"]["course"]["students"]["nodes"][0] == {"studentId": "stu-0001"}


def test_a_ticket_read_by_id_is_hidden_from_another_tenant_as_if_missing(tenant_a: Caller, tenant_b: Caller) -> None:
    query = "query($id: ID!) { ticket(ticketId: $id) { title user { name organization { orgName } } } }"
    body = tenant_b.ask(query, id=A_TICKET)
    assert body == {"data": {"ticket": None}}
    assert tenant_b.operations == ["BatchGetItem"]
    assert not tenant_b.wire.mentions(*A_PARTITIONS)
    assert tenant_a.ask(query, id=A_TICKET)["data"]["ticket"]["user"]["name"] == "User 2"


def test_a_cursor_replayed_by_another_tenant_reads_nothing_of_its_issuer(tenant_a: Caller, tenant_b: Caller) -> None:
    page = tenant_a.ask('{ workspace(workspaceId: "ws-main") { projects(first: 2) { pageInfo { endCursor } } } }')
    cursor = page["data"]["workspace"]["projects"]["pageInfo"]["endCursor"]
    on_its_field = tenant_b.ask(
        (
            'query($c: String) { workspace(workspaceId: "ws-main") {'
            " projects(first: 2, after: $c) { nodes { projectId } } } }"
        ),
        c=cursor,
    )
    assert codes(on_its_field) == ["FORBIDDEN"]
    assert tenant_b.operations == []
    on_own_field = tenant_b.ask(
        (
            'query($c: String) { workspace(workspaceId: "ws-empty") {'
            " projects(first: 2, after: $c) { nodes { projectId } } } }"
        ),
        c=cursor,
    )
    assert codes(on_own_field) == ["BAD_USER_INPUT"]
    assert not tenant_b.wire.mentions(*A_PARTITIONS)


def test_a_combined_page_cursor_replayed_elsewhere_reads_nothing_of_its_issuer(
    tenant_a: Caller, tenant_b: Caller
) -> None:
    page = tenant_a.ask('{ organization(orgName: "o1") { users(first: 2) { pageInfo { endCursor } } } }')
    cursor = page["data"]["organization"]["users"]["pageInfo"]["endCursor"]
    body = tenant_b.ask(
        'query($c: String) { organization(orgName: "o-empty") { users(after: $c) { nodes { username } } } }', c=cursor
    )
    assert codes(body) == ["BAD_USER_INPUT"]
    assert not tenant_b.wire.mentions(*A_PARTITIONS)


@pytest.fixture(scope="module")
def writable(
    gateway_factory: Callable[..., Gateway], fresh_module_table: str, issuer: Issuer
) -> Iterator[tuple[Gateway, Wire]]:
    with gateway_factory(fresh_module_table, **issuer.settings()) as gateway:
        yield gateway, Wire(gateway)


@pytest.fixture(scope="module")
def fresh_module_table(dynamodb: Any) -> Iterator[str]:
    from tests.contract import create_table

    name = f"tenancy-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    dynamodb.put_item(
        TableName=name,
        Item={
            "PK": {"S": f"TICKET#{A_TICKET}"},
            "SK": {"S": f"TICKET#{A_TICKET}"},
            "GSI1PK": {"S": "ORG#o1#USER#user-02"},
            "GSI1SK": {"S": f"TICKET#{A_TICKET}"},
            "title": {"S": "A's ticket"},
            "version": {"N": "1"},
        },
    )
    yield name
    dynamodb.delete_table(TableName=name)


MUTATIONS = {
    "createCourse": ('createCourse(input: {courseId: "crs-new", title: "x"})', "... on Course { courseId }"),
    "updateCourse": ('updateCourse(input: {courseId: "crs-0001", expectedVersion: 0, title: "x"})', "__typename"),
    "deleteCourse": ('deleteCourse(input: {courseId: "crs-0001", cascade: true})', "__typename"),
    "createProject": ('createProject(input: {workspaceId: "ws-main", title: "x"})', "... on Project { projectId }"),
    "deleteWorkspace": (
        'deleteWorkspace(input: {workspaceId: "ws-main", cascade: true})',
        "... on Deleted { items { count } }",
    ),
    "createUser": ('createUser(input: {orgName: "o1", username: "mallory", name: "M"})', "... on User { name }"),
    "enroll": ('enroll(input: {studentId: "stu-0001", courseId: "crs-0002"})', "... on Enrollment { grade }"),
}


@pytest.mark.parametrize("name", MUTATIONS)
def test_another_tenants_writes_are_forbidden_before_any_write(
    writable: tuple[Gateway, Wire], issuer: Issuer, name: str
) -> None:
    field, selection = MUTATIONS[name]
    tenant_b = Caller(*writable, issuer.token("bob", B))
    body = tenant_b.ask(f"mutation {{ {name}: {field} {{ {selection} }} }}")
    assert codes(body) == ["FORBIDDEN"]
    assert not set(tenant_b.operations) & WRITES
    assert not [op for op, b in tenant_b.wire.requests if op == "Query"]


@pytest.mark.parametrize(
    "field",
    [
        f'updateTicket(input: {{ticketId: "{A_TICKET}", expectedVersion: 1, title: "mine"}})',
        f'deleteTicket(input: {{ticketId: "{A_TICKET}"}})',
    ],
)
def test_another_tenants_ticket_cannot_be_written_and_looks_missing(
    writable: tuple[Gateway, Wire], issuer: Issuer, field: str
) -> None:
    tenant_b = Caller(*writable, issuer.token("bob", B))
    body = tenant_b.ask(f"mutation {{ change: {field} {{ __typename }} }}")
    sent = set(tenant_b.operations)
    missing = tenant_b.ask(f"mutation {{ change: {field.replace(A_TICKET, 'no-such-ticket')} {{ __typename }} }}")
    assert body["data"] == missing["data"] == {"change": {"__typename": "NotFoundError"}}
    assert sent == set(tenant_b.operations) == {"GetItem"}


def test_the_tenant_itself_gets_its_writes_sent(writable: tuple[Gateway, Wire], issuer: Issuer) -> None:
    tenant_a = Caller(*writable, issuer.token("alice", A))
    body = tenant_a.ask('mutation { createProject(input: {workspaceId: "ws-main", title: "x"}) { __typename } }')
    assert body["data"] == {"createProject": {"__typename": "NotFoundError"}}  # the workspace is not in this table
    assert set(tenant_a.operations) & WRITES


def test_a_client_token_is_the_callers_own(
    writable: tuple[Gateway, Wire], issuer: Issuer, dynamodb: Any, fresh_module_table: str
) -> None:
    """Tenant B sending tenant A's token gets its own fresh mutation: it learns nothing of A's, nor claims it."""
    create = (
        "mutation($id: ID!, $name: String!) { createStudent(input: {studentId: $id, name: $name}, "
        'clientToken: "shared-token") '
        "{ __typename ... on Student { studentId name } ... on ConflictError { reason } } }"
    )
    tenant_a = Caller(*writable, issuer.token("alice", A))
    tenant_b = Caller(*writable, issuer.token("bob", B))
    first = tenant_a.ask(create, id="stu-0001", name="Ann")
    assert first["data"] == {"createStudent": {"__typename": "Student", "studentId": "stu-0001", "name": "Ann"}}
    theirs = tenant_b.ask(create, id="stu-0149", name="Bea")
    assert theirs["data"] == {"createStudent": {"__typename": "Student", "studentId": "stu-0149", "name": "Bea"}}
    assert "TransactWriteItems" in tenant_b.operations and "GetItem" not in tenant_b.operations
    # A's own retry is still answered from A's record, and applies nothing.
    again = tenant_a.ask(create, id="stu-0001", name="Ann")
    assert again["data"] == first["data"]
    assert tenant_a.operations == ["TransactWriteItems", "GetItem"]

    # The same token and mutation from two admins: each its own, so the second one is refused on the data.
    course = (
        'mutation { createCourse(input: {courseId: "crs-token", title: "Shared"}, clientToken: "same-token") '
        "{ __typename ... on ConflictError { reason } } }"
    )
    made = Caller(*writable, issuer.token("root", {"roles": ["admin"]})).ask(course)
    assert made["data"] == {"createCourse": {"__typename": "Course"}}
    second = Caller(*writable, issuer.token("another-root", {"roles": ["admin"]})).ask(course)
    assert second["data"] == {"createCourse": {"__typename": "ConflictError", "reason": "ALREADY_EXISTS"}}

    # One record per caller, keyed by a digest: the token itself is in no key.
    for caller, token in [("alice", "shared-token"), ("bob", "shared-token"), ("root", "same-token")]:
        key = {"PK": {"S": f"TOKEN#{building.token_key(caller, token)}"}, "SK": {"S": "TOKEN"}}
        assert "Item" in dynamodb.get_item(TableName=fresh_module_table, Key=key, ConsistentRead=True)
    for token in ("shared-token", "same-token"):
        key = {"PK": {"S": f"TOKEN#{token}"}, "SK": {"S": "TOKEN"}}
        assert "Item" not in dynamodb.get_item(TableName=fresh_module_table, Key=key, ConsistentRead=True)


# --- the guard on its own ---------------------------------------------------------------------------------------


def guard(grants: dict[str, list[str]]) -> Guard:
    return Guard(MODEL, TENANCY, Principal("p", {name: frozenset(v) for name, v in grants.items()}))


def test_a_write_must_show_the_tenant_of_what_it_touches() -> None:
    ticket = {"ticketId": A_TICKET, "orgName": "o1", "username": "user-02"}
    key_only = MODEL.key(TICKET, ticket)
    with pytest.raises(Forbidden, match="orgName"):
        guard(A).check_keys([key_only])
    guard(A).check_keys([MODEL.key_attributes(TICKET, ticket)])
    with pytest.raises(Forbidden, match="organizations"):
        guard(B).check_keys([MODEL.key_attributes(TICKET, ticket)])
    Guard(MODEL, TENANCY, OPEN).check_keys([key_only])


def test_a_key_whose_index_attributes_disagree_with_its_table_key_is_refused() -> None:
    user = MODEL.key_attributes(USER, {"orgName": "o1", "username": "u"})
    forged = {**user, "GSI1PK": "ORG#o-empty#USER#u"}
    with pytest.raises(Forbidden, match="unknown shape"):
        guard({**A, "organizations": ["o1", "o-empty"]}).check_keys([forged])


def test_tenancy_names_only_id_fields_of_the_model() -> None:
    with pytest.raises(ValueError, match="tenantId"):
        Tenancy({"tenantId": "tenants"}).validate(MODEL)
    with pytest.raises(ValueError, match="grant of its own"):
        Tenancy({"orgName": "x", "studentId": "x"}).validate(MODEL)
