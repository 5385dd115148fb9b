"""Watching the gateway: Prometheus metrics, OpenTelemetry spans and a JSON access log line per request.

Every /graphql request runs under an ``Observation`` that ``WatchedEndpoint`` sets around the endpoint: the operation
hook (``Observed``) records each operation's name, outcome and ledger on it, and the store's hooks (``watch``:
the same moments of a call on either of its paths) count every DynamoDB call and, when the request is traced, give
it a span under its operation's.
OpenTelemetry is imported only when tracing is configured.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from graphql import GraphQLError
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.extensions import SchemaExtension

from gateway.dynamo.accounting import Ledger, capacity_units
from gateway.dynamo.client import THROTTLING

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

    from gateway.dynamo.dataplane import Hooks

access_log = logging.getLogger("tablegraph.access")
mismatch_log = logging.getLogger("tablegraph.mismatch")

_NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]{0,99}")
_CODE = re.compile(r"[A-Za-z0-9_.]{1,64}")
_LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "tablegraph_graphql_requests", "GraphQL operations served, by operation name and outcome", ["operation", "outcome"]
)
EXECUTIONS = Counter(
    "tablegraph_graphql_executions",
    "GraphQL operations executed, by how: from a plan compiled once per document, or interpreted by graphql-core",
    ["mode"],
)
REQUEST_SECONDS = Histogram(
    "tablegraph_graphql_request_duration_seconds", "Time to answer a /graphql request", ["operation"], buckets=_LATENCY
)
DYNAMODB_CALLS = Counter(
    "tablegraph_dynamodb_calls", "DynamoDB API calls, each counted once whatever its retries", ["operation"]
)
DYNAMODB_SECONDS = Histogram(
    "tablegraph_dynamodb_call_duration_seconds", "Time of a DynamoDB API call", ["operation"], buckets=_LATENCY
)
DYNAMODB_CAPACITY = Counter(
    "tablegraph_dynamodb_consumed_capacity", "Capacity units DynamoDB reported consumed", ["operation"]
)
DYNAMODB_ERRORS = Counter(
    "tablegraph_dynamodb_errors", "DynamoDB calls that failed after retries, by error code", ["operation", "code"]
)
TASK_CRASHES = Counter(
    "tablegraph_task_crashes", "Crashes of long-running tasks (the stream relay), each restarted", ["task"]
)
DATA_MISMATCHES = Counter(
    "tablegraph_data_mismatches",
    "Items and stored values that contradict the declaration, each answered as a DATA_MISMATCH error, by entity",
    ["entity"],
)
DYNAMODB_THROTTLES = Counter(
    "tablegraph_dynamodb_throttled_attempts", "DynamoDB attempts refused by throttling, retried or not", ["operation"]
)


def task_crashed(task: str, crash: str) -> None:
    """Count a crash of a supervised task (its log line carries ``crash``)."""
    TASK_CRASHES.labels(task).inc()


class Executed(Protocol):
    """An operation as it is recorded: strawberry's execution context, or a kept query answered without it
    (``surface.kept.Kept``). ``operation_type`` may raise when there is no such operation."""

    @property
    def operation_name(self) -> str | None: ...

    @property
    def operation_type(self) -> Any: ...

    @property
    def context(self) -> Any: ...

    @property
    def result(self) -> Any: ...


class OperationNames:
    """Metric labels for client-chosen operation names: the first ``limit`` distinct names, then ``other``."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._seen: set[str] = set()

    def label(self, name: str | None) -> str:
        if name is None:
            return "anonymous"
        if name in self._seen:
            return name
        if len(self._seen) < self._limit and _NAME.fullmatch(name):
            self._seen.add(name)
            return name
        return "other"


@dataclass
class _Operation:
    name: str | None
    label: str
    outcome: str
    ledger: Ledger | None


@dataclass
class Observation:
    """One /graphql request as it is watched."""

    names: OperationNames
    tracer: Tracer | None
    operations: list[_Operation] = field(default_factory=list)

    def record(self, execution: Executed) -> _Operation:
        """The operation ``execution`` ran, with the code of its first error as its outcome."""
        name = execution.operation_name
        result = execution.result
        errors = result.errors if result is not None else None
        ledger = getattr(execution.context, "ledger", None)
        executed = getattr(execution.context, "executed", None)
        if executed is not None:
            EXECUTIONS.labels(executed).inc()
        done = _Operation(name, self.names.label(name), _code(errors[0]) if errors else "ok", ledger)
        self.operations.append(done)
        return done


_watch: ContextVar[Observation | None] = ContextVar("tablegraph_watch", default=None)


