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
import functools
import logging
import signal
import threading
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any

import jwt
import strawberry
from graphql import ExecutionResult as GraphQLExecutionResult
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError
from strawberry.types.graphql import OperationType

from gateway.config import Settings
from gateway.design.tenancy import Tenancy
from gateway.dynamo.wire import is_text
from gateway.errors import FellBehind, GatewayError, Unauthenticated, Unavailable
from gateway.execution.cost import Planner
from gateway.execution.cursors import CursorCodec
from gateway.execution.guard import Guard, Principal
from gateway.live.fanout import Feed
from gateway.live.shares import Key, Result, Run, Shares, Subscriber
from gateway.server import observe
from gateway.server.auth import AUTHORIZATION_HEADER
from gateway.server.frontdoor import (
    FrontDoor,
    Params,
    Rejected,
    allowed,
    check_headers,
    encode,
    refuse_writes,
    subscribes,
    writes,
)
from gateway.surface.context import Context, Live
from gateway.surface.extensions import error_code, is_expected

log = logging.getLogger(__name__)

PROTOCOL = "graphql-transport-ws"
EVENT_STREAM = "text/event-stream"
INIT_TIMEOUT = 10.0
HEARTBEAT = 15.0
_FELL_BEHIND = 1008
"""The close code of a reader too far behind (policy violation); its reason starts with FELL_BEHIND."""
ENDING_GRACE = 5.0
"""Seconds the sockets' operations get, when the server is told to stop, to end and send their last messages
before the server closes the sockets."""


class _Expired(Exception):
    pass


class _Close(Exception):
    """Ends the connection with a close code of graphql-transport-ws (4400 and up) or of WebSocket itself."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason[:120]


class _OperationRefused(Exception):
    """A subscribe message the front door refuses: answered with an error for its id; the connection goes on."""

    def __init__(self, op_id: str, refused: Rejected) -> None:
        super().__init__(refused.message)
        self.op_id = op_id
        self.refused = refused


@dataclass(frozen=True)
class _Operation:
    """An operation through the front door: its document, its parameters, the operation types it may be."""

    query: str
    params: Params
    allowed: frozenset[OperationType]
    subscription: bool
    """Whether it is a subscription: only subscriptions share a run."""


class _Outbox:
    """What a connection sends, in order, by one writer: an operation never waits for a slow reader. A reader that
    leaves ``limit`` messages unread, or takes more than ``timeout`` seconds to take one, has fallen behind.

    The writer is a task only while something is queued: an idle connection is the one task reading it (a task
    each for a reader and a writer, and the wait on both, cost 2 KiB a connection). What would end the connection
    (it fell behind, or a send failed) cancels that task: :attr:`stopped` and :meth:`check` say why.

    A send is never cancelled because it is slow: the writer only notes that it is, and the connection decides how
    long the rest may take."""

    __slots__ = (
        "_closing",
        "_connection",
        "_failure",
        "_limit",
        "_queue",
        "_timeout",
        "_websocket",
        "_writer",
        "stopped",
    )

    def __init__(self, websocket: WebSocket, limit: int, timeout: float) -> None:
        self._websocket = websocket
        self._limit = limit
        self._timeout = timeout
        # A list, not a deque: an empty deque holds a block of 64 slots (760 bytes) all its life; the queue is
        # bounded by ``limit``, so taking from the front of a list costs little.
        self._queue: list[dict[str, Any] | str] = []
        self._writer: asyncio.Task[None] | None = None
        self._closing = False
        self._connection = asyncio.current_task()
        self._failure: Exception | None = None
        self.stopped = False
        """Whether the outbox cancelled its connection's task: the client fell behind (past ``limit`` unread, or a
        send slower than ``timeout``), or a send failed (:meth:`check` raises its error)."""

    def put(self, message: dict[str, Any] | str) -> None:
        """Queue ``message``, or a frame already serialised (around a payload shared by many subscribers)."""
        if self._closing:
            return
        if len(self._queue) >= self._limit:
            self._closing = True
            self._stop()
        else:
            self._queue.append(message)
            self._write()

    def last(self, messages: list[dict[str, Any]]) -> None:
        """Send ``messages`` after what is queued, whatever the limit, and nothing after them."""
        self._queue.extend(messages)
        self._closing = True
        self._write()

    async def flushed(self) -> None:
        """Once what is queued is sent."""
        if self._writer is not None:
            await self._writer

    def check(self) -> None:
        """Raise the error a send failed with, if one did."""
        if self._failure is not None:
            raise self._failure

    def close(self) -> asyncio.Task[None] | None:
        """Stop writing; the writer's task to await, if it was running."""
        self._closing = True
        self._connection = None  # a send that stalls from here on ends nothing: the connection is ending
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.cancel()
        return writer

    def _write(self) -> None:
        if self._writer is None and self._queue:
            self._writer = asyncio.get_running_loop().create_task(self._run())

    def _stop(self) -> None:
        if not self.stopped and self._connection is not None:
            self.stopped = True
            self._connection.cancel()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                message = self._queue.pop(0)
                text = message if isinstance(message, str) else encode(message).decode()
                stalled = loop.call_later(self._timeout, self._stop)  # fell behind: the send goes on
                try:
                    await self._websocket.send_text(text)
                finally:
                    stalled.cancel()
        except Exception as failure:  # the client went away, or a bug: either way the connection ends on it
            self._closing = True
            if not self.stopped:
                self._failure = failure
                self._stop()
        finally:
            if self._writer is asyncio.current_task():
                self._writer = None


