"""Settings, read once at the edge from arguments and ``TABLEGRAPH_*`` environment variables."""

from __future__ import annotations

import ast
import inspect
import os
import secrets
import textwrap
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any, get_args, get_type_hints

DEFAULT_TABLE = "tablegraph"
DEFAULT_MODEL = "schema.demo:DEMO"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    """Address ``serve`` listens on."""
    port: int = 8000
    """Port ``serve`` listens on; checked free before anything else starts."""
    endpoint_url: str | None = None
    """DynamoDB endpoint, e.g. http://127.0.0.1:8001; none: ``aws`` decides."""
    aws: bool = False
    """With no endpoint URL: True uses AWS DynamoDB (credentials and region as the AWS SDK finds them), False
    starts a managed DynamoDB Local."""
    table: str = ""
    """The table to serve; empty: the one the declaration names."""
    model: str = DEFAULT_MODEL
    """The declaration to serve: a YAML or JSON file (docs/declarations.md), or a Python one as ``pkg.module:attr``."""
    region: str = "us-east-1"
    """AWS region."""
    demo: bool = False
    """``serve``: create the table, load the demo data, and open the gateway when no credentials are set."""
    data_dir: Path | None = None
    """Keep the managed DynamoDB Local's data in this folder; none: in memory."""
    cursor_secret: str = ""
    """Signs pagination cursors; when empty a random secret is made per process (cursors then die with it)."""
    default_page_size: int = 20
    """Items a connection returns when ``first`` is not given."""
    max_page_size: int = 100
    """The largest ``first`` a connection accepts."""
    filter_read_calls: int = 3
    """The most Query calls a filtered page makes to fill itself before it stops and says so."""
    max_pool_connections: int = 50
    """HTTP connections to DynamoDB kept open per process."""
    log_level: str = "INFO"
    """DEBUG, INFO, WARNING or ERROR."""
    # Protection and protocol; README "Security" explains each.
    auth_open: bool = False
    """No authentication at all: every caller may touch every tenant. Only for a local demo."""
    jwt_issuer: str = ""
    """OIDC issuer whose JWKS verifies RS256/ES256 bearer tokens; needs ``jwt_audience``."""
    jwt_audience: str = ""
    """The ``aud`` bearer tokens must carry."""
    jwt_jwks_url: str = ""
    """The issuer's JWKS; found through OIDC discovery when empty."""
    jwt_algorithms: str = "RS256,ES256"
    """Comma-separated signature algorithms accepted from the issuer."""
    jwt_leeway: int = 30
    """Seconds of clock skew allowed on exp, nbf and iat."""
    jwt_max_lifetime: int = 86_400
    """Seconds a token may live, from iat (or from now without one) to exp; longer ones are refused. 0: no limit."""
    jwt_secret: str = ""
    """An HS256 shared secret (32 bytes or more), for development."""
    jwt_claim: str = "tablegraph"
    """The claim that holds the caller's grants and roles."""
    jwks_max_age: int = 600
    """Seconds the issuer's signing keys are kept before they are fetched again."""
    jwks_refetch_after: float = 30.0
    """A token with an unknown key id fetches the keys again, at most this often (a rotated key waits no longer)."""
    api_keys: str = ""
    """JSON object: the SHA-256 hex digest of each key, mapped to its grants and roles."""
    max_depth: int = 12
    """The deepest selection an operation may nest."""
    max_aliases: int = 30
    """Aliases one operation may use."""
    max_tokens: int = 5000
    """Tokens one document may hold."""
    max_calls: int = 250
    """The most DynamoDB calls one operation may be estimated to make."""
    max_rounds: int = 8
    """Rounds of DynamoDB calls (each waiting on the one before) one operation may be estimated to need."""
    max_objects: int = 20_000
    """Objects an operation's answer may hold, counted before execution (every page full)."""
    introspection: str = "on"
    """on, off, or admin (only callers with the admin role)."""
    max_body_bytes: int = 1_048_576
    """The largest request body accepted."""
    ws_max_operations: int = 100
    """Operations one WebSocket may run at once; more are answered TOO_MANY_OPERATIONS, the connection goes on."""
    ws_max_queued: int = 1000
    """Messages a WebSocket client may leave unread; past that it is sent FELL_BEHIND and closed (code 1008)."""
    ws_send_timeout: float = 30.0
    """Seconds one message to a WebSocket client may take to send before the client counts as fallen behind."""
    ws_compression: bool = False
    """Negotiate permessage-deflate with WebSocket clients that offer it: a third to a tenth of the bytes for
    subscription events, for about 40 KiB more per connection (a compressor and a decompressor each) and CPU per
    frame sent; off, every idle subscriber costs a fraction of that (docs/subscriptions.md)."""
    max_batch: int = 0
    """Operations one POST may carry as a JSON array; 0 turns batching off."""
    persisted_queries: str = "apq"
    """off, apq (automatic persisted queries), or strict (only documents in ``persisted_documents``)."""
    persisted_documents: Path | None = None
    """The manifest of persisted documents (README "Security"); ``strict`` runs only these."""
    cors_origins: str = ""
    """Comma-separated origins that browsers may call from; none when empty."""
    graphiql: bool = True
    """Serve the GraphiQL playground on GET /graphql."""
    workers: int = 1
    """Processes ``serve`` runs; each gets these settings through ``TABLEGRAPH_*`` variables."""
    fast_decode: bool = True
    """Decode read responses with ``gateway.dynamo.wire`` instead of botocore's parser; off gives the stock client."""
    data_plane: str = "lean"
    """lean: the requests made while serving are signed and sent by ``gateway.dynamo.dataplane``, a quarter of the CPU;
    stock: every request goes through the aioboto3 client (tables and the offline Scan always do)."""
    compiled_execution: bool = True
    """Run queries and subscription events from plans compiled once per document, which give graphql-core's answers
    for less CPU; off: graphql-core interprets every operation (``/metrics`` counts each way)."""
    fanout_url: str = ""
    """``redis://host:6379/0`` (Redis 7 or Valkey): the stream's records reach every gateway process, on every
    machine, through a channel per table there; empty: through a socket on 127.0.0.1, so one machine only."""
    metrics: bool = True
    """Serve Prometheus metrics at /metrics, without authentication: turn it off where the gateway's port is
    public and metrics are scraped some other way, or keep the port private."""
    metrics_operation_names: int = 100
    """Distinct operation names that get a metrics label of their own; later ones are counted as ``other``."""
    check_sample: int = 500
    """Items ``serve`` reads with a Scan in the background after start-up, to check them against the declaration
    (the log, ``/readyz`` and ``/metrics`` report what it finds); 0 turns the check off."""
    otlp_endpoint: str = ""
    """OTLP/HTTP traces endpoint (``http://collector:4318/v1/traces``); empty: no tracing. Needs the ``otel`` extra."""

    def __post_init__(self) -> None:
        if not 1 <= self.default_page_size <= self.max_page_size:
            raise ValueError("default_page_size must be between 1 and max_page_size")
        if self.filter_read_calls < 1:
            raise ValueError("filter_read_calls must be at least 1")
        if self.aws and self.endpoint_url:
            raise ValueError(
                "aws and endpoint_url (--aws, --endpoint-url; TABLEGRAPH_AWS, TABLEGRAPH_ENDPOINT_URL) cannot be used "
                "together: choose AWS DynamoDB or the DynamoDB at the endpoint URL"
            )
        if self.metrics_operation_names < 0:
            raise ValueError("metrics_operation_names must be 0 or more")
        if self.ws_max_operations < 1 or self.ws_max_queued < 1 or self.ws_send_timeout <= 0:
            raise ValueError("ws_max_operations, ws_max_queued and ws_send_timeout must be positive")
        if self.check_sample < 0:
            raise ValueError("check_sample must be 0 (off) or a number of items")
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        if self.jwt_max_lifetime < 0:
            raise ValueError("jwt_max_lifetime must be 0 (no limit) or a number of seconds")
        if self.introspection not in {"on", "off", "admin"}:
            raise ValueError("introspection must be on, off or admin")
        if self.data_plane not in {"lean", "stock"}:
            raise ValueError("data_plane must be lean or stock")
        if self.persisted_queries not in {"off", "apq", "strict"}:
            raise ValueError("persisted_queries must be off, apq or strict")
        if self.persisted_queries == "strict" and self.persisted_documents is None:
            raise ValueError("strict persisted queries need persisted_documents")
        if not self.cursor_secret:
            object.__setattr__(self, "cursor_secret", secrets.token_urlsafe(32))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Environment first, then explicit overrides (command-line options) that are not None."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for setting in describe():
            raw = environ.get(setting.env)
            if raw is not None and raw != "":
                try:
                    values[setting.name] = setting.parse(raw)
                except ValueError:
                    raise ValueError(f"{setting.env}={raw!r} is not a valid {setting.kind.__name__}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_endpoint(self, endpoint_url: str) -> Settings:
        return replace(self, endpoint_url=endpoint_url)

    def environment(self) -> dict[str, str]:
        """These settings as the ``TABLEGRAPH_*`` variables ``from_env`` reads back, for worker processes."""
        return {f"TABLEGRAPH_{f.name.upper()}": _text(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class Setting:
    """One field of Settings as the edges see it: its variable, type, default and the docstring under it."""

    name: str
    kind: type
    default: object
    doc: str

    @property
    def env(self) -> str:
        return f"TABLEGRAPH_{self.name.upper()}"

    def parse(self, raw: str) -> Any:
        """``raw`` as a value of this setting; ValueError when it is not one."""
        if self.kind is bool:
            if raw.lower() not in _TRUE | _FALSE:
                raise ValueError(raw)
            return raw.lower() in _TRUE
        return self.kind(raw)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@cache
def describe() -> tuple[Setting, ...]:
    """Every setting, in declaration order; fields added to Settings appear here (and on the command line)."""
    hints = get_type_hints(Settings)
    docs = _attribute_docstrings(Settings)
    return tuple(
        Setting(f.name, _plain_type(hints[f.name]), _default(f), docs.get(f.name, "")) for f in fields(Settings)
    )


def _default(f: Field[Any]) -> object:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None


def _plain_type(hint: Any) -> type:
    """``int`` for ``int`` and for ``int | None``: the type a text value is converted to."""
    if isinstance(hint, type):
        return hint
    options = [arg for arg in get_args(hint) if arg is not type(None)]
    if len(options) == 1 and isinstance(options[0], type):
        return options[0]
    raise TypeError(f"a setting must be one plain type, optionally with None: {hint}")


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """The string under each annotated attribute of ``cls``: Python keeps no trace of it, so read the source."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    for statement, following in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)
