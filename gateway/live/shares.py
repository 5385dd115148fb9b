"""Subscribers of one selection share one run of it: one resolution and one serialised payload per change.

Subscribers share a run when their key is equal: the document, its operation name and variables, and the standing
of their guard (equal standings permit and hide the same items, so none receives what another may not see). The
first subscriber's operation runs; every subscriber receives its results, each into a mailbox of its own (read by a
task of its subscription) or, given a :class:`Sink`, written straight through (a socket's subscription: an idle one
holds no task), and writes its own frames. A run is open to others only once its watch is held and only if it
started without a position: a resumed subscription replays what it missed, which no later subscriber may share.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

from gateway.live.fanout import Change, Mailbox, Watch

Key = Hashable


@dataclass(frozen=True)
class Result:
    """One result of a run, serialised once for all its members."""

    payload: str
    """The result as JSON: what a ``next`` message or event carries."""
    final: bool
    """It ends the operation: an error."""
    errors: str = "[]"
    """The errors of a final result as JSON: what the ``error`` message that ends a socket's operation carries."""
    change: Change | None = None
    """The change it resolves; None for an error, which every subscriber receives."""


class Sink(Protocol):
    """Where a subscriber's results are written as they come, rather than queued until a task of its own reads them:
    a task each would cost several KiB per idle subscriber, and a wake-up per subscriber per change."""

    def deliver(self, result: Result) -> None:
        """One result; a final one ends the subscription."""

    def end(self, error: Exception | None) -> None:
        """The run ended (None: it completed) or failed with ``error``, or this subscriber did (it fell behind, its
        credentials expired)."""


class Subscriber(Mailbox[Result]):
    """One subscriber of a run: what reaches it, as if it ran alone from the moment it joined."""

    def __init__(self, sink: Sink | None = None) -> None:
        if sink is None:
            super().__init__()  # a mailbox: only one read by a task needs it
        self.joined = time.monotonic()
        self._sink = sink

    def offer(self, result: Result) -> None:
        if result.change is None or result.change.reaches(self.joined):
            if self._sink is None:
                self.put(result)
            else:
                self._sink.deliver(result)

    def close(self) -> None:
        if self._sink is None:
            super().close()
        else:
            self._sink.end(None)

    def fail(self, error: Exception) -> None:
        if self._sink is None:
            super().fail(error)
        else:
            self._sink.end(error)


class Run:
    """One execution of a subscription, whose results every subscriber receives."""

    def __init__(self, key: Key, runs: dict[Key, Run]) -> None:
        self.members: set[Subscriber] = set()
        self._key = key
        self._runs = runs
        self._resolving: Change | None = None
        self.open = False
        """Others may join it: its watch is held, and it started without a position."""
        self.settled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done once it is open, or will never be. A future, not an event (whose deque of waiters, 760 bytes, a
        distinct subscription's run would hold all its life); awaited shielded, so a waiter cancelled leaves it be."""
        self._task: asyncio.Task[None] | None = None
        self._ending = False

    def start(self, results: AsyncIterator[Result]) -> None:
        self._task = asyncio.create_task(self._pump(results))

    def watching(self, watch: Watch, shareable: bool) -> None:
        """The operation holds its watch: what it receives from now on, a subscriber joining now would receive."""
        watch.serves = self.members
        if shareable:
            self.open = True
            self._settle()
        else:
            self._close()

    def resolving(self, change: Change) -> None:
        """The operation is about to resolve ``change``: its next result is that change's."""
        self._resolving = change

    def join(self, sink: Sink | None = None) -> Subscriber:
        subscriber = Subscriber(sink)
        self.members.add(subscriber)
        return subscriber

    async def leave(self, subscriber: Subscriber) -> None:
        """Let go of ``subscriber``; the last one to leave stops the run, and is back once it has stopped."""
        stopping = self.drop(subscriber)
        if stopping is not None:
            await asyncio.gather(stopping, return_exceptions=True)

    def drop(self, subscriber: Subscriber) -> asyncio.Task[None] | None:
        """Let go of ``subscriber`` at once; the last one to leave cancels the run: its task, to await if need be."""
        self.members.discard(subscriber)
        # The run's own task ends itself: a subscriber that a final result ends leaves while it is delivered.
        if self.members or self._task is None or self._ending or self._task is asyncio.current_task():
            return None
        self._close()
        self._task.cancel()
        return self._task

    async def _pump(self, results: AsyncIterator[Result]) -> None:
        try:
            async for result in results:
                # An error ends the operation whenever it comes: every subscriber receives it. A run no one may join
                # (a resumed one) has only the subscriber that began it, which receives all it resolves.
                shared = (
                    dataclasses.replace(result, change=self._resolving) if self.open and not result.final else result
                )
                self._resolving = None
                # A copy: a sink whose subscription this result ends leaves the run while it is delivered.
                for subscriber in tuple(self.members):
                    subscriber.offer(shared)
                if result.final:
                    break
        except Exception as error:  # each subscriber reports it, as its own run would have
            self._close()
            self._ending = True
            for subscriber in tuple(self.members):
                subscriber.fail(error)
            return
        self._close()
        self._ending = True
        for subscriber in tuple(self.members):
            subscriber.close()

    def _close(self) -> None:
        """No one joins from now on."""
        if self._runs.get(self._key) is self:
            del self._runs[self._key]
        self._settle()

    def _settle(self) -> None:
        if not self.settled.done():
            self.settled.set_result(None)


class Shares:
    """This process's runs open to subscribers, or about to be, by key."""

    def __init__(self) -> None:
        self._runs: dict[Key, Run] = {}

    @asynccontextmanager
    async def join(self, key: Key, start: Callable[[Run], AsyncIterator[Result]]) -> AsyncIterator[Subscriber]:
        """A subscriber of the open run of ``key``, or of a new run of ``start``'s results.

        Subscribers that arrive together wait for the first one's run to hold its watch, then join it if it is open.
        """
        run = await self._run(key, start)
        subscriber = run.join()
        try:
            yield subscriber
        finally:
            await run.leave(subscriber)

    async def attach(
        self, key: Key, start: Callable[[Run], AsyncIterator[Result]], sink: Sink
    ) -> tuple[Run, Subscriber]:
        """As :meth:`join`, for a subscriber whose results go to ``sink``: it leaves with ``run.drop(subscriber)``."""
        run = await self._run(key, start)
        return run, run.join(sink)

    async def _run(self, key: Key, start: Callable[[Run], AsyncIterator[Result]]) -> Run:
        while (run := self._runs.get(key)) is not None and not run.open:
            await asyncio.shield(run.settled)
        if run is None:
            run = self._runs[key] = Run(key, self._runs)
            run.start(start(run))
        return run
