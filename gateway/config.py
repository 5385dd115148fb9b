"""Settings, read once at the edge from arguments and ``TABLEGRAPH_*`` environment variables."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

DEFAULT_TABLE = "tablegraph"
DEFAULT_MODEL = "schema.demo:DEMO"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    endpoint_url: str | None = None
    aws: bool = False
    """With no endpoint URL: True uses AWS DynamoDB (credentials and region as the AWS SDK finds them), False
    starts a managed DynamoDB Local."""
    table: str = ""
    """The table to serve; empty: the one the declaration names."""
    model: str = DEFAULT_MODEL
    """The declaration to serve, as ``pkg.module:attr`` (see gateway.declaration)."""
    region: str = "us-east-1"
    demo: bool = False
    data_dir: Path | None = None
    cursor_secret: str = ""
    """Signs pagination cursors; when empty a random secret is made per process (cursors then die with it)."""
    default_page_size: int = 20
    max_page_size: int = 100
    max_pool_connections: int = 50
    log_level: str = "INFO"
    # Protection and protocol; README "Security" explains each.
    auth_open: bool = False
    """No authentication at all: every caller may touch every tenant. Only for a local demo."""
    jwt_issuer: str = ""
    """OIDC issuer whose JWKS verifies RS256/ES256 bearer tokens; needs ``jwt_audience``."""
    jwt_audience: str = ""
    jwt_jwks_url: str = ""
    """The issuer's JWKS; found through OIDC discovery when empty."""
    jwt_algorithms: str = "RS256,ES256"
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
    max_aliases: int = 30
    max_tokens: int = 5000
    max_calls: int = 250
    """The most DynamoDB calls one operation may be estimated to make."""
    max_rounds: int = 8
    max_objects: int = 20_000
    """Objects an operation's answer may hold, counted before execution (every page full)."""
    introspection: str = "on"
    """on, off, or admin (only callers with the admin role)."""
    max_body_bytes: int = 1_048_576
    max_batch: int = 0
    """Operations one POST may carry as a JSON array; 0 turns batching off."""
    persisted_queries: str = "apq"
    """off, apq (automatic persisted queries), or strict (only documents in ``persisted_documents``)."""
    persisted_documents: Path | None = None
    cors_origins: str = ""
    """Comma-separated origins that browsers may call from; none when empty."""
    graphiql: bool = True
    workers: int = 1
    """Processes ``serve`` runs; each gets these settings through ``TABLEGRAPH_*`` variables."""
    fast_decode: bool = True
    """Decode read responses with ``gateway.wire`` instead of botocore's parser; off gives the stock client."""

    def __post_init__(self) -> None:
        if not 1 <= self.default_page_size <= self.max_page_size:
            raise ValueError("default_page_size must be between 1 and max_page_size")
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        if self.jwt_max_lifetime < 0:
            raise ValueError("jwt_max_lifetime must be 0 (no limit) or a number of seconds")
        if self.introspection not in {"on", "off", "admin"}:
            raise ValueError("introspection must be on, off or admin")
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
        for f in fields(cls):
            raw = environ.get(f"TABLEGRAPH_{f.name.upper()}")
            if raw is not None and raw != "":
                values[f.name] = _coerce(f.name, f.type, raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_endpoint(self, endpoint_url: str) -> Settings:
        return replace(self, endpoint_url=endpoint_url)

    def environment(self) -> dict[str, str]:
        """These settings as the ``TABLEGRAPH_*`` variables ``from_env`` reads back, for worker processes."""
        return {f"TABLEGRAPH_{f.name.upper()}": _text(getattr(self, f.name)) for f in fields(self)}


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _coerce(name: str, annotation: object, raw: str) -> Any:
    kind = str(annotation)
    try:
        if kind == "bool":
            if raw.lower() not in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
                raise ValueError(raw)
            return raw.lower() in {"1", "true", "yes", "on"}
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind.startswith("Path"):
            return Path(raw)
    except ValueError:
        raise ValueError(f"TABLEGRAPH_{name.upper()}={raw!r} is not a valid {kind}") from None
    return raw
