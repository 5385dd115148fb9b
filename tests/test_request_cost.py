"""What a request costs the gateway: work it shares with other requests is done once, not per request."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import strawberry
import strawberry.schema.schema as strawberry_schema

from gateway.dynamo.store import Store
from gateway.server.app import EXPLAIN_HEADER
from gateway.surface.extensions import Accounting, ErrorPolicy, GatewaySchema, Limits
from tests.conftest import Gateway
from tests.contract import student_id
from tests.identity import Issuer

WORKSPACE = '{ workspace(workspaceId: "ws-main") { displayName projects(first: 3) { nodes { projectId } } } }'


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often strawberry's parser and graphql-core's validation ran: spies around the real functions."""
    counted: Counter[str] = Counter()

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def called(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return real(*args, **kwargs)

        return called

    for name in ("parse", "validate"):
        monkeypatch.setattr(strawberry_schema, name, spy(name, getattr(strawberry_schema, name)))
    return counted


@pytest.fixture
def fresh(gateway_factory: Callable[..., Gateway], contract_table: str) -> Iterator[Gateway]:
    """A gateway of its own, so no other test has sent it a document before."""
    with gateway_factory(contract_table) as running:
        yield running


def test_a_document_sent_again_is_parsed_and_validated_once(fresh: Gateway, calls: Counter[str]) -> None:
    answers = [fresh.query(WORKSPACE) for _ in range(3)]
    assert answers[0]["data"]["workspace"]["projects"]["nodes"]
    assert all(answer["data"] == answers[0]["data"] for answer in answers)
    assert calls == {"parse": 1, "validate": 1}


def test_an_invalid_document_is_refused_each_time_it_is_sent(fresh: Gateway, calls: Counter[str]) -> None:
    for _ in range(2):
        body = fresh.http.post("/graphql", json={"query": "{ workspace(workspaceId: 1) { nope } }"}).json()
        assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert "data" not in body
    assert calls["validate"] == 2


def test_a_document_an_admin_may_run_stays_refused_to_others(
    gateway_factory: Callable[..., Gateway], contract_table: str
) -> None:
    introspect = {"query": "{ __schema { queryType { name } } }"}
    with Issuer() as issuer, gateway_factory(contract_table, introspection="admin", **issuer.settings()) as gateway:

        def ask(grants: dict[str, Any]) -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {issuer.token('x', grants)}"}
            body: dict[str, Any] = gateway.http.post("/graphql", json=introspect, headers=headers).json()
            return body

        assert ask({"roles": ["admin"]})["data"] == {"__schema": {"queryType": {"name": "Query"}}}
        assert ask({})["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert ask({"roles": ["admin"]})["data"] == {"__schema": {"queryType": {"name": "Query"}}}


def test_the_estimate_of_a_document_sent_again_follows_its_variables(fresh: Gateway) -> None:
    query = "query($ids: [ID!]!) { students(studentIds: $ids) { studentId } }"

    def estimated_calls(count: int) -> int:
        ids = [student_id(n) for n in range(1, count + 1)]
        response = fresh.http.post(
            "/graphql", json={"query": query, "variables": {"ids": ids}}, headers={EXPLAIN_HEADER: "1"}
        )
        calls: int = response.json()["extensions"]["explain"]["calls"]
        return calls

    assert [estimated_calls(150), estimated_calls(50), estimated_calls(150)] == [2, 1, 2]


@strawberry.type
class _Other:
    @strawberry.field
    def hello(self) -> str:
        return "hello"


def test_a_document_valid_under_one_schema_is_not_taken_for_valid_under_another(
    fresh: Gateway, gateway_factory: Callable[..., Gateway], contract_table: str
) -> None:
    assert fresh.query(WORKSPACE)["data"]["workspace"]
    other = GatewaySchema(query=_Other, extensions=[ErrorPolicy, Limits, Accounting])
    with gateway_factory(contract_table, schema=other) as elsewhere:
        body = elsewhere.http.post("/graphql", json={"query": WORKSPACE}).json()
    assert body["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


def test_objects_built_at_start_up_are_left_out_of_garbage_collection_while_serving(fresh: Gateway) -> None:
    assert gc.get_freeze_count() > 0


def test_dynamodb_requests_carry_the_gateways_fixed_user_agent(fresh: Gateway) -> None:
    agents: list[str] = []
    store: Store = fresh.app.state.store
    store.on_send(lambda operation, headers, body: agents.append(headers["User-Agent"]))
    fresh.query(WORKSPACE)
    assert len(agents) == 2
    assert len(set(agents)) == 1 and agents[0].startswith("tablegraph")


def test_an_answer_holds_numbers_past_64_bits(gateway_factory: Callable[..., Gateway], contract_table: str) -> None:
    with gateway_factory(contract_table, max_calls=2**70) as gateway:
        response = gateway.http.post("/graphql", json={"query": WORKSPACE}, headers={EXPLAIN_HEADER: "1"})
    assert response.status_code == 200
    assert response.json()["extensions"]["explain"]["budget"]["calls"] == 2**70
