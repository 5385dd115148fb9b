"""Limits before execution: the DynamoDB estimate agrees with the executor, and what is over budget never runs."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from graphql import GraphQLObjectType, parse

from gateway.design import global_ids
from gateway.errors import CostLimit
from gateway.execution.cost import MAX_VISITS, Budget, Planner
from gateway.server.app import EXPLAIN_HEADER
from schema import SCHEMA
from schema.model import MODEL, ORGANIZATION, STUDENT
from tests.conftest import Gateway
from tests.contract import student_id, tickets_of
from tests.identity import Issuer

CANONICAL = {
    "workspace and projects": (
        '{ workspace(workspaceId: "ws-main") { displayName projects(first: 5) { nodes { projectId } } } }'
    ),
    "organization and users": '{ organization(orgName: "o1") { orgName users(first: 5) { nodes { username } } } }',
    "users and their tickets": (
        '{ organization(orgName: "o1") { users(first: 6) { nodes {'
        " username tickets(first: 3) { nodes { ticketId } } } } } }"
    ),
    "user and tickets": (
        '{ user(orgName: "o1", username: "user-07") { name tickets(first: 4) { nodes { ticketId } } } }'
    ),
    "student courses 10": (
        '{ student(studentId: "stu-0001") { name courses(first: 10) { edges { grade node { title } } } } }'
    ),
    "student courses 100": (
        '{ student(studentId: "stu-0001") { name courses(first: 100) { edges { grade node { title } } } } }'
    ),
    "course roster 10": '{ course(courseId: "crs-0001") { title students(first: 10) { edges { node { name } } } } }',
    "course roster 100": '{ course(courseId: "crs-0001") { title students(first: 100) { edges { node { name } } } } }',
    "students by id": "{ students(studentIds: ["
    + ", ".join(f'"{student_id(n)}"' for n in [*range(150, 0, -1), 3])
    + "]) { studentId } }",
    "project and workspace": (
        '{ project(workspaceId: "ws-main", projectId: "2026-0030") { title workspace { displayName } } }'
    ),
}

OTHERS = {
    "a connection inside a fragment on a union": (
        '{ workspace(workspaceId: "ws-main") { ... on WorkspaceResult {'
        " ... on Workspace { projects(first: 2) { nodes { projectId } } } } } }"
    ),
    "batch then pages then targets": (
        '{ students(studentIds: ["stu-0001", "stu-0002"]) { courses(first: 3) { nodes { title } } } }'
    ),
    "ticket, its user, their organization": (
        '{ ticket(ticketId: "' + tickets_of(2)[0] + '") { title user { name organization { orgName } } } }'
    ),
    "enrollment and both ends": (
        '{ enrollment(studentId: "stu-0001", courseId: "crs-0001") { grade student { name } course { title } } }'
    ),
    "aliases and a fragment": (
        '{ a: organization(orgName: "o1") { ...U } b: organization(orgName: "o-empty") { ...U } }'
        " fragment U on Organization { users(first: 4) { edges {"
        " node { tickets(first: 2) { nodes { ticketId } } } } } }"
    ),
    "skipped branch": (
        '{ organization(orgName: "o1") { users(first: 4) { nodes { username '
        "tickets(first: 2) @skip(if: true) { nodes { ticketId } } } } } }"
    ),
    "a page after a cursor": (
        '{ course(courseId: "crs-0001") { students(first: 20, after: null) { nodes { studentId } } } }'
    ),
    "user and its organization": '{ user(orgName: "o1", username: "user-03") { organization { orgName } } }',
}


def explain(gateway: Gateway, query: str, **headers: str) -> httpx.Response:
    gateway.sent.clear()
    return gateway.http.post("/graphql", json={"query": query}, headers={EXPLAIN_HEADER: "1", **headers})


def planned_operations(plan: dict[str, Any]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for request in plan["requests"]:
        counts[request["operation"]] += request["calls"]
    return dict(counts)


@pytest.mark.parametrize("name", CANONICAL)
def test_the_estimate_of_each_canonical_operation_is_what_it_costs(gateway: Gateway, name: str) -> None:
    plan = explain(gateway, CANONICAL[name]).json()["extensions"]["explain"]
    assert not gateway.sent
    measured = gateway.query(CANONICAL[name])["extensions"]["dynamodb"]
    assert (plan["calls"], plan["rounds"]) == (measured["calls"], measured["rounds"])
    assert planned_operations(plan) == measured["operations"]


@pytest.mark.parametrize("name", OTHERS)
def test_the_estimate_is_never_below_what_an_operation_costs(gateway: Gateway, name: str) -> None:
    plan = explain(gateway, OTHERS[name]).json()["extensions"]["explain"]
    measured = gateway.query(OTHERS[name])["extensions"]["dynamodb"]
    assert plan["calls"] >= measured["calls"]
    assert plan["rounds"] >= measured["rounds"]


def test_explain_shows_each_fields_requests_without_running_them(gateway: Gateway) -> None:
    response = explain(gateway, CANONICAL["users and their tickets"], **{"x-tablegraph-accounting": "1"})
    body = response.json()
    assert response.status_code == 200
    assert body["data"] is None
    assert body["extensions"]["dynamodb"]["calls"] == 0
    assert not gateway.sent
    plan = body["extensions"]["explain"]
    assert plan["withinBudget"] is True
    organization, tickets = plan["requests"]
    assert organization == {
        "path": "organization",
        "operation": "Query",
        "calls": 1,
        "round": 1,
        "items": 8,
        "index": "table",
        "keyCondition": "PK = ORG#{orgName} AND SK BETWEEN METADATA#{orgName} AND USER$",
        "scanIndexForward": True,
        "limit": 8,
    }
    assert tickets["path"] == "organization.users.nodes.tickets"
    assert (tickets["calls"], tickets["round"], tickets["index"]) == (6, 2, "GSI1")
    assert tickets["keyCondition"] == "GSI1PK = ORG#{orgName}#USER#{username} AND begins_with(GSI1SK, TICKET#)"


@pytest.fixture(scope="module")
def tight(gateway_factory: Callable[..., Gateway], contract_table: str) -> Iterator[Gateway]:
    limits = {"max_calls": 5, "max_rounds": 2, "max_depth": 6, "max_aliases": 2, "max_tokens": 120}
    with gateway_factory(contract_table, **limits) as running:
        yield running


def refused(gateway: Gateway, query: str, accept: str = "application/graphql-response+json") -> dict[str, Any]:
    gateway.sent.clear()
    response = gateway.http.post("/graphql", json={"query": query}, headers={"Accept": accept})
    assert not gateway.sent, "a refused operation reached DynamoDB"
    body: dict[str, Any] = response.json()
    assert "data" not in body
    assert response.status_code == (400 if accept != "application/json" else 200)
    return body


def test_an_operation_over_the_call_budget_is_refused_with_its_estimate(tight: Gateway) -> None:
    body = refused(tight, CANONICAL["users and their tickets"])
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "COST_LIMIT"
    assert error["extensions"]["limit"] == "calls"
    assert error["extensions"]["estimate"]["calls"] == 7
    assert error["extensions"]["estimate"]["budget"] == {"calls": 5, "rounds": 2}
    refused(tight, CANONICAL["users and their tickets"], accept="application/json")


def test_an_operation_over_the_round_budget_is_refused(tight: Gateway) -> None:
    # The student comes with its enrolments; its course with the course's roster; then the roster's students.
    query = (
        '{ student(studentId: "stu-0001") { courses(first: 1) { nodes { students(first: 1) { nodes { name } } } } } }'
    )
    error = refused(tight, query)["errors"][0]
    assert (error["extensions"]["code"], error["extensions"]["limit"]) == ("COST_LIMIT", "rounds")


def test_an_answer_of_too_many_objects_is_refused_even_when_its_reads_are_cached(gateway: Gateway) -> None:
    # Going back and forth between users and their tickets reads little (each ticket's user is a user already
    # read) but answers 100 x 100 x 100 x 100 objects: the walk stops counting at the limit, before any request.
    query = (
        '{ organization(orgName: "o1") { users(first: 100) { nodes { tickets(first: 100) { nodes { user {'
        " organization { users(first: 100) { nodes { tickets(first: 100) { nodes { title } } } } } } } } } } } }"
    )
    error = refused(gateway, query)["errors"][0]
    assert error["extensions"]["code"] == "COST_LIMIT"
    assert (error["extensions"]["limit"], error["extensions"]["maximum"]) == ("objects", 20_000)


def test_an_operation_within_the_budget_runs(tight: Gateway) -> None:
    assert tight.query(CANONICAL["workspace and projects"])["data"]["workspace"]["displayName"] == "Main"


@pytest.mark.parametrize(
    ("query", "limit"),
    [
        (
            '{ user(orgName: "o1", username: "u") '
            "{ tickets { edges { node { user { organization { orgName } } } } } } }",
            "depth",
        ),
        ('{ a: __typename b: __typename c: __typename workspace(workspaceId: "ws-main") { displayName } }', "aliases"),
    ],
)
def test_deep_or_wide_documents_are_refused(tight: Gateway, query: str, limit: str) -> None:
    error = refused(tight, query)["errors"][0]
    assert (error["extensions"]["code"], error["extensions"]["limit"]) == ("COST_LIMIT", limit)


def test_a_document_over_the_token_limit_is_not_even_parsed(tight: Gateway) -> None:
    query = "{ " + " ".join(f'w{n}: workspace(workspaceId: "x") {{ displayName }}' for n in range(30)) + " }"
    error = refused(tight, query)["errors"][0]
    assert error["extensions"]["code"] == "GRAPHQL_PARSE_FAILED"
    assert "tokens" in error["message"]


def test_explain_shows_an_operation_over_budget_instead_of_refusing_it(tight: Gateway) -> None:
    plan = explain(tight, CANONICAL["users and their tickets"]).json()["extensions"]["explain"]
    assert (plan["calls"], plan["withinBudget"]) == (7, False)
    assert not tight.sent


def test_fragments_that_multiply_are_refused_by_the_planner_without_expanding_them() -> None:
    fragments = ["fragment F0 on Query { __typename }"] + [
        f"fragment F{n} on Query {{ ...F{n - 1} ...F{n - 1} }}" for n in range(1, 40)
    ]
    document = parse("{ ...F39 } " + " ".join(fragments))
    planner = Planner(SCHEMA._schema, MODEL, Budget())
    with pytest.raises(CostLimit) as refused_bomb:
        planner.check(document, None, {}, enforce=True)
    assert refused_bomb.value.extensions == {"code": "COST_LIMIT", "limit": "fields", "maximum": MAX_VISITS}


def test_every_relation_of_the_model_is_a_field_of_the_schema() -> None:
    """The estimate finds collections and links by their ``Type.field`` names."""
    for relation in [collection.name for collection in MODEL.collections] + [link.name for link in MODEL.links]:
        type_name, field = relation.split(".")
        owner = SCHEMA._schema.get_type(type_name)
        assert isinstance(owner, GraphQLObjectType), relation
        assert field in owner.fields, relation


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


@pytest.mark.parametrize("mode", ["off", "admin"])
def test_introspection_can_be_turned_off_or_kept_for_admins(
    gateway_factory: Callable[..., Gateway], contract_table: str, issuer: Issuer, mode: str
) -> None:
    introspect = {"query": "{ __schema { queryType { name } } }"}
    with gateway_factory(contract_table, introspection=mode, **issuer.settings()) as gateway:

        def ask(grants: dict[str, Any]) -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {issuer.token('x', grants)}"}
            body: dict[str, Any] = gateway.http.post("/graphql", json=introspect, headers=headers).json()
            return body

        assert ask({})["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        by_admin = ask({"roles": ["admin"]})
        if mode == "off":
            assert by_admin["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        else:
            assert by_admin["data"] == {"__schema": {"queryType": {"name": "Query"}}}
        typename = gateway.http.post(
            "/graphql", json={"query": "{ __typename }"}, headers={"Authorization": f"Bearer {issuer.token('x', {})}"}
        )
        assert typename.json()["data"] == {"__typename": "Query"}


def test_explaining_a_mutation_writes_nothing(gateway: Gateway) -> None:
    workspace = f"explained-{uuid.uuid4().hex[:8]}"
    mutation = (
        f'mutation {{ createProject(input: {{workspaceId: "{workspace}", title: "t"}}) '
        "{ ... on Project { projectId workspace { displayName } } } }"
    )
    plan = explain(gateway, mutation).json()["extensions"]["explain"]
    assert [(r["path"], r["operation"], r["round"]) for r in plan["requests"]] == [
        ("createProject", "write", 1),
        ("createProject.workspace", "BatchGetItem", 2),
    ]
    assert not gateway.sent


def test_the_standard_introspection_query_passes_the_limits(gateway: Gateway) -> None:
    from graphql import get_introspection_query

    body = gateway.http.post("/graphql", json={"query": get_introspection_query()}).json()
    assert "errors" not in body, body.get("errors")
    assert body["data"]["__schema"]["queryType"]["name"] == "Query"


# --- explain passes the guard, as execution does --------------------------------------------------------------

OWN = {"organizations": ["o-empty"], "workspaces": ["ws-empty"], "students": ["stu-0149"]}
"""The caller's grants; tenant o1 / ws-main / stu-0001 is another's."""
THEIR_TICKET = tickets_of(2)[0]


@pytest.fixture(scope="module")
def guarded(gateway_factory: Callable[..., Gateway], contract_table: str, issuer: Issuer) -> Iterator[Gateway]:
    with gateway_factory(contract_table, **issuer.settings()) as running:
        yield running


def as_caller(gateway: Gateway, issuer: Issuer, query: str, grants: dict[str, Any], explained: bool) -> dict[str, Any]:
    gateway.sent.clear()
    headers = {
        "Authorization": f"Bearer {issuer.token('caller', grants)}",
        "Accept": "application/graphql-response+json",
    }
    if explained:
        headers[EXPLAIN_HEADER] = "1"
    response = gateway.http.post("/graphql", json={"query": query}, headers=headers)
    assert response.status_code == 200, response.text
    if explained:
        assert not gateway.sent, "explain reached DynamoDB"
    body: dict[str, Any] = response.json()
    return body


def refusals(body: dict[str, Any]) -> list[tuple[str, list[Any], dict[str, Any]]]:
    return [(error["message"], error["path"], error["extensions"]) for error in body.get("errors", [])]


def planned_paths(body: dict[str, Any]) -> list[str]:
    return [request["path"] for request in body["extensions"]["explain"]["requests"]]


MINE = '{ workspace(workspaceId: "ws-empty") { displayName projects(first: 3) { nodes { projectId } } } }'
THEIR_ORGANIZATION = global_ids.encode(ORGANIZATION, {"orgName": "o1"})
OUR_STUDENT, THEIR_STUDENT = (global_ids.encode(STUDENT, {"studentId": one}) for one in ["stu-0149", "stu-0001"])
FOREIGN_ROOTS = {
    "a root field": '{ workspace(workspaceId: "ws-main") { displayName projects(first: 3) { nodes { projectId } } } }',
    "a root field by key": (
        '{ project(workspaceId: "ws-main", projectId: "2026-0001") { title workspace { seatLimit } } }'
    ),
    "a global id": (
        f'{{ node(id: "{THEIR_ORGANIZATION}") {{ id '
        "... on Organization { users(first: 2) { nodes { name } } } } }"
    ),
    "global ids": f'{{ nodes(ids: ["{OUR_STUDENT}", "{THEIR_STUDENT}"]) {{ id }} }}',
    "batch ids": '{ students(studentIds: ["stu-0149", "stu-0001"]) { name courses(first: 2) { nodes { title } } } }',
}


@pytest.mark.parametrize("case", FOREIGN_ROOTS)
def test_explain_answers_forbidden_at_a_field_naming_another_tenants_keys_and_plans_nothing_for_it(
    guarded: Gateway, issuer: Issuer, case: str
) -> None:
    query = FOREIGN_ROOTS[case]
    both = "{ mine: " + MINE[1:-1].strip() + " theirs: " + query[1:-1].strip() + " }"
    explained = as_caller(guarded, issuer, both, OWN, explained=True)
    assert explained["data"] is None
    assert [(path, extensions["code"]) for _, path, extensions in refusals(explained)] == [(["theirs"], "FORBIDDEN")]
    assert planned_paths(explained) and all(path.startswith("mine") for path in planned_paths(explained))
    # The same error as executing it answers (a non-null list's null nulls the whole data).
    executed = as_caller(guarded, issuer, both, OWN, explained=False)
    assert refusals(explained) == refusals(executed)
    assert (executed["data"] or {}).get("theirs") is None


def test_explain_of_the_callers_own_keys_is_the_plan_an_admin_gets(guarded: Gateway, issuer: Issuer) -> None:
    own = as_caller(guarded, issuer, MINE, OWN, explained=True)
    admin = as_caller(guarded, issuer, MINE, {"roles": ["admin"]}, explained=True)
    assert "errors" not in own
    assert own["extensions"]["explain"] == admin["extensions"]["explain"]
    assert planned_paths(own) == ["workspace", "workspace.projects"]


def test_explain_answers_forbidden_at_a_nested_field_the_guard_refuses(guarded: Gateway, issuer: Issuer) -> None:
    # A course is shared; its roster lists students of every tenant, and needs the admin role.
    query = '{ course(courseId: "crs-0001") { title students(first: 5) { nodes { name } } } }'
    explained = as_caller(guarded, issuer, query, OWN, explained=True)
    executed = as_caller(guarded, issuer, query, OWN, explained=False)
    assert [(path, extensions["code"]) for _, path, extensions in refusals(explained)] == [
        (["course", "students"], "FORBIDDEN")
    ]
    assert refusals(explained) == refusals(executed)
    assert [(r["path"], r["operation"]) for r in explained["extensions"]["explain"]["requests"]] == [
        ("course", "BatchGetItem")
    ]
    admin = as_caller(guarded, issuer, query, {"roles": ["admin"]}, explained=True)
    assert "errors" not in admin and "course.students" in planned_paths(admin)


@pytest.mark.parametrize("first", ["explain", "run"])
def test_a_plan_made_with_one_callers_guard_is_never_served_to_another(
    guarded: Gateway, issuer: Issuer, first: str
) -> None:
    """Documents are prepared once per application, and their estimate kept; the guard is per request."""
    query = FOREIGN_ROOTS["a root field"].replace("first: 3", f"first: {4 if first == 'explain' else 5}")
    owner = {"workspaces": ["ws-main"]}
    if first == "explain":
        as_caller(guarded, issuer, query, owner, explained=True)
    else:  # an execution keeps the shared worst-case estimate of the document
        as_caller(guarded, issuer, query, owner, explained=False)
    other = as_caller(guarded, issuer, query, OWN, explained=True)
    assert [path for _, path, _ in refusals(other)] == [["workspace"]]
    assert planned_paths(other) == []
    again = as_caller(guarded, issuer, query, owner, explained=True)
    assert "errors" not in again
    assert planned_paths(again) == ["workspace", "workspace.projects"]
    assert again["extensions"]["explain"]["calls"] == 2


def test_what_explain_makes_up_counts_as_the_callers_own(guarded: Gateway, issuer: Issuer) -> None:
    """A ticket's user, or the workspace of a project a mutation creates, are known only once read or written: the
    plan assumes them the caller's, as execution finds them (or hides them, or refuses the write)."""
    ticket = (
        f'{{ ticket(ticketId: "{THEIR_TICKET}") {{ title ' + "user { name tickets(first: 2) { nodes { title } } } } }"
    )
    explained = as_caller(guarded, issuer, ticket, OWN, explained=True)
    assert "errors" not in explained
    assert planned_paths(explained) == ["ticket", "ticket.user"]
    mutation = (
        'mutation { createProject(input: {workspaceId: "ws-empty", title: "t"}) '
        "{ ... on Project { workspace { displayName projects(first: 2) { nodes { title } } } } } }"
    )
    explained = as_caller(guarded, issuer, mutation, OWN, explained=True)
    assert "errors" not in explained
    assert planned_paths(explained) == ["createProject", "createProject.workspace", "createProject.workspace.projects"]
    # A caller granted no organization at all cannot see any ticket's user: the plan stops at the ticket.
    explained = as_caller(guarded, issuer, ticket, {"workspaces": ["ws-empty"]}, explained=True)
    assert "errors" not in explained
    assert planned_paths(explained) == ["ticket"]