class LiveEndpoint:
    """The WebSocket and SSE side of /graphql."""

    def __init__(
        self,
        schema: strawberry.Schema,
        settings: Settings,
        door: FrontDoor,
        tenancy: Tenancy,
        planner: Planner | None,
    ) -> None:
        self._schema = schema
        self._settings = settings
        self._door = door
        self._tenancy = tenancy
        self._planner = planner
        self._codec = CursorCodec(settings.cursor_secret)
        self._shares = Shares()
        self._sockets: dict[_Outbox, dict[str, _Held]] = {}
        """Each open socket's outbox, and the operations it runs."""
        self._quiet: asyncio.Future[None] | None = None
        """Set once no socket runs an operation, while :meth:`ended` waits for it."""

    async def ended(self, grace: float = ENDING_GRACE) -> None:
        """Once every socket's operations have ended and what they queued is sent, or after ``grace`` seconds: the
        server may close the sockets then without cutting off an operation's last message (its ``complete``)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                if any(self._sockets.values()):
                    self._quiet = asyncio.get_running_loop().create_future()
                    try:
                        await self._quiet
                    finally:
                        self._quiet = None
                await asyncio.gather(*[outbox.flushed() for outbox in list(self._sockets)], return_exceptions=True)

    def _forget(self, operations: dict[str, _Held], op_id: str, held: _Held) -> None:
        if operations.get(op_id) is held:
            del operations[op_id]
            self._left()

    def _left(self) -> None:
        quiet = self._quiet
        if quiet is not None and not quiet.done() and not any(self._sockets.values()):
            quiet.set_result(None)

    # --- graphql-transport-ws -----------------------------------------------------------------------------

    async def websocket(self, websocket: WebSocket) -> None:
        if PROTOCOL not in websocket.scope.get("subprotocols", []):
            await websocket.close(4406, "Subprotocol not acceptable")
            return
        await websocket.accept(subprotocol=PROTOCOL)
        try:
            await self._connection(websocket)
        except _Close as close:
            # A close frame waits behind what the client has not read: it gets a bound like any other message.
            with contextlib.suppress(TimeoutError, WebSocketDisconnect, RuntimeError, OSError):
                async with asyncio.timeout(self._settings.ws_send_timeout):
                    await websocket.close(close.code, close.reason)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass  # the client went away (a send after it did fails with one of these)

    async def _connection(self, websocket: WebSocket) -> None:
        principal, expires = await self._caller(websocket)
        outbox = _Outbox(websocket, self._settings.ws_max_queued, self._settings.ws_send_timeout)
        outbox.put({"type": "connection_ack"})
        operations: dict[str, _Held] = {}
        self._sockets[outbox] = operations
        try:
            await self._read(websocket, outbox, operations, principal, expires)
        except asyncio.CancelledError:
            connection = asyncio.current_task()
            if not outbox.stopped or connection is None or connection.uncancel() > 0:
                raise  # not the outbox's doing: the server is stopping
            outbox.check()
            ended = list(operations)
            for held in list(operations.values()):
                held.cancel()
            behind = FellBehind("the client did not read what was sent in time; connect again")
            outbox.last([{"id": op_id, "type": "error", "payload": [_errors(behind)["errors"][0]]} for op_id in ended])
            # What is queued, the errors and the close frame get one send timeout in all. Past it the transport
            # cannot carry them: the application ends, and the server drops the connection unflushed.
            with contextlib.suppress(TimeoutError, WebSocketDisconnect, RuntimeError, OSError):
                async with asyncio.timeout(self._settings.ws_send_timeout):
                    await outbox.flushed()
                    await websocket.close(_FELL_BEHIND, "FELL_BEHIND: the client did not read what was sent")
        finally:
            del self._sockets[outbox]
            self._left()
            stopping = [held.cancel() for held in list(operations.values())]
            writer = outbox.close()
            runs = [task for task in stopping if isinstance(task, asyncio.Task)]
            await asyncio.gather(*runs, *([writer] if writer is not None else []), return_exceptions=True)

    async def _caller(self, websocket: WebSocket) -> tuple[Principal, float | None]:
        """Who the caller is, and when their credentials expire, from the upgrade request's headers and the
        ``connection_init`` payload; what they were read from (a token, in either) is let go of once they are
        checked."""
        try:
            init = await asyncio.wait_for(self._init(websocket), INIT_TIMEOUT)
        except TimeoutError:
            raise _Close(4408, "Connection initialisation timeout") from None
        payload = init.get("payload") or {}
        try:
            check_headers(websocket.headers)
        except Rejected as refused:
            raise _Close(4400, refused.message) from None
        headers = dict(websocket.headers)
        if isinstance(payload, dict):
            headers.update((str(name).lower(), value) for name, value in payload.items() if isinstance(value, str))
        try:
            principal = await self._door.authenticator.authenticate(headers)
        except Unauthenticated as error:
            raise _Close(4403, f"Forbidden: {error.message}") from None
        except Unavailable:
            raise _Close(1011, "credentials cannot be checked now") from None
        # Nothing reads the upgrade request's headers after this, but the scope (the server's and the WebSocket's)
        # would keep them for the connection's life: 1.2 KiB from a plain client, a browser's cookies on top.
        del websocket.scope["headers"][:]
        return principal, _expiry(headers)

    async def _init(self, websocket: WebSocket) -> dict[str, Any]:
        """The ``connection_init`` message; pings before it are answered, anything else closes the socket."""
        while True:
            try:
                message = self._message(await websocket.receive())
            except _OperationRefused:
                raise _Close(4401, "Unauthorized") from None
            kind = message.get("type")
            if kind == "connection_init":
                return message
            if kind == "ping":
                await websocket.send_text('{"type":"pong"}')
            elif kind == "subscribe":
                raise _Close(4401, "Unauthorized")
            elif kind != "pong":
                raise _Close(4400, "Expected connection_init")

    async def _read(
        self,
        websocket: WebSocket,
        outbox: _Outbox,
        operations: dict[str, _Held],
        principal: Principal,
        expires: float | None,
    ) -> None:
        while True:
            try:
                # Received here rather than in a coroutine of its own: an idle connection waits in this frame.
                message = self._message(await websocket.receive())
            except _OperationRefused as refused:
                outbox.put({"id": refused.op_id, "type": "error", "payload": [refused.refused.formatted()]})
                continue
            self._received(websocket, message, outbox, operations, principal, expires)
            del message  # an idle connection holds nothing of the last message it was sent (a document, variables)

    def _received(
        self,
        websocket: WebSocket,
        message: dict[str, Any],
        outbox: _Outbox,
        operations: dict[str, _Held],
        principal: Principal,
        expires: float | None,
    ) -> None:
        """Act on one message after ``connection_init``."""
        kind = message.get("type")
        if kind == "ping":
            outbox.put({"type": "pong"})
        elif kind == "pong":
            return
        elif kind == "subscribe" and isinstance(message.get("id"), str) and is_text(message["id"]):
            self._start(websocket, message["id"], message.get("payload"), outbox, operations, principal, expires)
        elif kind == "complete" and isinstance(message.get("id"), str):
            ended = operations.pop(message["id"], None)
            if ended is not None:
                ended.cancel()
        elif kind == "connection_init":
            raise _Close(4429, "Too many initialisation requests")
        else:
            raise _Close(4400, "Invalid message")

    def _start(
        self,
        websocket: WebSocket,
        op_id: str,
        payload: Any,
        outbox: _Outbox,
        operations: dict[str, _Held],
        principal: Principal,
        expires: float | None,
    ) -> None:
        if op_id in operations:
            raise _Close(4409, f"Subscriber for {op_id} already exists")
        try:
            operation = self._checked(payload, None)
        except Rejected as refused:
            outbox.put({"id": op_id, "type": "error", "payload": [refused.formatted()]})
            return
        limit = self._settings.ws_max_operations
        if len(operations) >= limit:
            busy = Rejected(429, f"a connection runs at most {limit} operations at once", "TOO_MANY_OPERATIONS")
            outbox.put({"id": op_id, "type": "error", "payload": [busy.formatted()]})
            return
        state = websocket.app.state
        if operation.subscription:
            work = self._subscribe(state, op_id, operation, principal, expires, outbox, operations)
        else:
            work = self._operation(state, op_id, operation, principal, expires, outbox)
        task = operations[op_id] = asyncio.create_task(work)
        # A finished operation lets go of everything it held at once, whether or not the client completes it.
        task.add_done_callback(functools.partial(self._forget, operations, op_id))

    def _message(self, received: Message) -> dict[str, Any]:
        """The message ``received`` as a JSON object within the limits; closes the socket with 4400 (4413 when too
        large) for anything else: a binary frame, text that is not JSON."""
        if received["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(received.get("code", 1000), received.get("reason"))
        text = received.get("text")
        if text is None:
            raise _Close(4400, "Invalid message: graphql-transport-ws messages are text frames, never binary")
        try:
            message = self._door.message(text)
        except Rejected as refused:
            if refused.status == 413:
                raise _Close(4413, f"Payload too large: {refused.message}") from None
            raise _Close(4400, f"Invalid message: {refused.message}") from None
        if not isinstance(message, dict):
            raise _Close(4400, "Invalid message: not a JSON object")
        try:
            self._door.check(message, text, "the message")
        except Rejected as refused:
            op_id = message.get("id")
            if message.get("type") == "subscribe" and isinstance(op_id, str) and is_text(op_id):
                raise _OperationRefused(op_id, refused) from None
            raise _Close(4400, f"Invalid message: {refused.message}") from None
        return message

    def _checked(self, payload: Any, method: str | None) -> _Operation:
        """The operation a payload asks for, through the front door: its shape, then the document policy."""
        if not isinstance(payload, dict):
            raise Rejected(400, "the operation needs a query")
        params = Params.of(payload)
        query = self._door.document(params)
        if query is None:
            raise Rejected(400, "the operation needs a query")
        if method == "GET" and writes(query, params.operation_name, self._settings.max_tokens):
            raise refuse_writes()
        subscription = subscribes(query, params.operation_name, self._settings.max_tokens)
        return _Operation(query, params, allowed(method, streams=True), subscription)

    async def _operation(
        self,
        state: Any,
        op_id: str,
        operation: _Operation,
        principal: Principal,
        expires: float | None,
        outbox: _Outbox,
    ) -> None:
        frame = _Frames(op_id)
        async for result in self._results(state, operation, principal, expires):
            if result.final:
                outbox.put(frame("error", result.errors))
                return
            outbox.put(frame("next", result.payload))
        outbox.put({"id": op_id, "type": "complete"})

    async def _subscribe(
        self,
        state: Any,
        op_id: str,
        operation: _Operation,
        principal: Principal,
        expires: float | None,
        outbox: _Outbox,
        operations: dict[str, _Held],
    ) -> None:
        """Join the run of a subscription, then stand aside: its results go to the outbox as they come, and the
        operation is held by its :class:`_Delivery` (no task) until it ends or the client completes it."""
        frames = _Frames(op_id)
        if expires is not None and expires <= time.time():
            outbox.put(frames("error", _final(_errors(Unauthenticated("the credentials expired"))).errors))
            return
        guard = Guard(state.store.model, self._tenancy, principal)
        delivery = _Delivery(frames, outbox, functools.partial(self._forget, operations, op_id))
        run, subscriber = await self._shares.attach(
            _share_key(operation, guard), functools.partial(self._run, state, operation, guard), delivery
        )
        delivery.hold(run, subscriber, expires)
        operations[op_id] = delivery

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
            principal = await self._door.authenticate(request.headers)
            params = await self._door.params(request)
            assert isinstance(params, Params)  # batches are refused: none allowed
            operation = self._checked(
                {
                    "query": params.query,
                    "operationName": params.operation_name,
                    "variables": params.variables,
                    "extensions": params.extensions,
                    "documentId": params.document_id,
                },
                request.method,
            )
        except Rejected as refused:
            return _refusal(refused)
        expires = _expiry(request.headers)

        async def stream() -> AsyncIterator[str]:
            async for result in self._results(request.app.state, operation, principal, expires):
                yield f"event: next\ndata: {result.payload}\n\n"
            yield "event: complete\ndata: \n\n"

        return StreamingResponse(
            _with_heartbeat(stream()),
            media_type=EVENT_STREAM,
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no", "X-Content-Type-Options": "nosniff"},
        )

    # --- running an operation -----------------------------------------------------------------------------

    async def _results(
        self, state: Any, operation: _Operation, principal: Principal, expires: float | None
    ) -> AsyncIterator[Result]:
        """Each result of ``operation`` for one subscriber, from the run it shares with subscribers of its key; the
        last is the error that ends it, if it is final."""
        if expires is not None and expires <= time.time():
            yield _final(_errors(Unauthenticated("the credentials expired")))
            return
        guard = Guard(state.store.model, self._tenancy, principal)
        if not operation.subscription:
            async with contextlib.aclosing(self._run(state, operation, guard, None)) as alone:
                async for result in _until_expiry(alone, expires):
                    yield result
            return
        start = functools.partial(self._run, state, operation, guard)
        async with self._shares.join(_share_key(operation, guard), start) as subscriber:
            # A timer rather than a timeout per result: an idle subscriber holds no task of its own.
            expiring = None
            if expires is not None:
                expired = Unauthenticated("the credentials expired")
                expiring = asyncio.get_running_loop().call_later(expires - time.time(), subscriber.fail, expired)
            try:
                async for result in subscriber:
                    yield result
                    if result.final:
                        return
            except (FellBehind, Unauthenticated) as error:  # this subscriber's own: its mailbox, its credentials
                yield _final(_errors(error))
            finally:
                if expiring is not None:
                    expiring.cancel()

    async def _run(
        self, state: Any, operation: _Operation, guard: Guard, run: Run | None
    ) -> AsyncGenerator[Result, None]:
        """Each result of ``operation``, serialised once: for all the members of ``run``, or for one caller."""
        request_id = uuid.uuid4().hex
        live = Live(state.feed, self._settings, self._codec, run, _event)
        context = Context.of(
            state.store, self._settings, self._codec, guard, request_id, planner=self._planner, live=live
        )
        params = operation.params
        try:
            results = await self._schema.stream(
                operation.query,
                variable_values=params.variables,
                context_value=context,
                operation_name=params.operation_name,
                operation_extensions=params.extensions,
                allowed_operation_types=operation.allowed,
            )
        except InvalidOperationTypeError:
            yield _final({"errors": [refuse_writes().formatted()]})
            return
        try:
            async for result in results:
                if not isinstance(result, ExecutionResult):
                    continue  # incremental delivery frames are not served here
                served = _result(result, request_id)
                yield served
                if served.final:
                    return
        finally:
            await results.aclose()


def _share_key(operation: _Operation, guard: Guard) -> Key:
    """What subscribers must have in common to share a run: the operation as sent, and their guard's standing."""
    params = operation.params
    # As text: orjson's bytes keep the 4 KiB buffer they were written in, and a run keeps its key for its life.
    return (
        operation.query,
        params.operation_name,
        encode(params.variables).decode(),
        encode(params.extensions).decode(),
        operation.allowed,
        guard.standing(),
    )


