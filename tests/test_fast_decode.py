"""The gateway answers the same whether ``dynamo.wire`` or botocore's own parser decodes DynamoDB's responses."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import Gateway
from tests.contract import course_id, project_id, student_id

QUERIES = [
    (
        '{ workspace(workspaceId: "ws-main") { displayName region'
        " seatLimit projects(first: 3) { nodes { projectId title } } } }"
    ),
    (
        '{ organization(orgName: "o1") { orgName users(first: 12) { nodes'
        " { username tickets(first: 2) { nodes { ticketId } } } } } }"
    ),
    (
        f'{{ student(studentId: "{student_id(1)}") {{ year courses(first:'
        " 100) { edges { grade node { credits } } } } }"
    ),
    (
        f'{{ course(courseId: "{course_id(1)}") {{ title students(first:'
        " 30) { edges { node { studentId name } } } } }"
    ),
    f'{{ project(workspaceId: "ws-main", projectId: "{project_id(2)}") {{ title workspace {{ displayName }} }} }}',
    '{ workspace(workspaceId: "ws-big") { projects(first: 30) { nodes { projectId } pageInfo { hasNextPage } } } }',
]


@pytest.mark.parametrize("query", QUERIES)
def test_fast_and_stock_decoding_answer_alike(
    gateway_factory: Callable[..., Gateway], contract_table: str, query: str
) -> None:
    answers = []
    for fast in (True, False):
        with gateway_factory(contract_table, fast_decode=fast) as gateway:
            body = gateway.query(query)
        assert "errors" not in body, body
        answers.append((body["data"], body["extensions"]["dynamodb"]["operations"]))
    assert answers[0] == answers[1]
