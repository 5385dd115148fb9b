"""What a request costs the gateway: work it shares with other requests is done once, not per request."""

from __future__ import annotations

import gc
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import strawberry
import strawberry.schema.schema as strawberry_schema

from gateway.dynamo.store import Store
from gateway.execution.reader import Reader
from gateway.server.app import EXPLAIN_HEADER, YOUNG_COLLECTION
from gateway.surface.extensions import Accounting, ErrorPolicy, GatewaySchema, Limits
from tests.support.contract import student_id
from tests.support.gateway import Gateway
from tests.support.identity import Issuer

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


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "interpreted"])
def test_what_a_request_read_is_freed_once_it_is_answered_without_a_collection(
    gateway_factory: Callable[..., Gateway], contract_table: str, monkeypatch: pytest.MonkeyPatch, compiled: bool
) -> None:
    """graphql-core's executor holds its own bound methods, a cycle through the context to the request's reader and
    all it read; the executor lets go of them with the response, so all of it is freed without the collector. (A
    request that errs is left to the collector: an exception's traceback holds the frames it passed through.)"""
    readers: list[weakref.ref[Reader]] = []
    made = Reader.__init__

    def spy(self: Reader, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        readers.append(weakref.ref(self))

    monkeypatch.setattr(Reader, "__init__", spy)
    with gateway_factory(contract_table, compiled_execution=compiled) as gateway:
        gc.collect()
        gc.disable()
        try:
            # A document's first request takes strawberry's path, the next one the kept document's.
            answers = [gateway.query(WORKSPACE), gateway.query(WORKSPACE)]
            deadline = time.monotonic() + 5
            while any(reader() is not None for reader in readers) and time.monotonic() < deadline:
                time.sleep(0.01)  # the server's thread ends the request just after the client has the answer
            alive = sum(reader() is not None for reader in readers)
        finally:
            gc.enable()
    assert answers[0]["data"]["workspace"]["projects"]["nodes"] and answers[1] == answers[0]
    assert len(readers) == 2
    assert alive == 0


def test_the_young_objects_collection_waits_for_more_objects_while_serving(
    gateway_factory: Callable[..., Gateway], contract_table: str
) -> None:
    before = gc.get_threshold()
    with gateway_factory(contract_table):
        assert gc.get_threshold() == (max(YOUNG_COLLECTION, before[0]), *before[1:])
    assert gc.get_threshold() == before


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