class _Delivery:
    """A socket's subscription once it has joined its run: each result is framed and queued on the connection's
    outbox as the run delivers it. An idle subscription is this object and its place in the run, no task: a task
    each cost several KiB per subscriber and a wake-up per subscriber per change.

    The outbox bounds what the client leaves unread (past it the connection is cut off with ``FELL_BEHIND``), so no
    mailbox of its own is needed."""

    __slots__ = ("_expiring", "_forget", "_frames", "_outbox", "_run", "_subscriber")

    def __init__(self, frames: _Frames, outbox: _Outbox, forget: Callable[[_Held], None]) -> None:
        self._frames = frames
        self._outbox = outbox
        self._forget = forget
        self._run: Run | None = None
        self._subscriber: Subscriber | None = None
        self._expiring: asyncio.TimerHandle | None = None

    def hold(self, run: Run, subscriber: Subscriber, expires: float | None) -> None:
        """It has joined ``run`` as ``subscriber``; when the caller's credentials expire, it ends."""
        self._run, self._subscriber = run, subscriber
        if expires is not None:
            expired = Unauthenticated("the credentials expired")
            self._expiring = asyncio.get_running_loop().call_later(expires - time.time(), self.end, expired)

    def deliver(self, result: Result) -> None:
        if result.final:
            self._outbox.put(self._frames("error", result.errors))
            self.cancel()
        else:
            self._outbox.put(self._frames("next", result.payload))

    def end(self, error: Exception | None) -> None:
        if error is None:
            self._outbox.put(self._frames.complete())
        elif isinstance(error, GatewayError):  # this subscriber's own (its credentials), or the feed's
            self._outbox.put(self._frames("error", _final(_errors(error)).errors))
        else:
            log.error("unexpected error in a shared subscription", exc_info=error)
            internal = GraphQLError("Internal error", extensions={"code": "INTERNAL"}).formatted
            self._outbox.put(self._frames("error", encode([internal]).decode()))
        self.cancel()

    def cancel(self) -> asyncio.Task[None] | None:
        """Leave the run (the client completed the operation, or the connection ended): nothing more is sent for it.
        The run's task when this was its last subscriber, to await."""
        self._forget(self)
        if self._expiring is not None:
            self._expiring.cancel()
            self._expiring = None
        run, subscriber, self._run, self._subscriber = self._run, self._subscriber, None, None
        if run is None or subscriber is None:
            return None
        return run.drop(subscriber)


