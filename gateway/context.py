"""The per-request context every resolver receives."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.accounting import Ledger
from gateway.loaders import Reader


@dataclass
class Context:
    request_id: str
    reader: Reader
    ledger: Ledger
    accounting: bool = False
