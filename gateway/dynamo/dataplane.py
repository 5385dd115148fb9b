"""The lean data plane: the DynamoDB requests sent while serving, built, signed and sent without botocore's stack.

Botocore spends about 2 ms of CPU on each call (endpoint rules, a dozen events, request objects, the parser
walking every attribute value). This module sends the same JSON 1.0 requests for the few operations the gateway
makes while serving, with what the stock client keeps: the client's credentials (refreshed as botocore refreshes
them), its endpoint and signing region, SigV4, and the standard retry mode (its attempts, retryable errors, jittered
backoff and retry quota). Failures raise botocore's own exceptions with the response botocore would build, so the
store handles both paths alike. What botocore's event hooks do for the stock client, ``Hooks`` does here.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import random
import uuid
import zlib
from base64 import b64encode
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson
from botocore.exceptions import (
    ChecksumError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from botocore.httpsession import get_cert_path
from botocore.parsers import create_parser
from botocore.utils import get_environ_proxies

from gateway.dynamo.pool import ConnectTimeout, Pool, ReadTimeout, Unreachable
from gateway.dynamo.wire import UNDECODABLE, decode_item, tolerant_decode_item

if TYPE_CHECKING:
    from botocore.credentials import ReadOnlyCredentials
    from types_aiobotocore_dynamodb import DynamoDBClient

log = logging.getLogger(__name__)

OPERATIONS = frozenset(
    {
        "GetItem",
        "BatchGetItem",
        "Query",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "TransactWriteItems",
        "BatchWriteItem",
    }
)
"""What the data plane sends; the control plane (tables, Scan, TTL) stays on the aioboto3 client."""

_TARGET = "DynamoDB_20120810."
_CONTENT_TYPE = "application/x-amz-json-1.0"
_SERVICE = "dynamodb"
_UNSIGNED = frozenset({"expect", "transfer-encoding", "user-agent", "x-amzn-trace-id"})
"""Headers botocore's SigV4 leaves unsigned: proxies may change them."""

# botocore.retries.standard: the union of its throttling codes, its transient codes and statuses, and the error
# DynamoDB's model marks retryable.
_THROTTLING = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
_TRANSIENT = frozenset({"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete"})
_TRANSIENT_STATUS = frozenset({500, 502, 503, 504})
_MAX_BACKOFF = 20.0
_QUOTA = 500
_RETRY_COST = 5
_TIMEOUT_RETRY_COST = 10

# The item payloads decoded here, as ``gateway.wire.install_fast_reads`` does for the stock client, plus what a
# write returns. Keys (LastEvaluatedKey, UnprocessedKeys) stay in wire form: they are sent back as they are.
_ONE = {"GetItem": "Item", "PutItem": "Attributes", "UpdateItem": "Attributes", "DeleteItem": "Attributes"}

Send = Callable[[str, Mapping[str, str], bytes], None]
"""operation, headers, body: an attempt as it goes on the wire."""
Attempted = Callable[[str, int | None, Mapping[str, Any] | None], None]
"""operation, HTTP status (None: no answer), parsed answer: an attempt once it ended."""
Calling = Callable[[str, dict[str, Any]], None]
"""operation, the call's context (shared with its ``Called``): a call begins."""
Called = Callable[[str, dict[str, Any], int | None, Mapping[str, Any]], None]
"""operation, context, last status (None: no answer), parsed answer: a call ended, after its retries."""


@dataclass
class Hooks:
    """Listeners told what the data plane does, at the moments botocore's events tell about the stock client's
    calls (``before-call``, ``before-send``, ``response-received``, ``after-call``/``after-call-error``)."""

    calling: list[Calling] = field(default_factory=list)
    sending: list[Send] = field(default_factory=list)
    attempted: list[Attempted] = field(default_factory=list)
    called: list[Called] = field(default_factory=list)


