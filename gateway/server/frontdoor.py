"""The one way in: what HTTP, WebSocket and server-sent events check before an operation runs, with the same codes.

Every transport reads its request through here: credentials (the headers used as text must be UTF-8), the size
limit (``max_body_bytes``, for a POST body, an SSE body and a WebSocket message alike), text validity (bytes that
are not UTF-8, a lone UTF-16 surrogate anywhere), JSON that parses and does not nest past ``MAX_NESTING``, the
parameters' shapes, the document policy (persisted documents), and which operation types a method may run (no
mutation from a GET of any kind). A refusal is a :class:`Rejected`: the HTTP status it gets where the transport has
one, and the ``extensions.code`` it carries everywhere.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import orjson
from graphql import GraphQLError, OperationDefinitionNode, get_operation_ast, parse
from starlette.requests import Request
from strawberry.types.graphql import OperationType

from gateway.dynamo.wire import is_text
from gateway.errors import GatewayError, Unauthenticated, Unavailable
from gateway.execution.guard import Principal
from gateway.server.auth import API_KEY_HEADER, AUTHORIZATION_HEADER, Authenticator
from gateway.server.documents import Documents

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-request-id"
JSON = "application/json"
MAX_NESTING = 64
"""The deepest JSON a request may nest (variables and extensions included): deeper is refused, never recursed into."""
PARAMETERS = ("query", "operationName", "documentId", "variables", "extensions")

# A JSON escape of a UTF-16 surrogate, paired or not: only a text that has one can decode to a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Headers whose values the gateway uses as text: an id it logs and echoes, credentials it hashes or verifies.
_TEXT_HEADERS = (REQUEST_ID_HEADER, AUTHORIZATION_HEADER, API_KEY_HEADER)
_EVERYTHING = frozenset({OperationType.QUERY, OperationType.MUTATION, OperationType.SUBSCRIPTION})


class Rejected(Exception):
    """A request that is not well-formed, or may not be served: refused before anything runs."""

    def __init__(
        self, status: int, message: str, code: str = "BAD_REQUEST", headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = dict(headers or {})

    def formatted(self) -> dict[str, Any]:
        return {"message": self.message, "extensions": {"code": self.code}}


@dataclass(frozen=True)
class Params:
    query: str | None
    operation_name: str | None
    variables: dict[str, Any] | None
    extensions: dict[str, Any] | None
    document_id: str | None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Params:
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
                raise Rejected(400, f"{label} must be {'a string' if kind is str else 'an object'}")
        return cls(query, name or None, variables, extensions, document_id)


class FrontDoor:
    """The checks shared by every transport, with the settings and the document policy of one application."""

    def __init__(self, authenticator: Authenticator, documents: Documents, max_bytes: int) -> None:
        self.authenticator = authenticator
        self.documents = documents
        self.max_bytes = max_bytes

    async def authenticate(self, headers: Mapping[str, str]) -> Principal:
        """The caller; 401 when its credentials are missing or bad, 503 when they cannot be checked now."""
        check_headers(headers)
        try:
            return await self.authenticator.authenticate(headers)
        except Unauthenticated as error:
            raise Rejected(401, error.message, error.code, {"WWW-Authenticate": 'Bearer realm="tablegraph"'}) from None
        except Unavailable as error:
            raise Rejected(503, error.message, error.code) from None

    async def params(self, request: Request, *, batch: int = 0) -> Params | list[Params]:
        """A GET's URL parameters or a POST's JSON body; a list of up to ``batch`` operations when allowed."""
        if request.method == "GET":
            query = url_parameters(request.scope["query_string"])
            return Params.of(
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
            raise Rejected(415, "a POST body must be application/json in UTF-8", "UNSUPPORTED_MEDIA_TYPE")
        data = json_text(utf8(await self.body(request), "the body"), "the body")
        if isinstance(data, list):
            if not 0 < len(data) <= batch:
                raise Rejected(400, f"a batch may hold 1 to {batch} operations; here it is off")
            if not all(isinstance(one, dict) for one in data):
                raise Rejected(400, "each operation of a batch must be a JSON object")
            return [Params.of(one) for one in data]
        if not isinstance(data, dict):
            raise Rejected(400, "the body must be a JSON object")
        return Params.of(data)

    async def body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length", "")
        if declared.isdigit():
            self.within(int(declared))
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            self.within(size)
            chunks.append(chunk)
        return b"".join(chunks)

    def within(self, size: int) -> None:
        if size > self.max_bytes:
            raise Rejected(413, f"the body is larger than {self.max_bytes} bytes", "PAYLOAD_TOO_LARGE")

    def message(self, text: str) -> Any:
        """A WebSocket text message parsed as JSON, within the same size limit as a body; ``check`` it next."""
        # A character is at most 4 bytes: only a long text is measured exactly.
        if len(text) * 4 > self.max_bytes:
            self.within(len(text.encode("utf-8", errors="surrogatepass")))
        return parse_json(text, "the message")

    def check(self, data: Any, text: str, name: str) -> None:
        check_json(data, text, name)

    def document(self, params: Params) -> str | None:
        """The document to run, as the persisted-document policy allows (Rejected otherwise); None: none sent."""
        try:
            return self.documents.resolve(params.query, params.extensions, params.document_id)
        except GatewayError as error:
            raise Rejected(400, error.message, str(error.extensions["code"])) from None


def allowed(method: str | None, *, streams: bool) -> frozenset[OperationType]:
    """The operation types a request may run: a GET (of any transport) never writes; subscriptions only where the
    transport ``streams`` (WebSocket, whose method is None, and server-sent events)."""
    kinds = _EVERYTHING if streams else _EVERYTHING - {OperationType.SUBSCRIPTION}
    return kinds - {OperationType.MUTATION} if method == "GET" else kinds


def writes(query: str, operation_name: str | None, max_tokens: int) -> bool:
    """Whether the operation ``query`` names is a mutation; False when it does not parse (execution says why)."""
    return _operation_type(query, operation_name, max_tokens) == "mutation"


def subscribes(query: str, operation_name: str | None, max_tokens: int) -> bool:
    """Whether the operation ``query`` names is a subscription; False when it does not parse."""
    return _operation_type(query, operation_name, max_tokens) == "subscription"


def _operation_type(query: str, operation_name: str | None, max_tokens: int) -> str | None:
    try:
        document = parse(query, no_location=True, max_tokens=max_tokens)
    except GraphQLError:
        return None
    operation = get_operation_ast(document, operation_name)
    return operation.operation.value if isinstance(operation, OperationDefinitionNode) else None


def refuse_writes() -> Rejected:
    return Rejected(405, "mutations are sent with POST", "METHOD_NOT_ALLOWED", {"Allow": "POST"})


def json_text(text: str, name: str) -> Any:
    """``text`` parsed as JSON; refused when it is not JSON, nests too deep, or a string in it is not valid Unicode."""
    data = parse_json(text, name)
    check_json(data, text, name)
    return data


def parse_json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # nesting deeper than the parser's stack is bad JSON too
        raise Rejected(400, f"{name} is not valid JSON") from None


def check_json(data: Any, text: str, name: str) -> None:
    """Refuses ``data``, parsed from ``text``, when it nests too deep or a string in it is not valid Unicode."""
    where, deep = _walk(data, check_text=_SURROGATE_ESCAPE.search(text) is not None)
    if deep:
        raise Rejected(400, f"{name} nests deeper than {MAX_NESTING} levels", "BAD_USER_INPUT")
    if where is not None:
        raise not_unicode(where if name in ("the body", "the message") else name)


def _walk(data: Any, *, check_text: bool) -> tuple[str | None, bool]:
    """Where in parsed JSON a string (or object key) is not valid Unicode (the request parameter that holds it, or
    ``the body``), and whether it nests deeper than ``MAX_NESTING``. Not recursive: the parser allows more nesting
    than Python's stack."""
    stack: list[tuple[Any, str, int]] = [(data, "the body", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_NESTING:
            return None, True
        if isinstance(value, str):
            if check_text and not is_text(value):
                return where, False
        elif isinstance(value, dict):
            for name, member in value.items():
                if check_text and not is_text(name):
                    return where, False
                inner = name if where == "the body" and name in PARAMETERS else where
                stack.append((member, inner, depth + 1))
        elif isinstance(value, list):
            if check_text:
                stack.extend((member, where, depth + 1) for member in value)
            elif value and depth >= MAX_NESTING:
                return None, True  # its members are one level too deep
            else:
                # No text to check: only the lists and objects among the members are walked (a list of a hundred
                # ids is passed over in one loop, not a hundred turns of this one).
                stack.extend((member, where, depth + 1) for member in value if isinstance(member, dict | list))
    return None, False


def _json_parameter(raw: str | None, name: str) -> Any:
    if raw is None or raw == "":
        return None
    return json_text(raw, name)


def utf8(raw: bytes, name: str) -> str:
    try:
        # Strict: bytes that are not UTF-8, and UTF-8's encodings of surrogates, are not text.
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise not_unicode(name) from None


def url_parameters(raw: bytes) -> dict[str, str]:
    """The URL's query parameters, decoded strictly: starlette would turn bytes that are not UTF-8 into U+FFFD."""
    try:
        return dict(parse_qsl(utf8(raw, "the URL"), keep_blank_values=True, errors="strict"))
    except UnicodeDecodeError:
        raise not_unicode("the URL") from None


def check_headers(headers: Mapping[str, str]) -> None:
    """Headers used as text (latin-1 to starlette, so never an error there) must be UTF-8."""
    for name in _TEXT_HEADERS:
        value = headers.get(name)
        if value is not None and not value.isascii():
            utf8(value.encode("latin-1"), f"the {name} header")


def not_unicode(where: str) -> Rejected:
    return Rejected(
        400,
        f"{where} holds text that is not valid Unicode (bytes that are not UTF-8, or a lone UTF-16 surrogate)",
        "BAD_USER_INPUT",
    )


def encode(body: Any) -> bytes:
    """``body`` as JSON in UTF-8, whatever it holds."""
    try:
        # Several times faster than the standard library on a page of a hundred items.
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        # What orjson refuses (integers past 64 bits, keys that are not strings) the standard library writes.
        text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=str)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # Such text is refused when it comes in and withheld item by item when it was stored; should some still
        # reach an answer, replacement characters are better than a 500 or a dropped connection.
        log.error("an answer held text that is not valid Unicode; it was sent with U+FFFD in its place")
        return _SURROGATE.sub("\ufffd", text).encode()
