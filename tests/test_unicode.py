"""Text that is not valid Unicode: refused on the way in, and stored items holding it answered item by item."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import strawberry

from gateway.config import Settings
from gateway.dynamo.wire import Unreadable, checked, is_text, tolerant_decode_item
from gateway.server.documents import Documents
from gateway.surface.extensions import Accounting, ErrorPolicy, GatewaySchema
from tests.conftest import Gateway

LONE = "x\ud800y"
UNREADABLE = "UNREADABLE_ITEM"


def post(gateway: Gateway, body: Any, **headers: str) -> Any:
    """POST ``body`` as JSON with ASCII escapes, as most clients write a lone surrogate (``"\\ud800"``)."""
    gateway.sent.clear()
    return gateway.http.post(
        "/graphql", content=json.dumps(body), headers={"Content-Type": "application/json", **headers}
    )


def put(dynamodb: Any, table: str, *items: dict[str, Any]) -> None:
    """Items written with plain boto3, which DynamoDB (Local and AWS alike) accepts with lone surrogates."""
    for item in items:
        wire = {name: {"N": str(value)} if isinstance(value, int) else {"S": value} for name, value in item.items()}
        dynamodb.put_item(TableName=table, Item=wire)


def codes(body: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    return sorted((tuple(error["path"]), error["extensions"]["code"]) for error in body.get("errors", []))


@pytest.fixture
def workspace(dynamodb: Any, fresh_table: str) -> str:
    """ws-1 with three projects, the middle one's title not valid Unicode."""
    put(
        dynamodb,
        fresh_table,
        {"PK": "WS#ws-1", "SK": "META", "displayName": "One", "projectCount": 3},
        {"PK": "WS#ws-1", "SK": "PROJ#2026-0001", "title": "first", "status": "active"},
        {"PK": "WS#ws-1", "SK": "PROJ#2026-0002", "title": LONE, "status": "active"},
        {"PK": "WS#ws-1", "SK": "PROJ#2026-0003", "title": "third", "status": "active"},
    )
    return fresh_table


def test_a_title_that_is_not_unicode_is_refused_and_nothing_is_written(
    gateway_factory: Callable[..., Gateway], workspace: str, dynamodb: Any
) -> None:
    mutation = 'mutation($t: String!) { createProject(input: {workspaceId: "ws-1", title: $t}) { __typename } }'
    literal = 'mutation { createProject(input: {workspaceId: "ws-1", title: "' + LONE + '"}) { __typename } }'
    with gateway_factory(workspace) as gateway:
        for body in ({"query": mutation, "variables": {"t": LONE}}, {"query": literal}):
            response = post(gateway, body)
            assert response.status_code == 400
            assert response.json()["errors"][0]["extensions"] == {"code": "BAD_USER_INPUT"}
            assert not gateway.sent
    stored = dynamodb.query(
        TableName=workspace, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": "WS#ws-1"}}
    )["Items"]
    assert len(stored) == 4
    assert next(item for item in stored if item["SK"]["S"] == "META")["projectCount"] == {"N": "3"}


PAGE = (
    '{ workspace(workspaceId: "ws-1") { projects { totalCount nodes { projectId title status }'
    " edges { cursor node { id title } } } } }"
)


@pytest.mark.parametrize("fast", [True, False], ids=["fast decoder", "botocore"])
def test_a_stored_title_that_is_not_unicode_is_an_error_at_that_title_and_the_page_stays_whole(
    gateway_factory: Callable[..., Gateway], workspace: str, fast: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="gateway.execution.reader")
    with gateway_factory(workspace, fast_decode=fast) as gateway:
        response = post(gateway, {"query": PAGE}, **{"X-Request-Id": "req-unicode"})
    assert response.status_code == 200
    body = response.json()
    projects = body["data"]["workspace"]["projects"]
    assert projects["totalCount"] == 3
    assert projects["nodes"] == [
        {"projectId": "2026-0003", "title": "third", "status": "active"},
        {"projectId": "2026-0002", "title": None, "status": "active"},
        {"projectId": "2026-0001", "title": "first", "status": "active"},
    ]
    assert [edge["node"]["title"] for edge in projects["edges"]] == ["third", None, "first"]
    assert all(edge["cursor"] and edge["node"]["id"] for edge in projects["edges"])
    assert codes(body) == [
        (("workspace", "projects", "edges", 1, "node", "title"), UNREADABLE),
        (("workspace", "projects", "nodes", 1, "title"), UNREADABLE),
    ]
    logged = [record.getMessage() for record in caplog.records if "req-unicode" in record.getMessage()]
    assert len(logged) == 1 and "PROJ#2026-0002" in logged[0] and "'title'" in logged[0]


