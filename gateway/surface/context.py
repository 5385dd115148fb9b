"""The per-request context every resolver receives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gateway.dynamo.accounting import Ledger
from gateway.execution.guard import Guard
from gateway.execution.reader import Reader

if TYPE_CHECKING:
    from gateway.execution.cost import Planner
    from gateway.surface.subscriptions import Live


@dataclass
class Context:
    request_id: str
    reader: Reader
    ledger: Ledger
    accounting: bool = False
    explain: bool = False
    """Plan the operation and answer with the plan, without running it."""
    planner: Planner | None = None
    """Limits and cost estimate checked before execution; None runs without them (in-process use)."""
    live: Live | None = None
    """The feed subscriptions read; None where none are served (plain HTTP)."""

    @property
    def guard(self) -> Guard:
        """The caller's rights; a write path checks its keys with ``guard.check_keys`` before sending."""
        return self.reader.guard
