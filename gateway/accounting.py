"""Per-request accounting of DynamoDB calls: how many, of which kind, in how many sequential rounds."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    operation: str
    started: float
    ended: float
    capacity: float


@dataclass
class Ledger:
    """Every DynamoDB call one GraphQL request made.

    A call's round is one more than the highest round of the calls that had ended before it started, so calls
    issued together share a round and a call that waited for another's answer starts the next one.
    """

    calls: list[Call] = field(default_factory=list)

    def record(self, operation: str, started: float, capacity: float = 0.0) -> None:
        self.calls.append(Call(operation, started, time.perf_counter(), capacity))

    @property
    def rounds(self) -> int:
        depth: dict[int, int] = {}
        ordered = sorted(range(len(self.calls)), key=lambda i: self.calls[i].started)
        for i in ordered:
            call = self.calls[i]
            before = [depth[j] for j in depth if self.calls[j].ended <= call.started]
            depth[i] = 1 + max(before, default=0)
        return max(depth.values(), default=0)

    def summary(self) -> dict[str, Any]:
        return {
            "calls": len(self.calls),
            "rounds": self.rounds,
            "operations": dict(Counter(call.operation for call in self.calls)),
            "consumedCapacity": round(sum(call.capacity for call in self.calls), 3),
        }