@contextmanager
def operation(execution: Executed) -> Iterator[None]:
    """Around one GraphQL operation: its span (when tracing) and, once it has run, its outcome on the watch."""
    watch = _watch.get()
    if watch is None:  # run outside a watched request (in process): its mismatches are counted all the same
        yield
        mismatches(execution)
        return
    if watch.tracer is None:
        yield
        watch.record(execution)
        mismatches(execution)
        return
    from opentelemetry.trace import SpanKind

    with watch.tracer.start_as_current_span("GraphQL operation", kind=SpanKind.INTERNAL) as span:
        yield
        done = watch.record(execution)
        kind = _operation_type(execution)
        span.update_name(f"{kind} {done.name}" if done.name else kind)
        span.set_attribute("graphql.operation.type", kind)
        if done.name:
            span.set_attribute("graphql.operation.name", done.name)
        if done.outcome != "ok":
            span.set_attribute("graphql.error.code", done.outcome)
    mismatches(execution)


def mismatches(execution: Executed) -> None:
    """``report_mismatches`` of an operation's result."""
    result = execution.result
    report_mismatches(result.errors if result is not None else None, getattr(execution.context, "request_id", None))


def report_mismatches(errors: Sequence[GraphQLError] | None, request_id: str | None) -> None:
    """Count and log, with the request id, each DATA_MISMATCH error of a result: the table contradicts the
    declaration, which its owners must hear of even when no client reports the error."""
    if not errors:
        return
    for error in errors:
        extensions = error.extensions or {}
        if extensions.get("code") != "DATA_MISMATCH":
            continue
        entity = extensions.get("entity")
        DATA_MISMATCHES.labels(entity if isinstance(entity, str) and _NAME.fullmatch(entity) else "other").inc()
        line = {
            "requestId": request_id,
            "path": error.path,
            "entity": entity,
            "attribute": extensions.get("attribute"),
            "key": extensions.get("key"),
            "message": error.message,
        }
        mismatch_log.warning(json.dumps(line, ensure_ascii=False, default=str))


def _operation_type(execution: Executed) -> str:
    try:
        return str(execution.operation_type.value)
    except Exception:  # no document, or no operation of that name: strawberry raises while it looks
        return "query"


def _code(error: GraphQLError) -> str:
    code = (error.extensions or {}).get("code")
    return code if isinstance(code, str) and _CODE.fullmatch(code) else "INTERNAL"


class WatchedEndpoint:
    """The /graphql endpoint, counted, timed, traced and logged: one JSON access log line per request."""

    def __init__(self, app: ASGIApp, names: OperationNames, tracer: Tracer | None) -> None:
        self._app = app
        self._names = names
        self._tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        watch = Observation(self._names, self._tracer)
        token = _watch.set(watch)
        seen: dict[str, Any] = {"status": 500, "request_id": None, "json": False}
        bodies: list[bytes] = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
                for name, value in message.get("headers", ()):
                    if name == b"x-request-id":
                        seen["request_id"] = value.decode("latin-1")
                    elif name == b"content-type":
                        seen["json"] = b"json" in value
            elif message["type"] == "http.response.body" and seen["json"] and not watch.operations:
                # A request refused before any operation ran: its small error body names the code.
                bodies.append(message.get("body", b""))
            await send(message)

        try:
            await self._app(scope, receive, sending)
        finally:
            _watch.reset(token)
            elapsed = time.perf_counter() - started
            self._record(scope, watch, seen, b"".join(bodies), elapsed)

    def _record(self, scope: Scope, watch: Observation, seen: dict[str, Any], body: bytes, elapsed: float) -> None:
        operations = watch.operations
        if not operations and body:
            operations = [_Operation(None, "none", _refusal_code(body), None)]
        for one in operations:
            REQUESTS.labels(one.label, one.outcome).inc()
        label = operations[0].label if len(operations) == 1 else ("batch" if operations else "none")
        if operations:
            REQUEST_SECONDS.labels(label).observe(elapsed)
        if access_log.isEnabledFor(logging.INFO):
            ledgers = [one.ledger for one in operations if one.ledger is not None]
            line = {
                "requestId": seen["request_id"],
                "method": scope.get("method"),
                "path": scope.get("path"),
                "status": seen["status"],
                "operation": ",".join(one.name or "" for one in operations) or None,
                "outcome": ",".join(one.outcome for one in operations) or None,
                "durationMs": round(elapsed * 1000, 3),
                "dynamodbCalls": sum(len(ledger.calls) for ledger in ledgers),
                "dynamodbRounds": sum(ledger.rounds for ledger in ledgers),
                "consumedCapacity": round(sum(call.capacity for ledger in ledgers for call in ledger.calls), 3),
            }
            access_log.info(json.dumps(line, ensure_ascii=False))