_Held = asyncio.Task[None] | _Delivery
"""What holds a socket's operation: the task running it, or the delivery of a subscription that joined its run."""


async def _until_expiry(results: AsyncIterator[Result], expires: float | None) -> AsyncIterator[Result]:
    """``results`` until the final one, or an error when the caller's credentials expire first."""
    pending: asyncio.Task[Result | None] | None = None
    try:
        while True:
            pending = asyncio.ensure_future(anext(results, None))
            timeout = None if expires is None else max(0.0, expires - time.time())
            done, _ = await asyncio.wait({pending}, timeout=timeout)
            if not done:
                yield _final(_errors(Unauthenticated("the credentials expired")))
                return
            result = pending.result()
            pending = None
            if result is None:
                return
            yield result
            if result.final:
                return
    finally:
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)


class _Frames:
    """The graphql-transport-ws messages of one operation, spliced around payloads serialised once for many."""

    def __init__(self, op_id: str) -> None:
        self._head = '{"id":' + encode(op_id).decode() + ',"type":"'

    def __call__(self, kind: str, payload: str) -> str:
        return self._head + kind + '","payload":' + payload + "}"

    def complete(self) -> str:
        return self._head + 'complete"}'


def _final(body: dict[str, Any]) -> Result:
    return Result(encode(body).decode(), final=True, errors=encode(body.get("errors", [])).decode())


