"""The per-request context every resolver receives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphql import ExecutionResult

from gateway.config import Settings
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.store import Store
from gateway.execution.cursors import CursorCodec
from gateway.execution.guard import Guard
from gateway.execution.reader import Reader
from gateway.live.fanout import Feed
from gateway.live.shares import Result, Run

if TYPE_CHECKING:
    from gateway.execution.cost import Planner
    from gateway.surface.compiled import EventExecutors


@dataclass(frozen=True, slots=True)
class Live:
    """What a subscription needs besides the request's context: the feed, and how to build a reader per event."""

    feed: Feed
    settings: Settings
    codec: CursorCodec
    run: Run | None = None
    """The shared run the subscription is, whose members receive what it resolves; None: it runs alone."""
    finish: Callable[[ExecutionResult, str], Result] | None = None
    """An event's result (of the request with this id) as its subscribers receive it, serialised once."""


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
    compiled: bool = True
    """Run queries and subscription events from plans compiled once per document (``surface.compiled``)."""
    plans: dict[int, Any] | None = None
    """The compiled plans of the request's document (``Prepared.plans``); None: it is not kept, so interpreted."""
    executed: str | None = None
    """How the operation ran, once it has: ``compiled`` or ``interpreted`` (counted in /metrics)."""
    events: EventExecutors | None = None
    """How a subscription's events are executed, once its executor is built: a standing run keeps it."""

    @classmethod
    def of(
        cls,
        store: Store,
        settings: Settings,
        codec: CursorCodec,
        guard: Guard,
        request_id: str,
        *,
        planner: Planner | None,
        live: Live | None = None,
        accounting: bool = False,
        explain: bool = False,
    ) -> Context:
        """One request's context, whatever its transport: a ledger and a reader of its own, over ``store``."""
        ledger = Ledger()
        return cls(
            request_id=request_id,
            reader=Reader(store, settings, codec, ledger, guard, request_id),
            ledger=ledger,
            accounting=accounting,
            explain=explain,
            planner=planner,
            live=live,
            store=store,
            compiled=settings.compiled_execution,
        )

    @property
    def guard(self) -> Guard:
        """The caller's rights; a write path checks its keys with ``guard.check_keys`` before sending."""
        return self.reader.guard
