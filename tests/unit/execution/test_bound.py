"""The bound of an operation with variables: made once per document, and it refuses what each request's own
estimate refuses."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from graphql import DocumentNode, FragmentDefinitionNode, OperationDefinitionNode, parse

from gateway.errors import CostLimit
from gateway.execution import queries
from gateway.execution.bound import MADE_UP_CURSOR, MADE_UP_ID, worst_case
from gateway.execution.cost import Budget, Estimate, Planner, Prepared
from gateway.execution.guard import OPEN, Guard
from gateway.surface.toolkit import graphql_schema
from schema import GRAPH, MODEL, TENANCY

SCHEMA = graphql_schema(GRAPH.schema)

# DESIGN.md's canonical operations and the nested ones, as Apollo Client and Relay send them: with variables.
PAGED = {
    "workspace and projects": (
        "query($ws: ID!, $n: Int) { workspace(workspaceId: $ws) { displayName projects(first: $n) "
        "{ nodes { projectId } pageInfo { hasNextPage } } } }"
    ),
    "organization and users": (
        "query($org: ID!, $n: Int) { organization(orgName: $org) { orgName users(first: $n) { nodes { username } } } }"
    ),
    "users and their tickets": (
        "query($org: ID!, $n: Int, $m: Int) { organization(orgName: $org) { users(first: $n) { nodes { username "
        "tickets(first: $m) { nodes { ticketId } } } } } }"
    ),
    "user and tickets": (
        "query($org: ID!, $user: ID!, $n: Int) { user(orgName: $org, username: $user) { name "
        "tickets(first: $n) { nodes { ticketId } } } }"
    ),
    "student courses": (
        "query($s: ID!, $n: Int) { student(studentId: $s) { name courses(first: $n) "
        "{ edges { grade node { title } } } } }"
    ),
    "course roster": (
        "query($c: ID!, $n: Int, $after: String) { course(courseId: $c) { title "
        "students(first: $n, after: $after) { edges { node { name } } } } }"
    ),
    "student, courses, their students": (
        "query($s: ID!, $n: Int, $m: Int) { student(studentId: $s) { courses(first: $n) { nodes { title "
        "students(first: $m) { nodes { name } } } } } }"
    ),
    "ticket, its user, its tickets": (
        "query($t: ID!, $n: Int, $deep: Boolean!) { ticket(ticketId: $t) { user { name "
        "tickets(first: $n) @include(if: $deep) { nodes { ticketId } } } } }"
    ),
    "project, its workspace, its projects": (
        "query($ws: ID!, $p: ID!, $n: Int, $flat: Boolean!) { project(workspaceId: $ws, projectId: $p) { title "
        "workspace { displayName ...Projects @skip(if: $flat) } } } "
        "fragment Projects on Workspace { projects(first: $n) { nodes { title } } }"
    ),
}
ONE_CALL = {"organization and users", "user and tickets", "project and workspace"}
BATCHED = "query($ids: [ID!]!) { students(studentIds: $ids) { name courses(first: 3) { nodes { title } } } }"
PAIR = "query($ws: ID!, $p: ID!) { project(workspaceId: $ws, projectId: $p) { title workspace { displayName } } }"


def _variables(query: str, n: int | None, flag: bool) -> dict[str, Any]:
    """Values for every variable the operation declares: ids, a page size (None: the default), a flag, and with
    the flag off a cursor."""
    values: dict[str, Any] = {"ws": "ws-1", "org": "o1", "user": "u1", "s": "s1", "c": "c1", "t": "t1", "p": "p1"}
    values |= {"n": n, "m": n, "deep": flag, "flat": not flag, "after": None if flag else "a-cursor"}
    return {name: value for name, value in values.items() if f"${name}" in query}


def _operation(document: DocumentNode) -> OperationDefinitionNode:
    (operation,) = [one for one in document.definitions if isinstance(one, OperationDefinitionNode)]
    return operation


def _outcome(planner: Planner, document: DocumentNode, variables: dict[str, Any], prepared: Prepared | None) -> str:
    try:
        planner.check(document, None, variables, enforce=True, prepared=prepared)
    except CostLimit as refused:
        return f"refused: {refused.extensions.get('limit')}"
    return "admitted"


BUDGETS = [
    Budget(max_calls=calls, max_rounds=rounds) for calls, rounds in itertools.product((1, 2, 3, 12, 60), (1, 2, 3))
]


@pytest.mark.parametrize("name", [*PAGED, "students by id", "project and workspace"])
def test_the_bound_refuses_exactly_what_each_request_estimate_refuses(name: str) -> None:
    query = PAGED.get(name) or (BATCHED if name == "students by id" else PAIR)
    document = parse(query)
    if name == "students by id":
        assignments = [{"ids": [f"s{i}" for i in range(count)]} for count in (0, 1, 40, 150)]
    else:
        assignments = [_variables(query, n, flag) for n in (None, 1, 5, 100) for flag in (True, False)]
    decided: set[str] = set()
    for budget in BUDGETS:
        planner = Planner(SCHEMA, MODEL, budget)
        prepared = Prepared(document, set(), {})
        for variables in assignments:
            alone = _outcome(planner, document, variables, None)
            assert _outcome(planner, document, variables, prepared) == alone, (budget, variables)
            decided.add(alone)
    # Every operation of more than one call or round meets a budget that refuses it, and one that admits it.
    assert "admitted" in decided
    assert any(one.startswith("refused") for one in decided) or name in ONE_CALL


def test_the_bound_is_the_walk_with_each_variable_at_its_worst_case() -> None:
    document = parse(PAGED["project, its workspace, its projects"])
    worst = worst_case(MODEL, 100, _operation(document), _fragments(document))
    assert worst == {"ws": f"{MADE_UP_ID}ws~", "p": f"{MADE_UP_ID}p~", "flat": False, "n": 100}
    document = parse(PAGED["course roster"])
    assert worst_case(MODEL, 100, _operation(document), {}) == {
        "c": f"{MADE_UP_ID}c~",
        "n": 100,
        "after": MADE_UP_CURSOR,
    }
    (ids,) = (worst_case(MODEL, 100, _operation(parse(BATCHED)), {}) or {}).values()
    assert len(set(ids)) == queries.MAX_BATCH_IDS


@pytest.mark.parametrize(
    "query",
    [
        "query($id: ID!) { node(id: $id) { id } }",
        'query($n: Int) { organization(orgName: "o1") { users(last: $n) { nodes { username } } } }',
        'query($n: Int) { organization(orgName: "o1") { users(first: $n, before: "x") { nodes { username } } } }',
        'query($a: ID!) { students(studentIds: [$a, "s2"]) { name } }',
        'query($n: Int, $deep: Boolean!) { organization(orgName: "o1") { users(first: $n) @include(if: $deep) '
        "{ nodes { tickets(first: $n) @skip(if: $deep) { nodes { ticketId } } } } } }",
    ],
    ids=["global id", "last", "first before a cursor", "an id in a list", "one flag both ways"],
)
def test_a_variable_whose_worst_case_is_not_plain_leaves_the_operation_without_a_bound(query: str) -> None:
    document = parse(query)
    assert worst_case(MODEL, 100, _operation(document), {}) is None


def test_the_walk_is_made_once_per_document_whatever_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    planner = Planner(SCHEMA, MODEL, Budget())
    walked = _count_walks(monkeypatch)
    for query in (PAGED["users and their tickets"], '{ organization(orgName: "o1") { orgName } }'):
        document = parse(query)
        prepared = planner.prepare(query, document)
        walked.clear()
        for n in (1, 2, 5, 100, None):
            planner.check(document, None, _variables(query, n, True), enforce=True, prepared=prepared)
        assert len(walked) == 1, query


def test_an_operation_whose_bound_passes_the_budget_is_estimated_with_each_request_own_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    planner = Planner(SCHEMA, MODEL, Budget(max_calls=5))
    walked = _count_walks(monkeypatch)
    document = parse(BATCHED)
    prepared = planner.prepare(BATCHED, document)
    sizes = (1, 2, 3)
    for size in sizes:
        planner.check(document, None, {"ids": [f"s{i}" for i in range(size)]}, enforce=True, prepared=prepared)
    assert [variables for variables in walked if variables is not None] == [
        # the bound, once: a thousand ids take ten BatchGetItem calls, over the budget of five
        {"ids": [f"{MADE_UP_ID}ids~{i}" for i in range(queries.MAX_BATCH_IDS)]},
        *({"ids": [f"s{i}" for i in range(size)]} for size in sizes),
    ]


def test_only_explain_describes_the_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    query = PAGED["user and tickets"]
    variables = _variables(query, 5, True)
    planner = Planner(SCHEMA, MODEL, Budget())
    checked = planner.check(parse(query), None, variables, enforce=True)
    explained = planner.check(parse(query), None, variables, enforce=False, guard=Guard(MODEL, TENANCY, OPEN))
    assert checked is not None and explained is not None
    assert [request.request for request in checked.requests] == [{}]
    assert [sorted(request.request) for request in explained.requests] == [
        ["index", "keyCondition", "limit", "scanIndexForward"]
    ]
    assert _plain(checked) == _plain(explained)


def _plain(estimate: Estimate) -> list[tuple[str, str, int, int, int]]:
    return [(one.path, one.operation, one.calls, one.round, one.items) for one in estimate.requests]


def _count_walks(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any] | None]:
    """A spy around the planner's walk over the worst-case stand-in: the variables of each walk made."""
    walked: list[dict[str, Any] | None] = []
    real = Planner.estimate

    def spy(
        self: Planner, document: DocumentNode, operation: Any, variables: Any, guard: Any, coerced: Any = None
    ) -> Estimate | None:
        walked.append(dict(variables) if variables else None)
        return real(self, document, operation, variables, guard, coerced)

    monkeypatch.setattr(Planner, "estimate", spy)
    return walked


def _fragments(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {one.name.value: one for one in document.definitions if isinstance(one, FragmentDefinitionNode)}
