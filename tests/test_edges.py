"""Edges of the many-to-many: their nodes are read with the page when the query asks for them, in one batch."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.surface import builder
from tests.conftest import Gateway
from tests.contract import COURSES, course_id, student_id
from tests.test_canonical_operations import dynamodb

COURSES_OF_STUDENT_1 = [course_id(n) for n in range(COURSES, COURSES - 10, -1)]


def _courses(body: dict[str, Any], connection: str = "courses") -> dict[str, Any]:
    courses: dict[str, Any] = body["data"]["student"][connection]
    return courses


def test_nodes_and_edge_nodes_asked_together_share_one_batch(gateway: Gateway) -> None:
    body = gateway.query(
        f'{{ student(studentId: "{student_id(1)}") {{ courses(first: 10) {{ '
        "nodes { courseId } edges { grade node { title } } } } }"
    )
    courses = _courses(body)
    assert [node["courseId"] for node in courses["nodes"]] == COURSES_OF_STUDENT_1
    assert [edge["node"]["title"] for edge in courses["edges"]] == [
        f"Course {n}" for n in range(COURSES, COURSES - 10, -1)
    ]
    assert dynamodb(body) == (2, 2, {"Query": 1, "BatchGetItem": 1})


def test_nodes_behind_fragments_and_directives_are_read_with_the_page(gateway: Gateway) -> None:
    body = gateway.query(
        'query($with: Boolean!) { student(studentId: "'
        + student_id(1)
        + '") { all: courses(first: 10) { ...Edges } } }'
        " fragment Edges on StudentCoursesConnection { edges { ... on StudentCoursesEdge { node @include(if: $with)"
        " { courseId } } } }",
        {"with": True},
    )
    assert [edge["node"]["courseId"] for edge in _courses(body, "all")["edges"]] == COURSES_OF_STUDENT_1
    assert dynamodb(body) == (2, 2, {"Query": 1, "BatchGetItem": 1})


def test_edges_without_their_nodes_read_no_node(gateway: Gateway) -> None:
    body = gateway.query(
        'query($with: Boolean!) { student(studentId: "' + student_id(1) + '") { courses(first: 10) { edges { grade '
        "node @include(if: $with) { courseId } } } } }",
        {"with": False},
    )
    assert all(set(edge) == {"grade"} for edge in _courses(body)["edges"])
    assert dynamodb(body) == (1, 1, {"Query": 1})


def test_nodes_the_connection_did_not_see_coming_are_still_read_in_one_batch(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should a connection miss that its nodes are selected, each edge reads its node: the same answer, and the
    walk that read ahead still makes it one batch."""
    seen: list[bool] = []
    real = builder._selects_nodes

    def blind(info: Any) -> bool:
        seen.append(real(info))
        return False

    monkeypatch.setattr(builder, "_selects_nodes", blind)
    body = gateway.query(
        f'{{ student(studentId: "{student_id(1)}") {{ courses(first: 10)'
        " { nodes { courseId } edges { node { courseId } } } } }"
    )
    courses = _courses(body)
    assert [node["courseId"] for node in courses["nodes"]] == COURSES_OF_STUDENT_1
    assert [edge["node"]["courseId"] for edge in courses["edges"]] == COURSES_OF_STUDENT_1
    assert seen == [True]
    assert dynamodb(body)[2] == {"Query": 1, "BatchGetItem": 1}
