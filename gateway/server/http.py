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

import json
import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import orjson
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
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.store import Store
from gateway.dynamo.wire import is_text
from gateway.errors import GatewayError, Unauthenticated, Unavailable
from gateway.execution.cost import Planner
from gateway.execution.cursors import CursorCodec
from gateway.execution.guard import Guard
from gateway.execution.reader import Reader
from gateway.server.auth import API_KEY_HEADER, AUTHORIZATION_HEADER, Authenticator
from gateway.server.documents import Documents
from gateway.server.playground import Playground
from gateway.surface.context import Context

log = logging.getLogger(__name__)

ACCOUNTING_HEADER = "x-tablegraph-accounting"
EXPLAIN_HEADER = "x-tablegraph-explain"
REQUEST_ID_HEADER = "x-request-id"
GRAPHQL_RESPONSE = "application/graphql-response+json"
JSON = "application/json"

_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
# A JSON escape of a UTF-16 surrogate, paired or not: only a text that has one can decode to a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
_PARAMETERS = ("query", "operationName", "documentId", "variables", "extensions")
# Headers whose values the gateway uses as text: an id it logs and echoes, credentials it hashes or verifies.
_TEXT_HEADERS = (REQUEST_ID_HEADER, AUTHORIZATION_HEADER, API_KEY_HEADER)
_ALLOWED = {"GET": {OperationType.QUERY}, "POST": {OperationType.QUERY, OperationType.MUTATION}}