def test_a_point_read_of_such_an_item_answers_the_rest_of_it(
    gateway_factory: Callable[..., Gateway], workspace: str
) -> None:
    query = '{ project(workspaceId: "ws-1", projectId: "2026-0002") { projectId title status } }'
    with gateway_factory(workspace) as gateway:
        body = post(gateway, {"query": query}).json()
    assert body["data"] == {"project": {"projectId": "2026-0002", "title": None, "status": "active"}}
    assert codes(body) == [(("project", "title"), UNREADABLE)]


def test_a_grade_that_is_not_unicode_leaves_the_roster_whole(
    gateway_factory: Callable[..., Gateway], fresh_table: str, dynamodb: Any
) -> None:
    """One tenant's enrolment cannot blank what every caller of the shared course sees."""
    items: list[dict[str, Any]] = [{"PK": "CRS#c-1", "SK": "METADATA", "title": "Physics"}]
    for n, grade in enumerate(["A", "\ud800", "B"], start=1):
        items.append({"PK": f"STU#s-{n}", "SK": "PROFILE", "name": f"Student {n}"})
        items.append(
            {"PK": f"STU#s-{n}", "SK": "ENROLL#CRS#c-1", "GSI1PK": "CRS#c-1", "GSI1SK": f"STU#s-{n}", "grade": grade}
        )
    put(dynamodb, fresh_table, *items)
    query = '{ course(courseId: "c-1") { students { edges { grade node { name } } } } }'
    with gateway_factory(fresh_table) as gateway:
        body = post(gateway, {"query": query}).json()
    assert body["data"]["course"]["students"]["edges"] == [
        {"grade": "A", "node": {"name": "Student 1"}},
        {"grade": None, "node": {"name": "Student 2"}},
        {"grade": "B", "node": {"name": "Student 3"}},
    ]
    assert codes(body) == [(("course", "students", "edges", 1, "grade"), UNREADABLE)]


@pytest.fixture
def bad_key(dynamodb: Any, fresh_table: str) -> str:
    """ws-1 with three projects, the middle one's key not valid Unicode: no id a client could send names it."""
    put(
        dynamodb,
        fresh_table,
        {"PK": "WS#ws-1", "SK": "META", "displayName": "One"},
        {"PK": "WS#ws-1", "SK": "PROJ#2026-0001", "title": "first"},
        {"PK": "WS#ws-1", "SK": "PROJ#2026-0002\udc00", "title": "unnamed"},
        {"PK": "WS#ws-1", "SK": "PROJ#2026-0003", "title": "third"},
    )
    return fresh_table


@pytest.mark.parametrize("fast", [True, False], ids=["fast decoder", "botocore"])
def test_an_item_whose_key_is_not_unicode_is_of_unknown_shape_and_pages_read_past_it(
    gateway_factory: Callable[..., Gateway], bad_key: str, fast: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="gateway.execution.reader")
    query = (
        'query($after: String) { workspace(workspaceId: "ws-1") { projects(first: 1, after: $after) {'
        " nodes { projectId } pageInfo { hasNextPage endCursor } } } }"
    )
    seen: list[str] = []
    after = None
    with gateway_factory(bad_key, fast_decode=fast) as gateway:
        for _ in range(3):
            response = post(gateway, {"query": query, "variables": {"after": after}}, **{"X-Request-Id": "req-key"})
            body = response.json()
            assert response.status_code == 200 and "errors" not in body, body
            page = body["data"]["workspace"]["projects"]
            seen += [node["projectId"] for node in page["nodes"]]
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
    assert seen == ["2026-0003", "2026-0001"]
    assert any("req-key" in record.getMessage() and "'SK'" in record.getMessage() for record in caplog.records)


