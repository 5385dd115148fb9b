"""Subscribers of one selection share one run of it: one resolution and one serialised payload per change.

Subscribers share a run when their key is equal: the document, its operation name and variables, and the standing
of their guard (equal standings permit and hide the same items, so none receives what another may not see). The
first subscriber's operation runs; every subscriber receives its results, each into a mailbox of its own (read by a
task of its subscription) or, given a :class:`Sink`, written straight through (a socket's subscription: an idle one
holds no task), and writes its own frames. A run is open to others only once its watch is held and only if it
started without a position: a resumed subscription replays what it missed, which no later subscriber may share.

Once its operation has set up (and replayed what a resumed one missed), a run *stands*: it holds its watch and a way
to resolve a change, but no open GraphQL execution and no task. A change that arrives starts a task that resolves
what waits and ends; an idle run is a few small objects, whether others share it or not.
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

    __slots__ = ("_sink", "joined")

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


class Standing(Protocol):
    """What a run that stands holds between changes: its watch, and how it resolves what the watch receives."""

    @property
    def watch(self) -> Watch:
        """The subscription's watch, held until :meth:`release`."""

    async def respond(self, change: Change) -> Result | None:
        """The result of ``change``; None: it is not the subscribers' to see."""

    def failed(self, error: Exception) -> Result:
        """The result that ends the run when its watch or its resolution fails with ``error``."""

    def release(self) -> None:
        """Let go of the watch: nothing more reaches it."""


class Run:
    """One execution of a subscription, whose results every subscriber receives."""

    __slots__ = ("_ending", "_key", "_resolving", "_runs", "_standing", "_task", "members", "open", "settled")

    def __init__(self, key: Key, runs: dict[Key, Run]) -> None:
        self.members: set[Subscriber] = set()
        self._key = key
        self._runs = runs
        self._resolving: Change | None = None
        self.open = False
        """Others may join it: its watch is held, and it started without a position."""
        self.settled: asyncio.Future[None] | None = asyncio.get_running_loop().create_future()
        """Done once it is open, or will never be; None from then on (no one waits for it again). A future, not an
        event (whose deque of waiters, 760 bytes, a run would hold all its life); awaited shielded, so a waiter
        cancelled leaves it be."""
        self._task: asyncio.Task[None] | None = None
        """What runs it: the operation's task, then, once it stands, one while changes wait to be resolved."""
        self._ending = False
        self._standing: Standing | None = None

    def start(self, results: AsyncIterator[Result]) -> None:
        self._task = asyncio.create_task(self._pump(results))

    def stand(self, standing: Standing) -> None:
        """Once the operation's results end, resolve each change its watch receives with ``standing``."""
        self._standing = standing

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
        task = self._task
        # The run's own task ends itself: a subscriber that a final result ends leaves while it is delivered.
        if self.members or self._ending or (task is not None and task is asyncio.current_task()):
            return None
        self._close()
        self._let_go()
        if task is None:
            return None  # a standing run, idle
        task.cancel()
        return task

    async def _pump(self, results: AsyncIterator[Result]) -> None:
        try:
            async for result in results:
                if self._offer(result):
                    break
            else:
                standing = self._standing
                if standing is not None:  # set up: from now on, a task only while changes wait
                    self._task = None
                    standing.watch.listener = self._wake
                    self._wake()
                    return
        except Exception as error:  # each subscriber reports it, as its own run would have
            self._end(error)
            return
        self._end(None)

    def _wake(self) -> None:
        if self._task is None and not self._ending:
            self._task = asyncio.create_task(self._drain())

    async def _drain(self) -> None:
        standing = self._standing
        assert standing is not None
        try:
            while True:
                try:
                    change = standing.watch.take()
                    if change is None:
                        break
                    result = await standing.respond(change)
                except Exception as error:  # the feed's (fell behind, interrupted) or resolving's: it ends the run
                    result = standing.failed(error)
                if result is not None and self._offer(result):
                    self._end(None)
                    return
        finally:
            if self._task is asyncio.current_task():
                self._task = None
        if standing.watch.closed:
            self._end(None)

    def _offer(self, result: Result) -> bool:
        """Deliver ``result`` to every member; whether it ends the run."""
        # An error ends the operation whenever it comes: every subscriber receives it. A run no one may join (a
        # resumed one) has only the subscriber that began it, which receives all it resolves.
        shared = dataclasses.replace(result, change=self._resolving) if self.open and not result.final else result
        self._resolving = None
        # A copy: a sink whose subscription this result ends leaves the run while it is delivered.
        for subscriber in tuple(self.members):
            subscriber.offer(shared)
        return result.final

    def _end(self, error: Exception | None) -> None:
        """The run is over: each subscriber left is told, as its own run would have told it."""
        self._close()
        self._let_go()
        self._ending = True
        for subscriber in tuple(self.members):
            if error is None:
                subscriber.close()
            else:
                subscriber.fail(error)

    def _let_go(self) -> None:
        standing, self._standing = self._standing, None
        if standing is not None:
            standing.watch.listener = None
            standing.release()

    def _close(self) -> None:
        """No one joins from now on."""
        if self._runs.get(self._key) is self:
            del self._runs[self._key]
        self._settle()

    def _settle(self) -> None:
        settled, self.settled = self.settled, None
        if settled is not None:
            settled.set_result(None)


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
            assert run.settled is not None  # a run is settled once it is open, or no longer kept
            await asyncio.shield(run.settled)
        if run is None:
            run = self._runs[key] = Run(key, self._runs)
            run.start(start(run))
        return run
