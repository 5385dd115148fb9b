"""The example domains' GraphQL surface, derived from their declaration in ``schema.model``."""

from __future__ import annotations

from gateway.surface.graph import build

from .demo import DEMO
from .model import MODEL, TENANCY

GRAPH = build(DEMO)
SCHEMA = GRAPH.schema

__all__ = ["DEMO", "GRAPH", "MODEL", "SCHEMA", "TENANCY"]