def test_an_update_answers_with_the_item_and_withholds_only_what_cannot_be_served(
    gateway_factory: Callable[..., Gateway], fresh_table: str, dynamodb: Any
) -> None:
    put(
        dynamodb,
        fresh_table,
        {"PK": "WS#ws-1", "SK": "META", "displayName": "One"},
        {"PK": "WS#ws-1", "SK": "PROJ#2026-0001", "title": "first", "status": "\udc00"},
    )
    mutation = (
        'mutation { updateProject(input: {workspaceId: "ws-1", projectId: "2026-0001", expectedVersion: 0,'
        ' title: "renamed"}) { ... on Project { title status } ... on MutationError { message } } }'
    )
    with gateway_factory(fresh_table) as gateway:
        body = post(gateway, {"query": mutation}).json()
    assert body["data"] == {"updateProject": {"title": "renamed", "status": None}}
    assert codes(body) == [(("updateProject", "status"), UNREADABLE)]


def test_a_cascade_delete_removes_members_that_are_not_unicode(
    gateway_factory: Callable[..., Gateway], workspace: str, dynamodb: Any
) -> None:
    """Reads that dropped such items made a cascading delete believe the workspace kept gaining members."""
    mutation = 'mutation { deleteWorkspace(input: {workspaceId: "ws-1", cascade: true}) { __typename } }'
    with gateway_factory(workspace) as gateway:
        body = post(gateway, {"query": mutation}).json()
    assert body == {"data": {"deleteWorkspace": {"__typename": "Deleted"}}}, body
    left = dynamodb.query(
        TableName=workspace, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": "WS#ws-1"}}
    )["Items"]
    assert left == []


@strawberry.type
class _Echo:
    @strawberry.field
    def text(self) -> str:
        return LONE


@pytest.fixture
def echo(gateway_factory: Callable[..., Gateway], contract_table: str) -> Iterator[Gateway]:
    schema = GatewaySchema(query=_Echo, extensions=[ErrorPolicy, Accounting])
    with gateway_factory(contract_table, schema=schema) as running:
        yield running


def test_an_answer_that_holds_such_text_anyway_is_sent_with_replacement_characters_not_a_500(
    echo: Gateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="gateway.server.http")
    response = post(echo, {"query": "{ text }"})
    assert response.status_code == 200
    assert response.json() == {"data": {"text": "x\ufffdy"}}
    assert "not valid Unicode" in caplog.text


def test_the_tolerant_decoder_names_what_it_cannot_serve_and_keeps_the_rest() -> None:
    raw = {
        "PK": {"S": "WS#ws-1"},
        "SK": {"S": "PROJ#1"},
        "title": {"S": LONE},
        "tags": {"L": [{"S": "ok"}, {"M": {"\udc00": {"N": "1"}}}]},
        "future": {"Q": "a type DynamoDB may add"},
        "n": {"N": "1.5"},
    }
    item = tolerant_decode_item(raw)
    assert isinstance(item, Unreadable)
    assert item.invalid == {"title", "tags", "future"}
    assert item["title"] == LONE and item["future"] == {"Q": "a type DynamoDB may add"}
    assert item["PK"] == "WS#ws-1" and item["n"] == Decimal("1.5")
    assert type(tolerant_decode_item({"PK": {"S": "é"}, "s": {"SS": ["a"]}})) is dict


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain", True),
        ("é😀", True),
        ("\ud83d\ude00", False),  # a pair that Python holds as two code points is still not text
        ("\ud800", False),
        ({"k": ["a", {"b"}]}, True),
        ({"k": ["a", {"\udfff"}]}, False),
        ({"\ud800": 1}, False),
        (Decimal(1), True),
    ],
)
def test_is_text_finds_surrogates_at_any_depth(value: Any, text: bool) -> None:
    assert is_text(value) is text
    assert isinstance(checked({"a": value}), Unreadable) is not text


def test_a_manifest_document_that_is_not_unicode_is_refused_at_start(tmp_path: Path) -> None:
    manifest = tmp_path / "documents.json"
    manifest.write_text(json.dumps({"0" * 64: "{ __typename } # \ud800"}))
    with pytest.raises(ValueError, match="not valid Unicode"):
        Documents.from_settings(Settings(persisted_queries="strict", persisted_documents=manifest))
