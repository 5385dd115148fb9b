"""Settings, read once at the edge from arguments and ``TABLEGRAPH_*`` environment variables."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

DEFAULT_TABLE = "tablegraph"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    endpoint_url: str | None = None
    aws: bool = False
    """With no endpoint URL: True uses AWS DynamoDB (credentials and region as the AWS SDK finds them), False
    starts a managed DynamoDB Local."""
    table: str = DEFAULT_TABLE
    region: str = "us-east-1"
    demo: bool = False
    data_dir: Path | None = None
    cursor_secret: str = ""
    """Signs pagination cursors; when empty a random secret is made per process (cursors then die with it)."""
    default_page_size: int = 20
    max_page_size: int = 100
    max_pool_connections: int = 50
    log_level: str = "INFO"

    def __post_init__(self) -> None:
        if not 1 <= self.default_page_size <= self.max_page_size:
            raise ValueError("default_page_size must be between 1 and max_page_size")
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


def _coerce(name: str, annotation: object, raw: str) -> Any:
    kind = str(annotation)
    try:
        if kind == "bool":
            if raw.lower() not in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
                raise ValueError(raw)
            return raw.lower() in {"1", "true", "yes", "on"}
        if kind == "int":
            return int(raw)
        if kind.startswith("Path"):
            return Path(raw)
    except ValueError:
        raise ValueError(f"TABLEGRAPH_{name.upper()}={raw!r} is not a valid {kind}") from None
    return raw
