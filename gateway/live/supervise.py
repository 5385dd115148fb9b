"""Long-running tasks that must not end by accident: a crash is logged with an id, reported, and the task restarted."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

Run = Callable[[], Awaitable[None]]
OnCrash = Callable[[str, str], None]
"""Told the task's name and the crash's id, once per crash."""

FIRST_BACKOFF = 0.2
MAX_BACKOFF = 10.0


class Supervised:
    """Runs ``run`` until cancelled; each time it raises, or returns, it runs again after a growing pause.

    ``down`` is true from a crash until the restart has run for a while without one: what readiness reports.
    """

    def __init__(self, name: str, run: Run, on_crash: OnCrash | None = None, healthy_after: float = 5.0) -> None:
        self.name = name
        self._run = run
        self._on_crash = on_crash
        self._healthy_after = healthy_after
        self.crashes = 0
        self.down = False
        self.last_crash: str | None = None
        """The id of the latest crash, as logged."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> asyncio.Task[None]:
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"supervised {self.name}")
        return self._task

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _supervise(self) -> None:
        backoff = FIRST_BACKOFF
        while True:
            loop = asyncio.get_running_loop()
            started = loop.time()
            steady = loop.call_later(self._healthy_after, self._recovered)
            try:
                await self._run()
                problem: BaseException | None = None
            except asyncio.CancelledError:
                raise
            except Exception as error:  # anything: the task is restarted whatever it was
                problem = error
            finally:
                steady.cancel()
            if loop.time() - started >= self._healthy_after:
                backoff = FIRST_BACKOFF
            self._crashed(problem)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    def _crashed(self, problem: BaseException | None) -> None:
        crash = uuid.uuid4().hex
        self.crashes += 1
        self.down = True
        self.last_crash = crash
        if problem is None:
            log.error("%s ended by itself (crash %s); restarting it", self.name, crash)
        else:
            log.error("%s crashed (crash %s); restarting it", self.name, crash, exc_info=problem)
        if self._on_crash is not None:
            try:
                self._on_crash(self.name, crash)
            except Exception:
                log.exception("reporting crash %s of %s failed", crash, self.name)

    def _recovered(self) -> None:
        self.down = False
