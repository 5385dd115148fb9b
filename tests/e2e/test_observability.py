"""What an operator sees: /metrics moving by what requests did, readiness apart from liveness, access log lines,
and traces that continue the caller's."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from prometheus_client.parser import text_string_to_metric_families

from gateway.config import Settings
from tests.support.faults import FaultProxy, Rule
from tests.support.gateway import Gateway

WORKSPACE = (
    'query MainWorkspace { workspace(workspaceId: "ws-main") { displayName projects(first: 2) { nodes { title } } } }'
)
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _scrape(gateway: Gateway) -> Samples:
    response = gateway.http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def _settings(endpoint: str, table: str) -> Settings:
    return Settings(endpoint_url=endpoint, table=table, cursor_secret="test-secret", auth_open=True)


def _moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_metrics_move_by_what_a_request_did(gateway: Gateway) -> None:
    """Twice: the second time, a kept document's query answered without strawberry's extensions is counted alike."""
    for _ in range(2):
        before = _scrape(gateway)
        body = gateway.query(WORKSPACE)
        after = _scrape(gateway)
        cost = body["extensions"]["dynamodb"]
        assert cost["operations"] == {"BatchGetItem": 1, "Query": 1}
        for operation, calls in cost["operations"].items():
            assert _moved(before, after, "tablegraph_dynamodb_calls_total", operation=operation) == calls
            assert (
                _moved(before, after, "tablegraph_dynamodb_call_duration_seconds_count", operation=operation) == calls
            )
        capacity = sum(
            _moved(before, after, "tablegraph_dynamodb_consumed_capacity_total", operation=operation)
            for operation in cost["operations"]
        )
        assert capacity == pytest.approx(cost["consumedCapacity"])
        assert _moved(before, after, "tablegraph_graphql_requests_total", operation="MainWorkspace", outcome="ok") == 1
        assert (
            _moved(before, after, "tablegraph_graphql_request_duration_seconds_count", operation="MainWorkspace") == 1
        )
        errors = [key for key, value in after.items() if key[0] == "tablegraph_dynamodb_errors_total" and value]
        assert all(after[key] == before.get(key) for key in errors)


def test_a_request_on_a_missing_table_counts_unavailable_and_the_dynamodb_error(
    gateway_factory: Callable[..., Gateway],
) -> None:
    with gateway_factory("no-such-table") as broken:
        before = _scrape(broken)
        body = broken.query(WORKSPACE)
        after = _scrape(broken)
    assert body["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
    calls = body["extensions"]["dynamodb"]["operations"]
    assert _moved(before, after, "tablegraph_graphql_requests_total", operation="MainWorkspace", outcome="UNAVAILABLE")
    for operation, count in calls.items():
        assert _moved(before, after, "tablegraph_dynamodb_calls_total", operation=operation) == count
        moved = _moved(
            before, after, "tablegraph_dynamodb_errors_total", operation=operation, code="ResourceNotFoundException"
        )
        assert moved == count


def test_a_throttled_attempt_is_counted_though_its_retry_answered(endpoint: str, contract_table: str) -> None:
    rule = Rule("throttle", operations=frozenset({"BatchGetItem"}), times=1)
    with FaultProxy(endpoint, [rule]) as proxy, Gateway(_settings(proxy.url, contract_table)) as gateway:
        before = _scrape(gateway)
        query = {"query": '{ workspace(workspaceId: "ws-main") { displayName } }'}
        body = gateway.http.post("/graphql", json=query).json()
        after = _scrape(gateway)
    assert body["data"] == {"workspace": {"displayName": "Main"}}
    assert proxy.faults["throttle"] == 1
    assert _moved(before, after, "tablegraph_dynamodb_throttled_attempts_total", operation="BatchGetItem") == 1
    assert _moved(before, after, "tablegraph_dynamodb_calls_total", operation="BatchGetItem") == 1
    assert _moved(before, after, "tablegraph_graphql_requests_total", operation="anonymous", outcome="ok") == 1


def test_refused_requests_are_counted_by_their_code(gateway: Gateway) -> None:
    before = _scrape(gateway)
    assert gateway.http.post("/graphql", content=b"{", headers={"content-type": "application/json"}).status_code == 400
    assert gateway.http.post("/graphql", json={"query": "{ nope }"}).json()["errors"]
    after = _scrape(gateway)
    assert _moved(before, after, "tablegraph_graphql_requests_total", operation="none", outcome="BAD_REQUEST") == 1
    moved = _moved(
        before, after, "tablegraph_graphql_requests_total", operation="anonymous", outcome="GRAPHQL_VALIDATION_FAILED"
    )
    assert moved == 1


def test_operation_names_past_the_limit_share_one_label(gateway_factory: Callable[..., Gateway]) -> None:
    with gateway_factory("no-such-table", metrics_operation_names=2) as gateway:
        before = _scrape(gateway)
        for name in ("First", "Second", "Third", "Fourth", "First"):
            gateway.http.post("/graphql", json={"query": f"query {name} {{ __typename }}"})
        after = _scrape(gateway)
    assert _moved(before, after, "tablegraph_graphql_requests_total", operation="First", outcome="ok") == 2
    assert _moved(before, after, "tablegraph_graphql_requests_total", operation="Second", outcome="ok") == 1
    assert _moved(before, after, "tablegraph_graphql_requests_total", operation="other", outcome="ok") == 2
    assert ("tablegraph_graphql_requests_total", frozenset({("operation", "Third"), ("outcome", "ok")})) not in after


def test_metrics_can_be_turned_off(gateway_factory: Callable[..., Gateway]) -> None:
    with gateway_factory("no-such-table", metrics=False) as gateway:
        assert gateway.http.get("/metrics").status_code == 404


def test_readiness_needs_the_table_while_liveness_does_not(
    gateway_factory: Callable[..., Gateway], gateway: Gateway
) -> None:
    assert gateway.http.get("/readyz").status_code == 200
    assert gateway.http.get("/healthz").json() == {"status": "ok"}
    with gateway_factory("no-such-table") as broken:
        broken.sent.clear()
        assert broken.http.get("/healthz").status_code == 200
        assert not broken.sent, "liveness asks DynamoDB nothing"
        ready = broken.http.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["status"] == "unavailable"


def test_each_request_writes_one_json_access_log_line(gateway: Gateway, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tablegraph.access")
    response = gateway.http.post(
        "/graphql", json={"query": WORKSPACE}, headers={"x-request-id": "req-42", "x-tablegraph-accounting": "1"}
    )
    cost = response.json()["extensions"]["dynamodb"]
    (record,) = [record for record in caplog.records if record.name == "tablegraph.access"]
    line = json.loads(record.getMessage())
    assert line["requestId"] == "req-42"
    assert line["operation"] == "MainWorkspace"
    assert line["outcome"] == "ok"
    assert line["status"] == 200
    assert line["method"] == "POST"
    assert line["path"] == "/graphql"
    assert line["dynamodbCalls"] == cost["calls"]
    assert line["dynamodbRounds"] == cost["rounds"]
    assert line["consumedCapacity"] == cost["consumedCapacity"]
    assert line["durationMs"] > 0


def test_a_traced_request_continues_the_callers_trace_with_dynamodb_child_spans(
    endpoint: str, contract_table: str
) -> None:
    """Twice, in two traces: the document's first request goes through strawberry's extensions, the second is a
    kept document's query answered without them (``gateway/surface/kept.py``); both are traced alike."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    parent_id = "00f067aa0ba902b7"
    traces: dict[str, dict[str, Any]] = {"4bf92f3577b34da6a3ce929d0e0e4736": {}, "5bf92f3577b34da6a3ce929d0e0e4737": {}}
    with Gateway(_settings(endpoint, contract_table), tracer_provider=provider) as gateway:
        for trace_id in traces:
            traces[trace_id] = gateway.query(WORKSPACE, traceparent=f"00-{trace_id}-{parent_id}-01")
    provider.shutdown()
    finished = exporter.get_finished_spans()
    assert {format(span.context.trace_id, "032x") for span in finished} == set(traces)
    for trace_id, body in traces.items():
        spans = [span for span in finished if format(span.context.trace_id, "032x") == trace_id]
        (operation,) = [span for span in spans if span.name == "query MainWorkspace"]
        assert operation.attributes is not None and operation.attributes["graphql.operation.name"] == "MainWorkspace"
        (server,) = [span for span in spans if span.kind == SpanKind.SERVER]
        assert server.parent is not None and format(server.parent.span_id, "016x") == parent_id
        assert operation.parent is not None and operation.parent.span_id == server.context.span_id
        dynamodb = [span for span in spans if span.name.startswith("DynamoDB.")]
        assert sorted(span.name for span in dynamodb) == sorted(
            f"DynamoDB.{operation}"
            for operation, count in body["extensions"]["dynamodb"]["operations"].items()
            for _ in range(count)
        )
        assert all(span.parent is not None and span.parent.span_id == operation.context.span_id for span in dynamodb)


def test_without_a_traceparent_a_request_starts_its_own_trace(endpoint: str, contract_table: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with Gateway(_settings(endpoint, contract_table), tracer_provider=provider) as gateway:
        assert gateway.http.get("/healthz").status_code == 200
        gateway.query('{ workspace(workspaceId: "ws-main") { displayName } }')
    provider.shutdown()
    spans = exporter.get_finished_spans()
    assert len({span.context.trace_id for span in spans}) == 1, "health checks are not traced"
    (server,) = [span for span in spans if span.kind == SpanKind.SERVER]
    assert server.parent is None