class Signer:
    """AWS Signature Version 4 for a POST with a body to ``url``, as botocore's ``SigV4Auth`` computes it.

    The signing key depends only on the secret key, the day, the region and the service: it is derived once per
    day and per secret (rotated credentials derive a new one), not four HMACs per request.
    """

    def __init__(self, url: str, region: str, service: str = _SERVICE) -> None:
        self.host = _host(url)
        self.path = urlsplit(url).path or "/"
        self.region = region
        self.service = service
        self._key: tuple[str, str, bytes] = ("", "", b"")

    def signing_key(self, secret: str, day: str) -> bytes:
        cached_secret, cached_day, key = self._key
        if secret != cached_secret or day != cached_day:
            key = _hmac(f"AWS4{secret}".encode(), day)
            for part in (self.region, self.service, "aws4_request"):
                key = _hmac(key, part)
            self._key = (secret, day, key)
        return key

    def sign(
        self, credentials: ReadOnlyCredentials, headers: dict[str, str], body: bytes, now: datetime
    ) -> dict[str, str]:
        """``headers`` with Host's value signed, X-Amz-Date, the session token when there is one, Authorization.

        Every header given is signed but those botocore leaves out (User-Agent, Expect, ...): keep to the ones
        DynamoDB needs.
        """
        stamp = now.strftime("%Y%m%dT%H%M%SZ")
        day = stamp[:8]
        headers["X-Amz-Date"] = stamp
        if credentials.token:
            headers["X-Amz-Security-Token"] = credentials.token
        signed = {name.lower(): " ".join(value.split()) for name, value in headers.items()}
        for name in _UNSIGNED.intersection(signed):
            del signed[name]
        signed.setdefault("host", self.host)
        names = sorted(signed)
        signed_headers = ";".join(names)
        canonical = "\n".join(
            (
                "POST",
                self.path,
                "",
                "".join(f"{name}:{signed[name]}\n" for name in names),
                signed_headers,
                hashlib.sha256(body).hexdigest(),
            )
        )
        scope = f"{day}/{self.region}/{self.service}/aws4_request"
        to_sign = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        key = self.signing_key(credentials.secret_key or "", day)
        signature = hmac.new(key, to_sign.encode(), "sha256").hexdigest()
        headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={signed_headers}, Signature={signature}"
        )
        return headers


@dataclass
class _Attempt:
    status: int | None
    parsed: dict[str, Any]
    error: Exception | None = None