@contextlib.contextmanager
def closing_on_exit(feed: Feed, live: LiveEndpoint) -> Iterator[None]:
    """On SIGINT or SIGTERM, end every subscription at once, each with its complete message, before the server
    closes its connections (it waits for open event streams, which would otherwise never end).

    The server's own handler runs once the sockets' operations have ended and their last messages are sent (at most
    ``ENDING_GRACE`` seconds later): run at once, it would close the sockets before they are, and a client would see
    its socket closed without the ``complete`` of its subscriptions. A second signal reaches the server at once.

    Only the main thread can take signals: elsewhere (a server run in a thread) subscriptions end when the feed
    closes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    ending: list[asyncio.Task[None]] = []
    signalled: list[int] = []

    async def end(chained: Callable[[int, FrameType | None], Any], signum: int) -> None:
        feed.close()
        await live.ended()
        chained(signum, None)

    def start(chained: Callable[[int, FrameType | None], Any], signum: int) -> None:
        ending.append(loop.create_task(end(chained, signum)))

    def close(signum: int, frame: FrameType | None) -> None:
        # A signal handler runs between two steps of the loop, which may be waiting for its sockets: what it asks
        # of the loop goes through call_soon_threadsafe, which wakes it.
        chained = previous[signal.Signals(signum)]
        if not callable(chained):
            loop.call_soon_threadsafe(feed.close)
        elif signalled:
            chained(signum, frame)
        else:
            signalled.append(signum)
            loop.call_soon_threadsafe(start, chained, signum)

    for sig in previous:
        signal.signal(sig, close)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for task in ending:
            task.cancel()


def _result(result: ExecutionResult | GraphQLExecutionResult, request_id: str) -> Result:
    """One result as its subscribers receive it; final when it ends the operation: an error without data."""
    body = _body(result, request_id)
    if isinstance(result, PreExecutionError) or (result.data is None and bool(result.errors)):
        return _final(body)
    return Result(encode(body).decode(), final=False)


def _event(result: GraphQLExecutionResult, request_id: str) -> Result:
    """``_result`` of a subscription's event, with its DATA_MISMATCH errors counted and logged: an event is executed
    outside its operation's extensions, which count those of the operation's own result."""
    observe.report_mismatches(result.errors, request_id)
    return _result(result, request_id)


def _body(result: ExecutionResult | GraphQLExecutionResult, request_id: str) -> dict[str, Any]:
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
        formatted["extensions"] = {**(formatted.get("extensions") or {}), "code": error_code(error)}
    return formatted


def _errors(error: GatewayError) -> dict[str, Any]:
    return {"errors": [GraphQLError(error.message, extensions=error.extensions).formatted]}


def _refusal(refused: Rejected) -> Response:
    body = encode({"errors": [refused.formatted()]})
    return Response(body, status_code=refused.status, headers=refused.headers, media_type="application/json")


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