def _refusal_code(body: bytes) -> str:
    try:
        errors = json.loads(body).get("errors") or [{}]
        code = errors[0].get("extensions", {}).get("code")
    except (ValueError, AttributeError, TypeError):
        return "INTERNAL"
    return code if isinstance(code, str) and _CODE.fullmatch(code) else "INTERNAL"


# --- DynamoDB calls -------------------------------------------------------------------------------------------


def watch(hooks: Hooks) -> None:
    """Count, time and (when the request is traced) span every DynamoDB call the store with ``hooks`` makes."""
    hooks.calling.append(_call_started)
    hooks.attempted.append(_attempt_ended)
    hooks.called.append(_call_ended)


def _call_started(operation_name: str, context: dict[str, Any]) -> None:
    context["tablegraph.started"] = time.perf_counter()
    watch = _watch.get()
    if watch is not None and watch.tracer is not None:
        from opentelemetry.trace import SpanKind

        context["tablegraph.span"] = watch.tracer.start_span(
            f"DynamoDB.{operation_name}",
            kind=SpanKind.CLIENT,
            attributes={
                "db.system": "dynamodb",
                "rpc.system": "aws-api",
                "rpc.service": "DynamoDB",
                "rpc.method": operation_name,
            },
        )


def _call_ended(operation_name: str, context: dict[str, Any], status: int | None, parsed: Mapping[str, Any]) -> None:
    """A call ended, after its retries: ``status`` None when the last attempt got no answer."""
    if status is None:
        _finish(operation_name, context, 0.0, "ConnectionError")
        return
    code = None
    if status >= 300:
        code = str(parsed.get("Error", {}).get("Code", "")) or f"HTTP{status}"
    _finish(operation_name, context, capacity_units(parsed.get("ConsumedCapacity")), code)


def _attempt_ended(operation_name: str, status: int | None, parsed: Mapping[str, Any] | None) -> None:
    if parsed is not None and parsed.get("Error", {}).get("Code") in THROTTLING:
        DYNAMODB_THROTTLES.labels(operation_name).inc()


@cache
def _call_metrics(operation_name: str) -> tuple[Counter, Histogram, Counter]:
    """The labelled metrics of one DynamoDB operation; looking them up per call costs more than counting."""
    return (
        DYNAMODB_CALLS.labels(operation_name),
        DYNAMODB_SECONDS.labels(operation_name),
        DYNAMODB_CAPACITY.labels(operation_name),
    )


def _finish(operation_name: str, context: dict[str, Any], capacity: float, code: str | None) -> None:
    calls, seconds, consumed = _call_metrics(operation_name)
    calls.inc()
    started = context.pop("tablegraph.started", None)
    if started is not None:
        seconds.observe(time.perf_counter() - started)
    if capacity:
        consumed.inc(capacity)
    if code is not None:
        DYNAMODB_ERRORS.labels(operation_name, code if _CODE.fullmatch(code) else "other").inc()
    span: Span | None = context.pop("tablegraph.span", None)
    if span is not None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("aws.dynamodb.consumed_capacity", capacity)
        if code is not None:
            span.set_attribute("aws.dynamodb.error_code", code)
            span.set_status(Status(StatusCode.ERROR, code))
        span.end()


# --- serving ----------------------------------------------------------------------------------------------------


async def metrics(request: Request) -> Response:
    """The Prometheus exposition: this process's metrics, or all workers' with ``PROMETHEUS_MULTIPROC_DIR``."""
    registry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


def otlp_tracer_provider(endpoint: str) -> TracerProvider:
    """A tracer provider exporting spans in batches over OTLP/HTTP to ``endpoint``; needs the ``otel`` extra."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as missing:
        raise RuntimeError("tracing needs the otel extra: pip install 'tablegraph[otel]'") from missing

    provider = TracerProvider(resource=Resource.create({"service.name": "tablegraph"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return provider


def traced(app: ASGIApp, provider: TracerProvider) -> ASGIApp:
    """``app`` under OpenTelemetry's ASGI middleware: a server span per request, in the trace that the request's
    W3C ``traceparent`` names."""
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    return OpenTelemetryMiddleware(app, tracer_provider=provider, exclude_spans=["receive", "send"])


class Observed(SchemaExtension):
    """Each operation's span, name and outcome for the watch; first in the list, so it sees the outcome as the
    error policy leaves it."""

    def on_operation(self) -> Iterator[None]:
        with operation(self.execution_context):
            yield