class DataPlane:
    """Sends ``OPERATIONS`` for one aioboto3 client over one pooled HTTP session; open it with ``open``."""

    def __init__(
        self,
        client: DynamoDBClient,
        url: str,
        region: str,
        pool: Pool,
        *,
        max_attempts: int,
        decode_items: bool,
    ) -> None:
        self._client = client
        self.url = url
        self.signer = Signer(url, region)
        self._pool = pool
        self._head = f"POST {self.signer.path} HTTP/1.1\r\nHost: {self.signer.host}\r\n"
        self._max_attempts = max_attempts
        self.decode_items = decode_items
        self._quota = _QUOTA
        self._parser = create_parser("json")
        self._user_agent = f"tablegraph/{version('tablegraph')} dataplane"
        self.hooks = Hooks()

    @classmethod
    async def open(cls, client: DynamoDBClient, table: str, *, decode_items: bool = True) -> DataPlane | None:
        """A data plane sending where ``client`` sends, signing as it signs, retrying as it is configured to.

        With ``decode_items`` the items of an answer (Item, Items, Responses, Attributes) come back decoded by
        ``gateway.dynamo.wire``; without, in DynamoDB's wire format as botocore returns them.

        None when the client reaches the endpoint through an HTTP proxy (its config's or the environment's, as
        botocore finds it), which the data plane does not speak.

        The endpoint comes from the client's own endpoint rules, resolved once for ``table`` (DynamoDB's rules
        depend on the region, FIPS and dual-stack settings, a custom endpoint URL, and an ARN as table name, all
        fixed for a store), so AWS endpoints, regions and ``endpoint_url`` resolve as before.
        """
        operation = client.meta.service_model.operation_model("GetItem")
        context: dict[str, Any] = {}
        url, _, _ = await client._resolve_endpoint_ruleset(operation, {"TableName": table}, context)  # type: ignore[attr-defined]
        region = context.get("signing", {}).get("region") or client.meta.region_name
        config: Any = client.meta.config  # botocore's Config: its options are set as attributes at run time
        if (config.proxies or get_environ_proxies(url)).get(urlsplit(url).scheme):
            return None
        retries: dict[str, Any] = config.retries or {}
        pool = Pool(
            url,
            limit=config.max_pool_connections or 10,
            connect_timeout=config.connect_timeout,
            read_timeout=config.read_timeout,
            # The CA bundle botocore verifies AWS's certificates with.
            cafile=get_cert_path(True) if url.startswith("https") else None,
        )
        return cls(
            client,
            url,
            region,
            pool,
            max_attempts=int(retries.get("total_max_attempts", 3)),
            decode_items=decode_items,
        )

    async def close(self) -> None:
        self._pool.close()

    async def call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        """DynamoDB's answer to ``operation``, items decoded; ``ClientError`` or a connection error otherwise."""
        if operation == "TransactWriteItems" and "ClientRequestToken" not in params:
            # As botocore does: one token for the call, shared by its retries, so DynamoDB answers the retry of an
            # applied transaction as it answered the first attempt.
            params = {**params, "ClientRequestToken": str(uuid.uuid4())}
        body = _encoded(params)
        context: dict[str, Any] = {}
        for hook in self.hooks.calling:
            hook(operation, context)
        acquired = 0
        attempt = 1
        while True:
            answer = await self._attempt(operation, body)
            for attempted in self.hooks.attempted:
                attempted(operation, answer.status, None if answer.error else answer.parsed)
            cost = self._retry_cost(answer)
            if not cost or attempt >= self._max_attempts or cost > self._quota:
                break
            self._quota -= cost
            acquired = cost
            await asyncio.sleep(_backoff(attempt))
            attempt += 1
        if answer.status is not None and 200 <= answer.status < 300 and answer.error is None:
            self._quota = min(_QUOTA, self._quota + (acquired or 1))
        metadata = answer.parsed.setdefault("ResponseMetadata", {})
        metadata.setdefault("HTTPStatusCode", answer.status)
        metadata["RetryAttempts"] = attempt - 1
        if attempt >= self._max_attempts:
            metadata["MaxAttemptsReached"] = True
        elif cost and cost > self._quota:
            metadata["RetryQuotaReached"] = True
        for called in self.hooks.called:
            called(operation, context, answer.status, answer.parsed)
        if answer.error is not None:
            raise answer.error
        if answer.status is not None and answer.status >= 300:
            raise ClientError(answer.parsed, operation)  # type: ignore[arg-type]
        return answer.parsed

    async def _attempt(self, operation: str, body: bytes) -> _Attempt:
        credentials = await self._credentials()
        headers = {
            "Content-Type": _CONTENT_TYPE,
            "X-Amz-Target": _TARGET + operation,
        }
        self.signer.sign(credentials, headers, body, datetime.now(UTC))
        headers["User-Agent"] = self._user_agent
        for sending in self.hooks.sending:
            sending(operation, headers, body)
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request = f"{self._head}{lines}Content-Length: {len(body)}\r\n\r\n".encode() + body
        try:
            answer = await self._pool.send(request)
        except ConnectTimeout as error:
            return _Attempt(None, {}, ConnectTimeoutError(endpoint_url=self.url, error=error))
        except Unreachable as error:
            return _Attempt(None, {}, EndpointConnectionError(endpoint_url=self.url, error=error))
        except ReadTimeout as error:
            return _Attempt(None, {}, ReadTimeoutError(endpoint_url=self.url, error=error))
        except OSError as error:
            return _Attempt(None, {}, ConnectionClosedError(endpoint_url=self.url, error=error))
        status, answer_headers, raw = answer.status, answer.headers, answer.body
        checksum = answer_headers.get("x-amz-crc32")
        if checksum is not None and (actual := zlib.crc32(raw)) != int(checksum):
            # A body damaged on the way: sent again, as botocore does.
            damaged = ChecksumError(checksum_type="crc32", expected_checksum=checksum, actual_checksum=str(actual))
            return _Attempt(status, {}, damaged)
        if status < 300 and self.decode_items:
            return _Attempt(status, _decoded(operation, raw))
        return _Attempt(status, self._parse(operation, status, answer_headers, raw))

    async def _credentials(self) -> ReadOnlyCredentials:
        # The client's own credentials object: a refreshable one refreshes itself here, as it does when botocore
        # signs.
        credentials = self._client._get_credentials()  # type: ignore[attr-defined]
        if credentials is None:
            raise NoCredentialsError()
        frozen: ReadOnlyCredentials = await credentials.get_frozen_credentials()
        return frozen

    def _parse(self, operation: str, status: int, headers: dict[str, str], raw: bytes) -> dict[str, Any]:
        """The response botocore builds, from botocore's own parser and DynamoDB's model: for errors, which are
        rare and whose every detail the store reads, and for every answer when items are not decoded here."""
        model = self._client.meta.service_model
        response = {"status_code": status, "headers": headers, "body": raw}
        output: Any = model.operation_model(operation).output_shape
        parsed: dict[str, Any] = self._parser.parse(response, output)
        shape = model.shape_for_error_code(parsed.get("Error", {}).get("Code"))
        if shape is not None:
            parsed.update(self._parser.parse(response, shape))
        return parsed

    def _retry_cost(self, answer: _Attempt) -> int:
        """What retrying ``answer`` takes from the retry quota; 0 when botocore's standard mode would not retry."""
        if isinstance(answer.error, ReadTimeoutError):
            return _TIMEOUT_RETRY_COST
        if answer.error is not None:
            return _RETRY_COST
        status = answer.status or 0
        code = answer.parsed.get("Error", {}).get("Code")
        retryable = (
            status in _TRANSIENT_STATUS
            or code in _THROTTLING
            or code in _TRANSIENT
            or code == "ReplicatedWriteConflictException"
        )
        return _RETRY_COST if retryable else 0


