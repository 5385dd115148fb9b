"""The per-request context every resolver receives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gateway.config import Settings
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.store import Store
from gateway.execution.cursors import CursorCodec
from gateway.execution.guard import Guard
from gateway.execution.reader import Reader
from gateway.live.fanout import Feed

if TYPE_CHECKING:
    from gateway.execution.cost import Planner


@dataclass(frozen=True)
class Live:
    """What a subscription needs besides the request's context: the feed, and how to build a reader per event."""

    feed: Feed
    settings: Settings
    codec: CursorCodec


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
    store: Store | None = None
    """What mutations write through; None where none are served (a subscription's events)."""

    @property
    def guard(self) -> Guard:
        """The caller's rights; a write path checks its keys with ``guard.check_keys`` before sending."""
        return self.reader.guard
