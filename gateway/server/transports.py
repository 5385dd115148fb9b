"""Subscriptions at /graphql: the graphql-transport-ws protocol over WebSocket, and GraphQL over server-sent events.

Both take the same credentials as HTTP, checked before any operation starts: on a WebSocket, the upgrade request's
headers or the ``connection_init`` payload (``{"Authorization": "Bearer ..."}`` or ``{"X-Api-Key": "..."}``); over
SSE, the request's headers. A subscription runs through the same schema, guard and cost limits as a query. When the
caller's token expires, each of its subscriptions ends with an ``UNAUTHENTICATED`` error.

SSE follows the graphql-sse protocol's "distinct connections" mode: one operation per request (``POST`` with a
JSON body, or ``GET`` with the URL's parameters, and ``Accept: text/event-stream``); each result is a ``next``
event and the end a ``complete`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from types import FrameType
from typing import Any

import jwt
import orjson
import strawberry
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError
from strawberry.types.graphql import OperationType

from gateway.config import Settings
from gateway.design.tenancy import Tenancy
from gateway.dynamo.accounting import Ledger
from gateway.errors import GatewayError, Unauthenticated, Unavailable
from gateway.execution.cost import Planner
from gateway.execution.cursors import CursorCodec
from gateway.execution.guard import Guard, Principal
from gateway.execution.reader import Reader
from gateway.live.fanout import Feed
from gateway.server.auth import AUTHORIZATION_HEADER, Authenticator
from gateway.surface.context import Context, Live
from gateway.surface.extensions import is_expected

log = logging.getLogger(__name__)

PROTOCOL = "graphql-transport-ws"
EVENT_STREAM = "text/event-stream"
INIT_TIMEOUT = 10.0
HEARTBEAT = 15.0
_OPERATIONS = (OperationType.QUERY, OperationType.MUTATION, OperationType.SUBSCRIPTION)


class _Expired(Exception):
    pass


class LiveEndpoint:
    """The WebSocket and SSE side of /graphql."""

    def __init__(
        self,
        schema: strawberry.Schema,
        settings: Settings,
        authenticator: Authenticator,
        tenancy: Tenancy,
        planner: Planner | None,
    ) -> None:
        self._schema = schema
        self._settings = settings
        self._authenticator = authenticator
        self._tenancy = tenancy
        self._planner = planner
        self._codec = CursorCodec(settings.cursor_secret)

    # --- graphql-transport-ws -----------------------------------------------------------------------------

    async def websocket(self, websocket: WebSocket) -> None:
        if PROTOCOL not in websocket.scope.get("subprotocols", []):
            await websocket.close(4406, "Subprotocol not acceptable")
            return
        await websocket.accept(subprotocol=PROTOCOL)
        with contextlib.suppress(WebSocketDisconnect):
            await self._connection(websocket)

    async def _connection(self, websocket: WebSocket) -> None:
        try:
            init = await asyncio.wait_for(_message(websocket), INIT_TIMEOUT)
        except TimeoutError:
            await websocket.close(4408, "Connection initialisation timeout")
            return
        if init is None or init.get("type") != "connection_init":
            await websocket.close(4400, "Expected connection_init")
            return
        payload = init.get("payload") or {}
        headers = dict(websocket.headers)
        if isinstance(payload, dict):
            headers.update((str(name).lower(), value) for name, value in payload.items() if isinstance(value, str))
        try:
            principal = await self._authenticator.authenticate(headers)
        except Unauthenticated as error:
            await websocket.close(4403, f"Forbidden: {error.message}"[:120])
            return
        except Unavailable:
            await websocket.close(1011, "credentials cannot be checked now")
            return
        expires = _expiry(headers)
        lock = asyncio.Lock()

        async def send(message: dict[str, Any]) -> None:
            async with lock:
                await websocket.send_text(orjson.dumps(message).decode())

        await send({"type": "connection_ack"})
        operations: dict[str, asyncio.Task[None]] = {}
        try:
            while True:
                message = await _message(websocket)
                kind = message.get("type") if message is not None else None
                if kind == "ping":
                    await send({"type": "pong"})
                elif kind == "pong":
                    continue
                elif kind == "subscribe" and isinstance(message, dict) and isinstance(message.get("id"), str):
                    op_id = message["id"]
                    if op_id in operations and not operations[op_id].done():
                        await websocket.close(4409, f"Subscriber for {op_id} already exists"[:120])
                        return
                    body = message.get("payload")
                    work = self._operation(websocket, op_id, body, principal, expires, send)
                    operations[op_id] = asyncio.create_task(work)
                elif kind == "complete" and isinstance(message, dict):
                    task = operations.pop(str(message.get("id")), None)
                    if task is not None:
                        task.cancel()
                elif kind == "connection_init":
                    await websocket.close(4429, "Too many initialisation requests")
                    return
                else:
                    await websocket.close(4400, "Invalid message")
                    return
        finally:
            for task in operations.values():
                task.cancel()
            await asyncio.gather(*operations.values(), return_exceptions=True)

    async def _operation(
        self, websocket: WebSocket, op_id: str, body: Any, principal: Principal, expires: float | None, send: Any
    ) -> None:
        try:
            async for result, final in self._results(websocket.app.state, body, principal, expires):
                if final:
                    await send({"id": op_id, "type": "error", "payload": result.get("errors", [])})
                    return
                await send({"id": op_id, "type": "next", "payload": result})
            await send({"id": op_id, "type": "complete"})
        except (WebSocketDisconnect, RuntimeError):
            pass  # the client went away

    # --- server-sent events -------------------------------------------------------------------------------

    def events(self, app: ASGIApp) -> ASGIApp:
        """``app``, with requests that accept only an event stream answered here."""

        async def serve(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and _wants_events(scope):
                response = await self._events(Request(scope, receive))
                await response(scope, receive, send)
                return
            await app(scope, receive, send)

        return serve

    async def _events(self, request: Request) -> Response:
        try:
            principal = await self._authenticator.authenticate(request.headers)
        except GatewayError as error:
            status = 401 if isinstance(error, Unauthenticated) else 503
            return _refusal(status, error)
        try:
            body = await _sse_params(request, self._settings.max_body_bytes)
        except GatewayError as error:
            return _refusal(400, error)
        expires = _expiry(request.headers)

        async def stream() -> AsyncIterator[str]:
            async for result, _ in self._results(request.app.state, body, principal, expires):
                yield f"event: next\ndata: {orjson.dumps(result).decode()}\n\n"
            yield "event: complete\ndata: \n\n"

        return StreamingResponse(
            _with_heartbeat(stream()),
            media_type=EVENT_STREAM,
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no", "X-Content-Type-Options": "nosniff"},
        )

    # --- running an operation -----------------------------------------------------------------------------

    async def _results(
        self, state: Any, body: Any, principal: Principal, expires: float | None
    ) -> AsyncIterator[tuple[dict[str, Any], bool]]:
        """Each result of the operation ``body`` asks for, and whether it is the error that ends it."""
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            yield _errors(GatewayError("the operation needs a query", code="BAD_REQUEST")), True
            return
        variables, name, extensions = body.get("variables"), body.get("operationName"), body.get("extensions")
        if not (
            isinstance(variables, dict | None) and isinstance(name, str | None) and isinstance(extensions, dict | None)
        ):
            yield _errors(GatewayError("variables and extensions are objects, operationName a string")), True
            return
        if expires is not None and expires <= time.time():
            yield _errors(Unauthenticated("the credentials expired")), True
            return
        request_id = uuid.uuid4().hex
        ledger = Ledger()
        guard = Guard(state.store.model, self._tenancy, principal)
        context = Context(
            request_id=request_id,
            reader=Reader(state.store, self._settings, self._codec, ledger, guard, request_id),
            store=state.store,
            ledger=ledger,
            planner=self._planner,
            live=Live(state.feed, self._settings, self._codec),
        )
        results = await self._schema.stream(
            body["query"],
            variable_values=variables,
            context_value=context,
            operation_name=name,
            operation_extensions=extensions,
            allowed_operation_types=_OPERATIONS,
        )
        pending: asyncio.Task[Any] | None = None
        try:
            while True:
                pending = asyncio.ensure_future(anext(results, None))
                timeout = None if expires is None else max(0.0, expires - time.time())
                done, _ = await asyncio.wait({pending}, timeout=timeout)
                if not done:
                    yield _errors(Unauthenticated("the credentials expired")), True
                    return
                result = pending.result()
                pending = None
                if result is None:
                    return
                if not isinstance(result, ExecutionResult):
                    continue  # incremental delivery frames are not served here
                body_ = _body(result, request_id)
                ended = isinstance(result, PreExecutionError) or (result.data is None and bool(result.errors))
                yield body_, ended
                if ended:
                    return
        finally:
            if pending is not None:
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)
            await results.aclose()


@contextlib.contextmanager
def closing_on_exit(feed: Feed) -> Iterator[None]:
    """On SIGINT or SIGTERM, end every subscription at once, each with its complete message, before the server
    closes its connections (it waits for open event streams, which would otherwise never end).

    The server's own handlers still run after ours. Only the main thread can take signals: elsewhere (a server run
    in a thread) subscriptions end when the feed closes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def close(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(feed.close)
        chained = previous[signal.Signals(signum)]
        if callable(chained):
            chained(signum, frame)

    for sig in previous:
        signal.signal(sig, close)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _body(result: ExecutionResult, request_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if not isinstance(result, PreExecutionError):
        body["data"] = result.data
    if result.errors:
        body["errors"] = [_public(error, request_id) for error in result.errors]
    return body


def _public(error: GraphQLError, request_id: str) -> dict[str, Any]:
    if not is_expected(error):
        log.error("unexpected error in subscription %s at %s", request_id, error.path, exc_info=error.original_error)
        masked = GraphQLError(
            "Internal error; quote the request id when reporting it.",
            path=error.path,
            extensions={"code": "INTERNAL", "requestId": request_id},
        )
        return dict(masked.formatted)
    formatted: dict[str, Any] = dict(error.formatted)
    if "code" not in (formatted.get("extensions") or {}):
        formatted["extensions"] = {**(formatted.get("extensions") or {}), "code": "GRAPHQL_VALIDATION_FAILED"}
    return formatted


def _errors(error: GatewayError) -> dict[str, Any]:
    return {"errors": [GraphQLError(error.message, extensions=error.extensions).formatted]}


def _refusal(status: int, error: GatewayError) -> Response:
    body = orjson.dumps({"errors": [{"message": error.message, "extensions": error.extensions}]})
    return Response(body, status_code=status, media_type="application/json")


async def _message(websocket: WebSocket) -> dict[str, Any] | None:
    """The next message, as a JSON object; None for anything else."""
    text = await websocket.receive_text()
    try:
        message = json.loads(text)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _expiry(headers: Mapping[str, str]) -> float | None:
    """When the bearer token the caller authenticated with expires (it was verified already); None: never."""
    scheme, _, token = (headers.get(AUTHORIZATION_HEADER) or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    with contextlib.suppress(jwt.PyJWTError):
        claims = jwt.decode(token.strip(), options={"verify_signature": False})
        expires = claims.get("exp")
        if isinstance(expires, int | float):
            return float(expires)
    return None


def _wants_events(scope: Scope) -> bool:
    if scope["method"] not in ("GET", "POST"):
        return False
    for name, value in scope["headers"]:
        if name == b"accept":
            return EVENT_STREAM in value.decode("latin-1").lower()
    return False


async def _sse_params(request: Request, limit: int) -> Any:
    if request.method == "GET":
        params: dict[str, Any] = dict(request.query_params)
        for name in ("variables", "extensions"):
            if params.get(name):
                params[name] = _json(params[name], name)
        return params
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise GatewayError(f"the body is larger than {limit} bytes", code="PAYLOAD_TOO_LARGE")
    return _json(body.decode("utf-8", errors="replace"), "the body")


def _json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise GatewayError(f"{name} is not valid JSON", code="BAD_REQUEST") from None


async def _with_heartbeat(events: AsyncIterator[str]) -> AsyncIterator[str]:
    """``events``, with a comment line when nothing was sent for a while, so proxies keep the stream open."""
    pending: asyncio.Task[str] | None = None
    try:
        while True:
            pending = asyncio.ensure_future(anext(events))
            while True:
                done, _ = await asyncio.wait({pending}, timeout=HEARTBEAT)
                if done:
                    break
                yield ": keep-alive\n\n"
            try:
                yield pending.result()
            except StopAsyncIteration:
                return
            pending = None
    finally:
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