def _encoded(params: dict[str, Any]) -> bytes:
    """The request body, blobs in base64 as botocore sends them.

    orjson refuses a lone surrogate, which a key read back from DynamoDB can hold (see ``_decoded``): such a
    request is written by the standard library with ASCII escapes, as botocore writes every request.
    """
    try:
        return orjson.dumps(params, default=_blob)
    except TypeError:
        return json.dumps(params, default=_blob).encode()


def _blob(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} is not a DynamoDB request value")


def _decoded(operation: str, raw: bytes) -> dict[str, Any]:
    """A 2xx answer with its items decoded by ``gateway.dynamo.wire``, the rest as DynamoDB sent it.

    orjson refuses a body with a lone surrogate escape, which DynamoDB stores and returns as written: such a body
    is read by the standard library, and its items that hold such text come back ``Unreadable``. So does an item
    with a value the fast decoder does not know.
    """
    decode: Callable[[Any], dict[str, Any]] = decode_item
    try:
        body: dict[str, Any] = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        body = json.loads(raw)
        decode = tolerant_decode_item
    try:
        _decode_items(operation, body, decode)
    except UNDECODABLE:
        _decode_items(operation, body, tolerant_decode_item)
    return body


def _decode_items(operation: str, body: dict[str, Any], decode: Callable[[Any], dict[str, Any]]) -> None:
    """Each payload is replaced only once all of it decoded, so a failed pass leaves the body as it was."""
    one = _ONE.get(operation)
    if one is not None:
        if one in body:
            body[one] = decode(body[one])
    elif operation == "Query" and "Items" in body:
        body["Items"] = [decode(item) for item in body["Items"]]
    elif operation == "BatchGetItem" and "Responses" in body:
        body["Responses"] = {table: [decode(item) for item in items] for table, items in body["Responses"].items()}


def _backoff(attempt: int) -> float:
    """Standard mode's jittered backoff after attempt ``attempt`` (from 1): rand(0, 1) * min(2 ** (attempt - 1), 20)."""
    return random.random() * min(2.0 ** (attempt - 1), _MAX_BACKOFF)


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), "sha256").digest()


def _host(url: str) -> str:
    """The Host header botocore signs: the port only when it is not the scheme's default."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return host if parts.port is None or parts.port == default else f"{host}:{parts.port}"
