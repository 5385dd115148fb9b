"""Each canonical operation of DESIGN.md: its data, and exactly the DynamoDB calls and rounds it must reach."""

from __future__ import annotations

import math

import pytest

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
from tests.support.gateway import Gateway, accounted


def test_workspace_and_its_newest_projects_are_two_requests_in_one_round(gateway: Gateway) -> None:
    body = gateway.query(
        '{ workspace(workspaceId: "ws-main") { displayName projects(first: 5) { nodes { projectId title } '
        "pageInfo { hasNextPage endCursor } } } }"
    )
    workspace = body["data"]["workspace"]
    assert workspace["displayName"] == "Main"
    assert [p["projectId"] for p in workspace["projects"]["nodes"]] == [project_id(n) for n in range(30, 25, -1)]
    assert workspace["projects"]["pageInfo"]["hasNextPage"] is True
    assert accounted(body) == (2, 1, {"BatchGetItem": 1, "Query": 1})


def test_organization_and_its_users_come_from_one_query(gateway: Gateway) -> None:
    body = gateway.query(
        '{ organization(orgName: "o1") { orgName subscriptionLevel users(first: 5) { '
        "nodes { username name } pageInfo { hasNextPage } } } }"
    )
    organization = body["data"]["organization"]
    assert organization["subscriptionLevel"] == "pro"
    assert [u["username"] for u in organization["users"]["nodes"]] == [username(n) for n in range(1, 6)]
    assert organization["users"]["pageInfo"]["hasNextPage"] is True
    assert accounted(body) == (1, 1, {"Query": 1})


def test_all_users_of_an_organization_fit_in_the_parent_query(gateway: Gateway) -> None:
    body = gateway.query(
        f'{{ organization(orgName: "o1") {{ users(first: {USERS}) {{ '
        "nodes { username } pageInfo { hasNextPage } } } }"
    )
    users = body["data"]["organization"]["users"]
    assert len(users["nodes"]) == USERS
    assert users["pageInfo"]["hasNextPage"] is False
    assert accounted(body) == (1, 1, {"Query": 1})


def test_users_tickets_are_one_index_query_per_user_all_at_once(gateway: Gateway) -> None:
    body = gateway.query(
        '{ organization(orgName: "o1") { users(first: 6) { nodes { username '
        "tickets(first: 3) { nodes { ticketId } pageInfo { hasNextPage } } } } } }"
    )
    users = body["data"]["organization"]["users"]["nodes"]
    for n, user in enumerate(users, start=1):
        expected = sorted(tickets_of(n), reverse=True)
        assert [t["ticketId"] for t in user["tickets"]["nodes"]] == expected[:3]
        assert user["tickets"]["pageInfo"]["hasNextPage"] is (len(expected) > 3)
    assert accounted(body) == (1 + 6, 2, {"Query": 7})


def test_a_user_and_its_newest_tickets_are_one_index_query(gateway: Gateway) -> None:
    body = gateway.query(
        '{ user(orgName: "o1", username: "user-07") { name '
        "tickets(first: 4) { nodes { ticketId title } pageInfo { hasNextPage } } } }"
    )
    user = body["data"]["user"]
    assert user["name"] == "User 7"
    assert [t["ticketId"] for t in user["tickets"]["nodes"]] == sorted(tickets_of(7), reverse=True)[:4]
    assert user["tickets"]["pageInfo"]["hasNextPage"] is True
    assert accounted(body) == (1, 1, {"Query": 1})


@pytest.mark.parametrize("first", [10, 100])
def test_student_courses_are_one_query_then_batched_course_reads(gateway: Gateway, first: int) -> None:
    body = gateway.query(
        f'{{ student(studentId: "{student_id(1)}") {{ name courses(first: {first}) {{ '
        "edges { grade enrolledOn node { courseId title } } pageInfo { hasNextPage } } } }"
    )
    student = body["data"]["student"]
    assert student["name"] == "Student 1"
    edges = student["courses"]["edges"]
    expected = [course_id(n) for n in range(COURSES, COURSES - first, -1)]
    assert [e["node"]["courseId"] for e in edges] == expected
    assert edges[0] == {
        "grade": f"G1-{COURSES}",
        "enrolledOn": "2026-09-01",
        "node": {"courseId": course_id(COURSES), "title": f"Course {COURSES}"},
    }
    assert student["courses"]["pageInfo"]["hasNextPage"] is True
    assert accounted(body) == (1 + math.ceil(first / 100), 2, {"Query": 1, "BatchGetItem": math.ceil(first / 100)})


@pytest.mark.parametrize("first", [10, 100])
def test_course_roster_reads_the_inverted_index_once(gateway: Gateway, first: int) -> None:
    body = gateway.query(
        f'{{ course(courseId: "{course_id(1)}") {{ title students(first: {first}) {{ '
        "edges { grade node { studentId name } } pageInfo { hasNextPage } } } }"
    )
    course = body["data"]["course"]
    assert course["title"] == "Course 1"
    edges = course["students"]["edges"]
    assert [e["node"]["studentId"] for e in edges] == [student_id(n) for n in range(1, first + 1)]
    assert edges[1] == {"grade": "G2-1", "node": {"studentId": student_id(2), "name": "Student 2"}}
    assert accounted(body) == (2 + math.ceil(first / 100), 2, {"Query": 1, "BatchGetItem": 1 + math.ceil(first / 100)})


def test_students_by_id_keep_order_and_give_null_for_missing(gateway: Gateway) -> None:
    wanted = [student_id(n) for n in range(STUDENTS, 0, -1)] + ["stu-nope", student_id(3), student_id(150)]
    body = gateway.query("query($ids: [ID!]!) { students(studentIds: $ids) { studentId name } }", {"ids": wanted})
    students = body["data"]["students"]
    assert [s and s["studentId"] for s in students] == [None if i == "stu-nope" else i for i in wanted]
    unique = len(set(wanted))
    assert accounted(body) == (math.ceil(unique / 100), 1, {"BatchGetItem": math.ceil(unique / 100)})


def test_project_and_its_workspace_are_one_batch(gateway: Gateway) -> None:
    body = gateway.query(
        '{ project(workspaceId: "ws-main", projectId:'
        f' "{project_id(PROJECTS)}") {{ title workspace {{ displayName }} }} }}'
    )
    assert body["data"]["project"] == {"title": f"Project {PROJECTS}", "workspace": {"displayName": "Main"}}
    assert accounted(body) == (1, 1, {"BatchGetItem": 1})
