"""A collection listed from the Query root by its parent's ids: the nested field's connection, read without the
parent, but for ``totalCount``, which the parent's counter answers in the same round."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from schema.demo import DEMO
from schema.model import COURSE_STUDENTS, USER_TICKETS
from tests.support.gateway import Gateway, accounted
from tests.support.identity import Issuer

ROOTS = {COURSE_STUDENTS.name: "courseStudents", USER_TICKETS.name: "userTickets"}
LISTED = dataclasses.replace(
    DEMO,
    model=dataclasses.replace(
        DEMO.model,
        collections=tuple(
            dataclasses.replace(one, root=ROOTS[one.name]) if one.name in ROOTS else one
            for one in DEMO.model.collections
        ),
    ),
)


@pytest.fixture(scope="module")
def demo(served: Callable[..., Gateway]) -> Gateway:
    return served(LISTED, seeded=True)


def _answer(gateway: Gateway, query: str) -> tuple[dict[str, Any], tuple[int, int, dict[str, int]]]:
    body = gateway.query(query)
    assert "errors" not in body, body["errors"]
    return body["data"], accounted(body)


def _explained(gateway: Gateway, query: str) -> tuple[int, int]:
    explain = gateway.query(query, **{"X-Tablegraph-Explain": "1"})["extensions"]["explain"]
    return explain["calls"], explain["rounds"]


COURSE = "crs-001"
EDGES = "edges { cursor grade } pageInfo { hasNextPage }"


def test_total_count_reads_the_parent_beside_the_query_in_one_round(demo: Gateway) -> None:
    query = f'{{ courseStudents(courseId: "{COURSE}", first: 2) {{ totalCount {EDGES} }} }}'
    data, cost = _answer(demo, query)
    nested, _ = _answer(demo, f'{{ course(courseId: "{COURSE}") {{ students(first: 2) {{ totalCount {EDGES} }} }} }}')
    assert data["courseStudents"] == nested["course"]["students"]
    assert data["courseStudents"]["totalCount"] >= 1
    assert cost == (2, 1, {"BatchGetItem": 1, "Query": 1})
    assert _explained(demo, query) == (2, 1)


def test_without_total_count_the_parent_is_not_read(demo: Gateway) -> None:
    query = f'{{ courseStudents(courseId: "{COURSE}") {{ {EDGES} }} }}'
    data, cost = _answer(demo, query)
    assert data["courseStudents"]["edges"]
    assert cost == (1, 1, {"Query": 1})
    assert _explained(demo, query) == (1, 1)


def test_the_targets_of_a_root_many_to_many_page_follow_in_the_next_round(demo: Gateway) -> None:
    query = f'{{ courseStudents(courseId: "{COURSE}") {{ totalCount nodes {{ studentId name }} }} }}'
    data, cost = _answer(demo, query)
    nested, _ = _answer(
        demo, f'{{ course(courseId: "{COURSE}") {{ students {{ totalCount nodes {{ studentId name }} }} }} }}'
    )
    assert data["courseStudents"] == nested["course"]["students"]
    assert cost == (3, 2, {"BatchGetItem": 2, "Query": 1})
    assert _explained(demo, query) == (3, 2)


def test_a_parent_that_does_not_exist_lists_nothing_and_counts_null(demo: Gateway) -> None:
    data, cost = _answer(demo, '{ courseStudents(courseId: "crs-999") { totalCount edges { cursor } } }')
    assert data["courseStudents"] == {"totalCount": None, "edges": []}
    assert cost[:2] == (2, 1)


def test_a_root_connection_on_an_index_filters_as_the_nested_field(demo: Gateway) -> None:
    ids = 'orgName: "acme", username: "acme-user2"'
    arguments = "first: 3, where: { status: { eq: open } }"
    page = "{ totalCount nodes { ticketId status } pageInfo { hasNextPage } }"
    data, cost = _answer(demo, f"{{ userTickets({ids}, {arguments}) {page} }}")
    nested, _ = _answer(demo, f"{{ user({ids}) {{ tickets({arguments}) {page} }} }}")
    assert data["userTickets"] == nested["user"]["tickets"]
    assert data["userTickets"]["totalCount"] is not None
    assert cost[:2] == (2, 1)


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


def test_another_tenants_root_connection_is_forbidden_before_any_request(
    served: Callable[..., Gateway], issuer: Issuer
) -> None:
    guarded = served(LISTED, seeded=True, **issuer.settings())
    query = '{ userTickets(orgName: "acme", username: "acme-user2") { totalCount edges { cursor } } }'
    for organization, forbidden in (("umbrella", True), ("acme", False)):
        token = issuer.token("someone", {"organizations": [organization]})
        guarded.sent.clear()
        body = guarded.http.post("/graphql", json={"query": query}, headers={"Authorization": f"Bearer {token}"}).json()
        codes = [error["extensions"]["code"] for error in body.get("errors", [])]
        if forbidden:
            assert (codes, sum(guarded.sent.values())) == (["FORBIDDEN"], 0)
        else:
            assert codes == [] and body["data"]["userTickets"]["totalCount"] is not None
