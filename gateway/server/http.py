"""GraphQL over HTTP as its specification sets it: methods, media types, status codes; credentials first.

- GET runs queries from the URL's parameters (a mutation over GET is 405); POST runs anything from a JSON body;
  other methods are 405. A POST body must be ``application/json`` (415 otherwise) and within the size limit (413).
- The answer is ``application/graphql-response+json`` when the client accepts it or sends no Accept header: then
  a request that never ran (it did not parse, validate, fit the limits, ...) is 400. Otherwise it is
  ``application/json`` and every well-formed request is 200. An Accept that allows neither is 406.
- Missing or bad credentials are 401 with ``UNAUTHENTICATED`` before the body is read.
- A JSON array of operations is refused unless ``max_batch`` allows it; then the answer is a JSON array.
- Text that is not valid Unicode (bytes that are not UTF-8, a lone UTF-16 surrogate written as a JSON escape) is
  400 with ``BAD_USER_INPUT`` wherever the request carries it, before anything is parsed, run or sent.
- A browser asking for HTML gets GraphiQL (gateway/server/playground.py), under a strict content security policy.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping
from typing import Any

import strawberry
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from strawberry.exceptions import MissingQueryError
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError
from strawberry.types.graphql import OperationType

from gateway.config import Settings
from gateway.design.tenancy import Tenancy
from gateway.execution.cost import Planner
from gateway.execution.cursors import CursorCodec
from gateway.execution.guard import Guard
from gateway.server import observe
from gateway.server.frontdoor import JSON, REQUEST_ID_HEADER, FrontDoor, Params, Rejected, allowed, encode
from gateway.server.playground import Playground
from gateway.surface.context import Context
from gateway.surface.kept import Kept, answerable

log = logging.getLogger(__name__)

ACCOUNTING_HEADER = "x-tablegraph-accounting"
EXPLAIN_HEADER = "x-tablegraph-explain"
GRAPHQL_RESPONSE = "application/graphql-response+json"

_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"


class GraphQLEndpoint:
    """The ASGI endpoint at /graphql."""

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
        # A kept document's queries skip strawberry's per-request machinery when its extensions are ones whose
        # work that path does itself (gateway/surface/kept.py).
        self._kept = answerable(schema, recorded=(observe.Observed,))
        self.playground = Playground() if settings.graphiql else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        given = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = given if _SANE_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        media = JSON
        try:
            if request.method not in ("GET", "POST"):
                raise Rejected(405, "GraphQL is served over GET and POST", "METHOD_NOT_ALLOWED", {"Allow": "GET, POST"})
            accept = request.headers.get("accept")
            if self.playground and request.method == "GET" and _wants_page(accept, request):
                response = self.playground.page()
            else:
                media = _negotiate(accept)
                response = await self._serve(request, media, request_id)
        except Rejected as refused:
            body = {"errors": [{"message": refused.message, "extensions": {"code": refused.code}}]}
            response = _json(body, refused.status, media, refused.headers)
        response.headers[REQUEST_ID_HEADER] = request_id
        await response(scope, receive, send)

    async def _serve(self, request: Request, media: str, request_id: str) -> Response:
        principal = await self._door.authenticate(request.headers)
        params = await self._door.params(request, batch=self._settings.max_batch)
        guard = Guard(request.app.state.store.model, self._tenancy, principal)
        if isinstance(params, list):
            bodies = [(await self._run(request, one, guard, request_id))[0] for one in params]
            return _json(bodies, 200, JSON)
        body, ran = await self._run(request, params, guard, request_id)
        return _json(body, 200 if ran or media == JSON else 400, media)

    async def _run(
        self, request: Request, params: Params, guard: Guard, request_id: str
    ) -> tuple[dict[str, Any], bool]:
        """The response body, and whether the operation was run (or planned) rather than refused as a request."""
        try:
            query = self._door.document(params)
        except Rejected as refused:
            return {"errors": [refused.formatted()]}, False
        if query is None:
            raise Rejected(400, "the request has no query")
        context = self._context(request, guard, request_id)
        allowed_types = allowed(request.method, streams=False)
        kept = None
        if self._kept:
            kept = Kept.of(
                self._schema, query, params.operation_name, params.variables, params.extensions, context, allowed_types
            )
        if kept is not None:
            with observe.operation(kept):
                result = await kept.run()
            return _body(result), not isinstance(result, PreExecutionError)
        try:
            result = await self._schema.execute(
                query,
                variable_values=params.variables,
                context_value=context,
                operation_name=params.operation_name,
                allowed_operation_types=allowed_types,
                operation_extensions=params.extensions,
            )
        except InvalidOperationTypeError as error:
            if error.operation_type == OperationType.MUTATION:
                raise Rejected(405, "mutations are sent with POST", "METHOD_NOT_ALLOWED", {"Allow": "POST"}) from None
            # Subscriptions stream: gateway/server/transports.py serves them over WebSocket and server-sent events.
            unserved = GraphQLError(
                "subscriptions are served over WebSocket (graphql-transport-ws) or with Accept: text/event-stream",
                extensions={"code": _VALIDATION_FAILED},
            )
            return {"errors": [unserved.formatted]}, False
        except CannotGetOperationTypeError as error:
            message = error.as_http_error_reason()
            return {"errors": [GraphQLError(message, extensions={"code": "BAD_USER_INPUT"}).formatted]}, False
        except MissingQueryError:
            raise Rejected(400, "the request has no query") from None
        return _body(result), not isinstance(result, PreExecutionError)

    def _context(self, request: Request, guard: Guard, request_id: str) -> Context:
        return Context.of(
            request.app.state.store,
            self._settings,
            self._codec,
            guard,
            request_id,
            planner=self._planner,
            accounting=_flag(request.headers.get(ACCOUNTING_HEADER)),
            explain=_flag(request.headers.get(EXPLAIN_HEADER)),
        )


def _body(result: ExecutionResult) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if not isinstance(result, PreExecutionError):
        body["data"] = result.data
    if result.errors:
        body["errors"] = [error.formatted for error in result.errors]
    if result.extensions:
        body["extensions"] = result.extensions
    return body


def _json(body: Any, status: int, media: str, headers: Mapping[str, str] | None = None) -> Response:
    return Response(
        encode(body),
        status_code=status,
        headers={
            **(headers or {}),
            "Content-Type": f"{media}; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )


def _negotiate(accept: str | None) -> str:
    """The response media type: the client's most preferred one we serve; 406 when it accepts neither."""
    if accept is None or not accept.strip():
        return GRAPHQL_RESPONSE
    best: tuple[float, int, str] | None = None
    for position, entry in enumerate(accept.split(",")):
        media, *parameters = (part.strip() for part in entry.split(";"))
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        served = {GRAPHQL_RESPONSE: GRAPHQL_RESPONSE, JSON: JSON, "application/*": JSON, "*/*": JSON}.get(media.lower())
        if served is None or quality <= 0:
            continue
        if best is None or (quality, -position) > (best[0], -best[1]):
            best = quality, position, served
    if best is None:
        raise Rejected(406, f"responses are {GRAPHQL_RESPONSE} or {JSON}", "NOT_ACCEPTABLE")
    return best[2]


def _wants_page(accept: str | None, request: Request) -> bool:
    """A browser opening the URL: it accepts HTML and names no persisted document. A ``query`` parameter opens the
    page with that query (GraphiQL's usual link); clients asking for JSON get it run."""
    return (
        accept is not None
        and "text/html" in accept.lower()
        and not {"documentId", "extensions"} & set(request.query_params)
    )


def _flag(raw: str | None) -> bool:
    return (raw or "").lower() in {"1", "true", "on"}