class _Refused(Exception):
    """A request that is not a well-formed GraphQL-over-HTTP request, or may not be served."""

    def __init__(
        self, status: int, message: str, code: str = "BAD_REQUEST", headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = dict(headers or {})


@dataclass(frozen=True)
class _Params:
    query: str | None
    operation_name: str | None
    variables: dict[str, Any] | None
    extensions: dict[str, Any] | None
    document_id: str | None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> _Params:
        query, name, document_id = data.get("query"), data.get("operationName"), data.get("documentId")
        variables, extensions = data.get("variables"), data.get("extensions")
        for label, value, kind in (
            ("query", query, str),
            ("operationName", name, str),
            ("documentId", document_id, str),
            ("variables", variables, dict),
            ("extensions", extensions, dict),
        ):
            if value is not None and not isinstance(value, kind):
                raise _Refused(400, f"{label} must be {'a string' if kind is str else 'an object'}")
        return cls(query, name or None, variables, extensions, document_id)


class GraphQLEndpoint:
    """The ASGI endpoint at /graphql."""

    def __init__(
        self,
        schema: strawberry.Schema,
        settings: Settings,
        authenticator: Authenticator,
        tenancy: Tenancy,
        planner: Planner | None,
        documents: Documents,
    ) -> None:
        self._schema = schema
        self._settings = settings
        self._authenticator = authenticator
        self._tenancy = tenancy
        self._planner = planner
        self._documents = documents
        self._codec = CursorCodec(settings.cursor_secret)
        self.playground = Playground() if settings.graphiql else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        given = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = given if _SANE_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        media = JSON
        try:
            if request.method not in _ALLOWED:
                raise _Refused(405, "GraphQL is served over GET and POST", "METHOD_NOT_ALLOWED", {"Allow": "GET, POST"})
            accept = request.headers.get("accept")
            if self.playground and request.method == "GET" and _wants_page(accept, request):
                response = self.playground.page()
            else:
                media = _negotiate(accept)
                response = await self._serve(request, media, request_id)
        except _Refused as refused:
            body = {"errors": [{"message": refused.message, "extensions": {"code": refused.code}}]}
            response = _json(body, refused.status, media, refused.headers)
        response.headers[REQUEST_ID_HEADER] = request_id
        await response(scope, receive, send)

    async def _serve(self, request: Request, media: str, request_id: str) -> Response:
        _check_headers(request)
        try:
            principal = await self._authenticator.authenticate(request.headers)
        except Unauthenticated as error:
            raise _Refused(401, error.message, error.code, {"WWW-Authenticate": 'Bearer realm="tablegraph"'}) from None
        except Unavailable as error:
            raise _Refused(503, error.message, error.code) from None
        params = await self._params(request)
        guard = Guard(request.app.state.store.model, self._tenancy, principal)
        if isinstance(params, list):
            bodies = [(await self._run(request, one, guard, request_id))[0] for one in params]
            return _json(bodies, 200, JSON)
        body, ran = await self._run(request, params, guard, request_id)
        return _json(body, 200 if ran or media == JSON else 400, media)

    async def _run(
        self, request: Request, params: _Params, guard: Guard, request_id: str
    ) -> tuple[dict[str, Any], bool]:
        """The response body, and whether the operation was run (or planned) rather than refused as a request."""
        try:
            query = self._documents.resolve(params.query, params.extensions, params.document_id)
        except GatewayError as error:
            return {"errors": [GraphQLError(error.message, extensions=error.extensions).formatted]}, False
        if query is None:
            raise _Refused(400, "the request has no query")
        context = self._context(request, guard, request_id)
        try:
            result = await self._schema.execute(
                query,
                variable_values=params.variables,
                context_value=context,
                operation_name=params.operation_name,
                allowed_operation_types=_ALLOWED[request.method],
                operation_extensions=params.extensions,
            )
        except InvalidOperationTypeError as error:
            if error.operation_type == OperationType.MUTATION:
                raise _Refused(405, "mutations are sent with POST", "METHOD_NOT_ALLOWED", {"Allow": "POST"}) from None
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
            raise _Refused(400, "the request has no query") from None
        return _body(result), not isinstance(result, PreExecutionError)

    def _context(self, request: Request, guard: Guard, request_id: str) -> Context:
        store: Store = request.app.state.store
        ledger = Ledger()
        return Context(
            request_id=request_id,
            reader=Reader(store, self._settings, self._codec, ledger, guard, request_id),
            store=store,
            ledger=ledger,
            accounting=_flag(request.headers.get(ACCOUNTING_HEADER)),
            explain=_flag(request.headers.get(EXPLAIN_HEADER)),
            planner=self._planner,
        )

    async def _params(self, request: Request) -> _Params | list[_Params]:
        if request.method == "GET":
            query = _url_parameters(request.scope["query_string"])
            return _Params.of(
                {
                    "query": query.get("query"),
                    "operationName": query.get("operationName"),
                    "documentId": query.get("documentId"),
                    "variables": _json_parameter(query.get("variables"), "variables"),
                    "extensions": _json_parameter(query.get("extensions"), "extensions"),
                }
            )
        content_type, _, parameters = request.headers.get("content-type", "").partition(";")
        charset = re.search(r"charset=\"?([^\";]+)", parameters, re.IGNORECASE)
        if content_type.strip().lower() != JSON or (charset and charset.group(1).lower() not in {"utf-8", "utf8"}):
            raise _Refused(415, "a POST body must be application/json in UTF-8", "UNSUPPORTED_MEDIA_TYPE")
        data = _json_text(_utf8(await self._body(request), "the body"), "the body")
        if isinstance(data, list):
            if not 0 < len(data) <= self._settings.max_batch:
                raise _Refused(400, f"a batch may hold 1 to {self._settings.max_batch} operations; here it is off")
            if not all(isinstance(one, dict) for one in data):
                raise _Refused(400, "each operation of a batch must be a JSON object")
            return [_Params.of(one) for one in data]
        if not isinstance(data, dict):
            raise _Refused(400, "the body must be a JSON object")
        return _Params.of(data)

    async def _body(self, request: Request) -> bytes:
        limit = self._settings.max_body_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _Refused(413, f"the body is larger than {limit} bytes", "PAYLOAD_TOO_LARGE")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise _Refused(413, f"the body is larger than {limit} bytes", "PAYLOAD_TOO_LARGE")
            chunks.append(chunk)
        return b"".join(chunks)


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
        _encode(body),
        status_code=status,
        headers={
            **(headers or {}),
            "Content-Type": f"{media}; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )


def _encode(body: Any) -> bytes:
    try:
        # Several times faster than the standard library on a page of a hundred items.
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        # What orjson refuses (integers past 64 bits, keys that are not strings) the standard library writes.
        text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        # Such text is refused when it comes in and withheld item by item when it was stored; should some still
        # reach an answer, replacement characters are better than a 500.
        log.error("an answer held text that is not valid Unicode; it was sent with U+FFFD in its place")
        return _SURROGATE.sub("\ufffd", text).encode()


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
        raise _Refused(406, f"responses are {GRAPHQL_RESPONSE} or {JSON}", "NOT_ACCEPTABLE")
    return best[2]


def _wants_page(accept: str | None, request: Request) -> bool:
    """A browser opening the URL: it accepts HTML and asks for no operation."""
    return (
        accept is not None
        and "text/html" in accept.lower()
        and not {"query", "documentId", "extensions"} & set(request.query_params)
    )


def _json_parameter(raw: str | None, name: str) -> Any:
    if raw is None or raw == "":
        return None
    return _json_text(raw, name)


def _json_text(text: str, name: str) -> Any:
    """``text`` parsed as JSON; refused when it is not JSON, or when a string in it is not valid Unicode."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # nesting deeper than the parser's stack is bad JSON too
        raise _Refused(400, f"{name} is not valid JSON") from None
    # The standard library decodes "\ud800" to a lone surrogate. Only a text with such an escape is walked.
    if _SURROGATE_ESCAPE.search(text) is not None:
        where = _invalid_text(data)
        if where is not None:
            raise _not_unicode(where if name == "the body" else name)
    return data


def _invalid_text(data: Any) -> str | None:
    """Where in parsed JSON a string (or object key) is not valid Unicode: the request parameter that holds it,
    ``the body`` when no parameter does; None when every string is valid."""
    stack: list[tuple[Any, str]] = [(data, "the body")]
    while stack:  # not recursive: the parser allows more nesting than Python's stack
        value, where = stack.pop()
        if isinstance(value, str):
            if not is_text(value):
                return where
        elif isinstance(value, dict):
            for name, member in value.items():
                if not is_text(name):
                    return where
                stack.append((member, name if where == "the body" and name in _PARAMETERS else where))
        elif isinstance(value, list):
            stack.extend((member, where) for member in value)
    return None


def _utf8(raw: bytes, name: str) -> str:
    try:
        # Strict: bytes that are not UTF-8, and UTF-8's encodings of surrogates, are not text.
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _not_unicode(name) from None


def _url_parameters(raw: bytes) -> dict[str, str]:
    """The URL's query parameters, decoded strictly: starlette would turn bytes that are not UTF-8 into U+FFFD."""
    try:
        return dict(parse_qsl(_utf8(raw, "the URL"), keep_blank_values=True, errors="strict"))
    except UnicodeDecodeError:
        raise _not_unicode("the URL") from None


def _check_headers(request: Request) -> None:
    """Headers used as text (latin-1 to starlette, so never an error there) must be UTF-8."""
    headers = request.headers
    for name in _TEXT_HEADERS:
        value = headers.get(name)
        if value is not None and not value.isascii():
            _utf8(value.encode("latin-1"), f"the {name} header")


def _not_unicode(where: str) -> _Refused:
    return _Refused(
        400,
        f"{where} holds text that is not valid Unicode (bytes that are not UTF-8, or a lone UTF-16 surrogate)",
        "BAD_USER_INPUT",
    )


def _flag(raw: str | None) -> bool:
    return (raw or "").lower() in {"1", "true", "on"}
