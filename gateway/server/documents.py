"""Trusted documents: persisted-query hashes (the APQ form) and a strict mode that runs only registered documents.

A client sends ``extensions.persistedQuery = {"version": 1, "sha256Hash": "<hex>"}`` with or without the query
text, or a ``documentId`` of ``sha256:<hex>``. In ``apq`` mode a document sent once with its hash is remembered
(per process, most recently used first, bounded) and later runs by hash alone; in ``strict`` mode only documents
in the manifest run, whether sent by hash or in full.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphql import GraphQLError, parse

from gateway.config import Settings
from gateway.dynamo.wire import is_text
from gateway.errors import (
    BadUserInput,
    PersistedQueryNotFound,
    PersistedQueryNotSupported,
    PersistedQueryRequired,
)

APQ_CAPACITY = 1000
APQ_MAX_DOCUMENT = 32 * 1024
APQ_MAX_BYTES = 8 * 1024 * 1024


def sha256(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


class Documents:
    def __init__(self, mode: str, manifest: Mapping[str, str] | None = None, capacity: int = APQ_CAPACITY) -> None:
        self.mode = mode
        self._manifest = dict(manifest or {})
        self._remembered: OrderedDict[str, str] = OrderedDict()
        self._remembered_bytes = 0
        self._capacity = capacity

    @classmethod
    def from_settings(cls, settings: Settings) -> Documents:
        manifest = load_manifest(settings.persisted_documents) if settings.persisted_documents else {}
        return cls(settings.persisted_queries, manifest)

    def resolve(self, query: str | None, extensions: Mapping[str, Any] | None, document_id: str | None) -> str | None:
        """The document to run; raises when the request names one that is unknown or not allowed."""
        digest = _requested_hash(extensions, document_id)
        if digest is None:
            if query is not None and self.mode == "strict" and sha256(query) not in self._manifest:
                raise PersistedQueryRequired("only registered documents may run here; send its hash")
            return query
        if self.mode == "off":
            raise PersistedQueryNotSupported("persisted queries are not supported here; send the query")
        if query is not None:
            if sha256(query) != digest:
                raise BadUserInput("the persisted query hash does not match the query", argument="extensions")
            if self.mode == "strict" and digest not in self._manifest:
                raise PersistedQueryRequired("only registered documents may run here")
            if self.mode == "apq":
                self._remember(digest, query)
            return query
        found = self._manifest.get(digest) or self._recall(digest)
        if found is None:
            raise PersistedQueryNotFound("PersistedQueryNotFound")
        return found

    def _remember(self, digest: str, query: str) -> None:
        # Only documents that parse, and only so many bytes of them: any caller may register one.
        if digest in self._remembered or len(query) > APQ_MAX_DOCUMENT or not _parses(query):
            return
        self._remembered[digest] = query
        self._remembered_bytes += len(query)
        while len(self._remembered) > self._capacity or self._remembered_bytes > APQ_MAX_BYTES:
            _, dropped = self._remembered.popitem(last=False)
            self._remembered_bytes -= len(dropped)

    def _recall(self, digest: str) -> str | None:
        found = self._remembered.get(digest)
        if found is not None:
            self._remembered.move_to_end(digest)
        return found


def _parses(document: str) -> bool:
    try:
        parse(document, no_location=True)
    except GraphQLError:
        return False
    return True


def _requested_hash(extensions: Mapping[str, Any] | None, document_id: str | None) -> str | None:
    if document_id is not None:
        scheme, _, digest = document_id.partition(":")
        if scheme != "sha256" or not _is_sha256(digest):
            raise BadUserInput("documentId must be sha256:<64 hex digits>", argument="documentId")
        return digest
    persisted = (extensions or {}).get("persistedQuery")
    if persisted is None:
        return None
    if not isinstance(persisted, dict) or persisted.get("version") != 1 or not _is_sha256(persisted.get("sha256Hash")):
        raise BadUserInput("persistedQuery must be {version: 1, sha256Hash: <64 hex digits>}", argument="extensions")
    return str(persisted["sha256Hash"])


def _is_sha256(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def load_manifest(path: Path) -> dict[str, str]:
    """Registered documents by SHA-256: ``{"<hex>": "<document>"}`` (GraphQL Code Generator's persisted documents)
    or Apollo's ``{"format": "apollo-persisted-query-manifest", "operations": [{"id", "body"}, ...]}``."""
    data = json.loads(path.read_text())
    if isinstance(data, dict) and data.get("format") == "apollo-persisted-query-manifest":
        entries = {op["id"]: op["body"] for op in data.get("operations", [])}
    elif isinstance(data, dict):
        entries = data
    else:
        raise ValueError(f"{path}: a persisted documents manifest is a JSON object")
    for digest, document in entries.items():
        if isinstance(document, str) and not is_text(document):
            raise ValueError(f"{path}: the document registered as {digest!r} is not valid Unicode text")
        if not isinstance(document, str) or sha256(document) != digest:
            raise ValueError(f"{path}: the document registered as {digest!r} does not have that SHA-256")
    return entries
