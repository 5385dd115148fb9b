"""The GraphQL-over-HTTP contract: methods, media types and status codes; batching, trusted documents, CORS."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.config import Settings
from gateway.errors import PersistedQueryNotFound, PersistedQueryNotSupported
from gateway.server.auth import digest
from gateway.server.documents import Documents, sha256
from tests.conftest import Gateway

GR = "application/graphql-response+json"
JSON = "application/json"
QUERY = '{ workspace(workspaceId: "ws-main") { displayName } }'
DATA = {"workspace": {"displayName": "Main"}}
API_KEY = "tg_contract_key_0123456789"
ORIGIN = "https://app.example"


def post(gateway: Gateway, body: Any, accept: str | None = GR, **headers: str) -> httpx.Response:
    gateway.sent.clear()
    request = gateway.http.build_request("POST", "/graphql", json=body, headers=headers)
    if accept is None:
        del request.headers["accept"]
    else:
        request.headers["accept"] = accept
    return gateway.http.send(request)


def media(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";")[0]


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, GR),
        (GR, GR),
        (JSON, JSON),
        ("*/*", JSON),
        (f"{JSON};q=0.5, {GR}", GR),
        (f"{GR}; charset=utf-8, {JSON}; charset=utf-8", GR),
        (f"{GR};q=0, {JSON}", JSON),
    ],
)
def test_the_response_media_type_follows_accept(gateway: Gateway, accept: str | None, expected: str) -> None:
    response = post(gateway, {"query": QUERY}, accept)
    assert (response.status_code, media(response)) == (200, expected)
    assert response.headers["content-type"].endswith("charset=utf-8")
    assert response.json() == {"data": DATA}


def test_an_accept_without_a_graphql_media_type_is_406(gateway: Gateway) -> None:
    response = post(gateway, {"query": QUERY}, "text/plain")
    assert response.status_code == 406
    assert not gateway.sent


REQUEST_ERRORS = {
    "parse": ({"query": "{"}, "GRAPHQL_PARSE_FAILED"),
    "validation": ({"query": "{ nope }"}, "GRAPHQL_VALIDATION_FAILED"),
    "variables": ({"query": "query($id: ID!) { workspace(workspaceId: $id) { displayName } }"}, "BAD_USER_INPUT"),
    "operation": ({"query": QUERY, "operationName": "Missing"}, "BAD_USER_INPUT"),
    "no operation name": ({"query": "query A { __typename } query B { __typename }"}, "BAD_USER_INPUT"),
}


@pytest.mark.parametrize("case", REQUEST_ERRORS)
@pytest.mark.parametrize(("accept", "status"), [(GR, 400), (JSON, 200)])
def test_a_request_error_has_no_data_and_its_status_depends_on_the_media_type(
    gateway: Gateway, case: str, accept: str, status: int
) -> None:
    body, code = REQUEST_ERRORS[case]
    response = post(gateway, body, accept)
    assert (response.status_code, media(response)) == (status, accept)
    assert "data" not in response.json()
    assert response.json()["errors"][0]["extensions"]["code"] == code
    assert not gateway.sent


CREATE = (
    'mutation Create {{ createWorkspace(input: {{workspaceId: "{workspace}", displayName: "D"}}) {{ __typename }} }}'
)
READ = 'query Read { workspace(workspaceId: "ws-main") { displayName } }'


def _workspace_exists(dynamodb: Any, table: str, workspace: str) -> bool:
    key = {"PK": {"S": f"WS#{workspace}"}, "SK": {"S": "META"}}
    return "Item" in dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)


@pytest.mark.parametrize("mutation_first", [True, False])
@pytest.mark.parametrize(("accept", "status"), [(GR, 400), (JSON, 200)])
def test_several_operations_without_an_operation_name_run_none_of_them(
    gateway: Gateway, dynamodb: Any, contract_table: str, mutation_first: bool, accept: str, status: int
) -> None:
    """GraphQL's GetOperation: with no operationName a document must hold exactly one operation; else it is a
    request error, and the first one does not run in its place."""
    workspace = f"several-{uuid.uuid4().hex[:8]}"
    create = CREATE.format(workspace=workspace)
    response = post(gateway, {"query": f"{create} {READ}" if mutation_first else f"{READ} {create}"}, accept)
    assert (response.status_code, media(response)) == (status, accept)
    body = response.json()
    assert "data" not in body
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "operation name" in error["message"]
    assert not gateway.sent
    assert not _workspace_exists(dynamodb, contract_table, workspace)


def test_several_operations_over_get_without_a_name_are_a_request_error_not_a_refused_mutation(
    gateway: Gateway,
) -> None:
    gateway.sent.clear()
    query = f"{CREATE.format(workspace='over-get')} {READ}"
    response = gateway.http.get("/graphql", params={"query": query}, headers={"Accept": GR})
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert not gateway.sent


def test_the_operation_named_of_several_runs_alone(gateway: Gateway, dynamodb: Any, contract_table: str) -> None:
    workspace = f"named-{uuid.uuid4().hex[:8]}"
    response = post(gateway, {"query": f"{CREATE.format(workspace=workspace)} {READ}", "operationName": "Read"})
    assert (response.status_code, response.json()) == (200, {"data": DATA})
    assert set(gateway.sent) == {"BatchGetItem"}
    assert not _workspace_exists(dynamodb, contract_table, workspace)


def test_a_field_error_is_a_partial_response_and_200(gateway: Gateway) -> None:
    response = post(gateway, {"query": '{ workspace(workspaceId: "a#b") { displayName } }'}, GR)
    assert response.status_code == 200
    assert response.json()["data"] == {"workspace": None}


def test_get_runs_a_query_from_the_url(gateway: Gateway) -> None:
    params = {
        "query": "query($id: ID!) { workspace(workspaceId: $id) { displayName } }",
        "variables": json.dumps({"id": "ws-main"}),
    }
    response = gateway.http.get("/graphql", params=params, headers={"Accept": GR})
    assert response.status_code == 200
    assert response.json() == {"data": DATA}
    assert response.headers["cache-control"] == "no-store"


def test_a_mutation_over_get_is_405_and_not_run(gateway: Gateway) -> None:
    gateway.sent.clear()
    mutation = f'mutation {{ createWorkspace(input: {{workspaceId: "get-{uuid.uuid4().hex[:8]}"}}) {{ __typename }} }}'
    response = gateway.http.get("/graphql", params={"query": mutation}, headers={"Accept": GR})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert not gateway.sent


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "OPTIONS"])
def test_other_methods_are_405(gateway: Gateway, method: str) -> None:
    response = gateway.http.request(method, "/graphql", headers={"Accept": GR})
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", f"{JSON}; charset=latin-1"]
)
def test_a_post_body_must_be_json(gateway: Gateway, content_type: str | None) -> None:
    headers = {"Accept": GR} | ({"Content-Type": content_type} if content_type else {})
    response = gateway.http.post("/graphql", content=json.dumps({"query": QUERY}), headers=headers)
    assert response.status_code == 415


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[]",
        '["{ __typename }"]',
        '{"query": 5}',
        '{"query": "{ __typename }", "variables": [1]}',
        "{}",
        "7",
    ],
)
@pytest.mark.parametrize("accept", [GR, JSON])
def test_a_malformed_request_is_400_in_either_media_type(gateway: Gateway, body: str, accept: str) -> None:
    headers = {"Accept": accept, "Content-Type": JSON}
    response = gateway.http.post("/graphql", content=body, headers=headers)
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


@pytest.fixture(scope="module")
def configured(gateway_factory: Callable[..., Gateway], contract_table: str) -> Iterator[Gateway]:
    settings = {
        "auth_open": False,
        "api_keys": json.dumps({digest(API_KEY): {"roles": ["admin"]}}),
        "max_batch": 2,
        "max_body_bytes": 4096,
        "cors_origins": ORIGIN,
    }
    with gateway_factory(contract_table, **settings) as running:
        yield running


@pytest.mark.parametrize("accept", [GR, JSON])
def test_missing_credentials_are_401_in_the_negotiated_media_type(configured: Gateway, accept: str) -> None:
    response = post(configured, {"query": QUERY}, accept)
    assert (response.status_code, media(response)) == (401, accept)
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert not configured.sent


def test_a_body_over_the_limit_is_413(configured: Gateway) -> None:
    response = post(configured, {"query": QUERY, "variables": {"pad": "x" * 5000}}, GR, **{"X-Api-Key": API_KEY})
    assert response.status_code == 413


def test_a_batch_runs_each_operation_when_enabled(configured: Gateway) -> None:
    key = {"X-Api-Key": API_KEY}
    both = post(configured, [{"query": QUERY}, {"query": "{ nope }"}], JSON, **key)
    assert both.status_code == 200
    first, second = both.json()
    assert first == {"data": DATA}
    assert second["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert post(configured, [{"query": QUERY}] * 3, JSON, **key).status_code == 400


def test_cors_admits_only_the_allowed_origins(configured: Gateway) -> None:
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    allowed = configured.http.options("/graphql", headers={"Origin": ORIGIN, **preflight})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    other = configured.http.options("/graphql", headers={"Origin": "https://evil.example", **preflight})
    assert "access-control-allow-origin" not in other.headers
    actual = post(configured, {"query": QUERY}, GR, Origin=ORIGIN, **{"X-Api-Key": API_KEY})
    assert actual.headers["access-control-allow-origin"] == ORIGIN
    assert "x-request-id" in actual.headers["access-control-expose-headers"]


def test_the_graphiql_page_is_served_under_a_strict_policy(gateway: Gateway) -> None:
    page = gateway.http.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    nonce = re.search(r"'nonce-([^']+)'", policy)
    assert nonce is not None
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", page.text)
    assert inline and all(f'nonce="{nonce.group(1)}"' in attributes for attributes in inline)
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "shouldPersistHeaders: false" in page.text


def apq(document: str | None, digest_of: str) -> dict[str, Any]:
    body: dict[str, Any] = {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha256(digest_of)}}}
    if document is not None:
        body["query"] = document
    return body


def test_automatic_persisted_queries_run_by_hash_once_registered(gateway: Gateway) -> None:
    document = '{ workspace(workspaceId: "ws-empty") { displayName } }  # ' + uuid.uuid4().hex
    unknown = post(gateway, apq(None, document), GR)
    assert unknown.status_code == 400
    assert unknown.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"
    assert post(gateway, apq(None, document), JSON).status_code == 200
    assert post(gateway, apq(document, document), GR).json() == {"data": {"workspace": {"displayName": "Empty"}}}
    by_hash = gateway.http.get(
        "/graphql", params={"extensions": json.dumps(apq(None, document)["extensions"])}, headers={"Accept": GR}
    )
    assert by_hash.json() == {"data": {"workspace": {"displayName": "Empty"}}}
    mismatch = post(gateway, apq(QUERY, document), GR)
    assert mismatch.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


@pytest.fixture(scope="module")
def strict(
    gateway_factory: Callable[..., Gateway], contract_table: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gateway]:
    manifest = tmp_path_factory.mktemp("documents") / "persisted-documents.json"
    manifest.write_text(json.dumps({sha256(QUERY): QUERY}))
    with gateway_factory(contract_table, persisted_queries="strict", persisted_documents=manifest) as running:
        yield running


def test_strict_mode_runs_only_registered_documents(strict: Gateway) -> None:
    assert post(strict, apq(None, QUERY), GR).json() == {"data": DATA}
    assert post(strict, {"documentId": f"sha256:{sha256(QUERY)}"}, GR).json() == {"data": DATA}
    assert post(strict, {"query": QUERY}, GR).json() == {"data": DATA}
    other = post(strict, {"query": "{ __typename }"}, GR)
    assert other.status_code == 400
    assert other.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_REQUIRED"
    registering = post(strict, apq("{ __typename }", "{ __typename }"), GR)
    assert registering.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_REQUIRED"
    assert not strict.sent


def test_a_manifest_entry_whose_hash_is_wrong_is_refused_at_start(tmp_path: Path) -> None:
    manifest = tmp_path / "documents.json"
    manifest.write_text(json.dumps({sha256("{ a }"): "{ b }"}))
    with pytest.raises(ValueError, match="does not have that SHA-256"):
        Documents.from_settings(Settings(persisted_queries="strict", persisted_documents=manifest))


def test_persisted_queries_can_be_off_and_remembered_ones_are_bounded() -> None:
    with pytest.raises(PersistedQueryNotSupported):
        Documents("off").resolve(None, apq(None, QUERY)["extensions"], None)
    documents = Documents("apq", capacity=2)
    for n in range(3):
        text = f"{{ n{n}: __typename }}"
        documents.resolve(text, apq(text, text)["extensions"], None)
    with pytest.raises(PersistedQueryNotFound):
        documents.resolve(None, apq(None, "{ n0: __typename }")["extensions"], None)
    assert documents.resolve(None, apq(None, "{ n2: __typename }")["extensions"], None) == "{ n2: __typename }"


def test_only_documents_that_parse_and_fit_are_remembered() -> None:
    documents = Documents("apq")
    garbage = "not { graphql"
    huge = "{ " + " ".join(f"a{n}: __typename" for n in range(4000)) + " }"
    for text in (garbage, huge):
        assert documents.resolve(text, apq(text, text)["extensions"], None) == text
        with pytest.raises(PersistedQueryNotFound):
            documents.resolve(None, apq(None, text)["extensions"], None)


def test_json_nested_past_any_sensible_depth_is_a_bad_request_not_a_crash(gateway: Gateway) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    posted = gateway.http.post("/graphql", content=deep, headers={"Content-Type": "application/json"})
    assert posted.status_code == 400
    assert posted.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    shallower = "[" * 5_000 + "]" * 5_000  # still past the parser, and fits in a URL
    got = gateway.http.get("/graphql", params={"query": "{ __typename }", "variables": shallower})
    assert got.status_code == 400
