"""Per-request accounting of DynamoDB calls: how many, of which kind, in how many dependent rounds."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable
from contextvars import ContextVar, copy_context
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

# The highest round whose answer the running task has seen: what it asks for next cannot start before it.
_seen: ContextVar[int] = ContextVar("tablegraph_round_seen", default=0)


def next_round() -> int:
    """The round a request the current task sends now belongs to."""
    return _seen.get() + 1


def current_round() -> int:
    """The highest round whose answer the current task has seen."""
    return _seen.get()


def reached(round_: int) -> None:
    """The current task has the answer of a call in ``round_``; tasks it starts from now on inherit that."""
    if round_ > _seen.get():
        _seen.set(round_)


async def gather(*awaitables: Awaitable[T]) -> list[T]:
    """``asyncio.gather`` that hands the rounds its branches reached back to the caller."""
    if len(awaitables) == 1:  # one branch runs in the caller's task: what it reaches is the caller's already
        return [await awaitables[0]]
    contexts = [copy_context() for _ in awaitables]
    loop = asyncio.get_running_loop()
    futures = [loop.create_task(_awaited(a), context=c) for a, c in zip(awaitables, contexts, strict=True)]
    results = await asyncio.gather(*futures)
    reached(max((context.run(current_round) for context in contexts), default=0))
    return list(results)


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


@dataclass(frozen=True)
class Call:
    operation: str
    round: int
    capacity: float


@dataclass
class Progress:
    """How far a write that works in batches (a rewrite of copies) got: reported even when it stopped half way."""

    name: str
    items: int = 0
    batches: int = 0
    done: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "items": self.items, "batches": self.batches, "done": self.done}


@dataclass
class Ledger:
    """Every DynamoDB call one GraphQL request made.

    Rounds follow causality, not the clock: a call's round is one more than the highest round of the answers
    the code that sent it had awaited. Calls sent together share a round however the engine schedules them,
    and a call made with the answer of another is in the next round.
    """

    calls: list[Call] = field(default_factory=list)
    tasks: list[Progress] = field(default_factory=list)
    _base: int = field(default_factory=_seen.get, repr=False)

    def progress(self, name: str) -> Progress:
        """A new batched task of this request, reported with its calls."""
        self.tasks.append(Progress(name))
        return self.tasks[-1]

    def record(self, operation: str, capacity: float = 0.0, round_: int | None = None) -> int:
        """Account one call sent in ``round_`` (by default the current task's next) and return its round."""
        round_ = next_round() if round_ is None else round_
        self.calls.append(Call(operation, round_, capacity))
        reached(round_)
        return round_

    @property
    def rounds(self) -> int:
        return max((call.round for call in self.calls), default=self._base) - self._base

    def summary(self) -> dict[str, Any]:
        return {
            "calls": len(self.calls),
            "rounds": self.rounds,
            "operations": dict(Counter(call.operation for call in self.calls)),
            "consumedCapacity": round(sum(call.capacity for call in self.calls), 3),
            **({"progress": [task.as_dict() for task in self.tasks]} if self.tasks else {}),
        }


def capacity_units(consumed: Any) -> float:
    """The capacity units a response's ``ConsumedCapacity`` reports: one entry, or one per table of a batch."""
    if isinstance(consumed, list):
        return float(sum(entry.get("CapacityUnits", 0) for entry in consumed))
    if isinstance(consumed, dict):
        return float(consumed.get("CapacityUnits", 0))
    return 0.0
