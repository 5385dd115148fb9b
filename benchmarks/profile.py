"""``python -m benchmarks.profile``: where the gateway's CPU goes, by part, on each operation.

The gateway serves the benchmark's table from this process, through httpx's ASGI transport (as
``benchmarks.compiled`` does), under ``cProfile``. Each function's own time is given to the part of the code it is
in; a builtin's (``isinstance``, ``dict.get``) or the standard library's to its callers' parts, by what each
spent in it. The client's
time (httpx), the idle loop and the socket's send (cProfile measures wall time, so a send that waits for the CPU
would count) are left out: the shares are of the gateway's own work. The profiler slows Python calls more than C
calls, so the shares lean towards code made of many small calls; they say where to look, not what a change will
save. ``--dump DIR`` keeps each operation's profile for ``pstats``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from benchmarks import data
from benchmarks.compiled import SIZE, TABLE
from benchmarks.engine import client, engine
from benchmarks.operations import OPERATIONS
from gateway.config import Settings
from gateway.server.app import create_app

PARTS = (
    ("left out: the client", ("httpx", "h11", "importlib", "benchmarks/")),
    ("left out: idle", ("method 'poll'",)),
    ("left out: socket send", ("method 'send' of '_socket",)),
    ("graphql-core execution", ("graphql/execution",)),
    ("graphql-core parsing, values", ("graphql/",)),
    ("strawberry", ("strawberry/",)),
    ("compiled executor", ("gateway/surface/compiled",)),
    ("object building", ("gateway/surface/builder", "gateway/surface/types", "gateway/surface/hierarchy")),
    ("surface, other", ("gateway/surface",)),
    ("walk, reader, guard, cost", ("gateway/execution",)),
    ("recognition, keys, values", ("gateway/design",)),
    ("DynamoDB client and decoding", ("gateway/dynamo",)),
    ("HTTP, front door, metrics", ("gateway/server", "starlette", "uvicorn")),
    ("event loop", ("asyncio", "selectors", "socket")),
)
OTHER = "standard library, other"

_Where = tuple[str, int, str]
_Timing = tuple[int, int, float, float, dict[Any, Any]]


def part_of(where: _Where) -> str:
    """The part of the code a profiled function (file, line, name) is in."""
    text = f"{where[0]} {where[2]}"
    return next((label for label, needles in PARTS if any(needle in text for needle in needles)), OTHER)


def shares(stats: pstats.Stats) -> dict[str, float]:
    """Each part's share of the gateway's own time. A function of no part (a builtin, the standard library) is
    given to its callers' parts, by what each spent in it, up through callers of no part either."""
    table: dict[_Where, _Timing] = stats.stats  # type: ignore[attr-defined]
    resolved: dict[_Where, dict[str, float]] = {}

    def parts(where: _Where, seen: frozenset[_Where]) -> dict[str, float]:
        if where in resolved:
            return resolved[where]
        part = part_of(where)
        callers = table[where][4] if where in table else {}
        if part != OTHER or not callers or where in seen:
            return {part: 1.0}
        spent = {caller: timing[2] for caller, timing in callers.items()}
        whole = sum(spent.values()) or 1.0
        out: dict[str, float] = defaultdict(float)
        for caller, time_in in spent.items():
            for caller_part, weight in parts(caller, seen | {where}).items():
                out[caller_part] += weight * time_in / whole
        resolved[where] = dict(out)
        return resolved[where]

    totals: dict[str, float] = defaultdict(float)
    for where, timing in table.items():
        for part, weight in parts(where, frozenset()).items():
            totals[part] += timing[2] * weight
    kept = {part: value for part, value in totals.items() if not part.startswith("left out")}
    whole = sum(kept.values()) or 1.0
    return {part: value / whole for part, value in sorted(kept.items(), key=lambda pair: -pair[1])}


async def _profile(url: str, numbers: set[int], requests: int, dump: Path | None) -> None:
    settings = Settings(endpoint_url=url, table=TABLE, auth_open=True, cursor_secret="benchmark", log_level="WARNING")
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            for operation in OPERATIONS:
                if operation.number not in numbers:
                    continue
                body: dict[str, Any] = {"query": operation.query, "variables": operation.variables}
                for _ in range(requests):
                    await http.post("/graphql", json=body)
                profiler = cProfile.Profile()
                start = time.process_time()
                profiler.enable()
                for _ in range(requests):
                    answer = (await http.post("/graphql", json=body)).json()
                    assert "errors" not in answer, answer
                profiler.disable()
                spent = (time.process_time() - start) / requests * 1000
                stats = pstats.Stats(profiler)
                if dump is not None:
                    stats.dump_stats(dump / f"operation-{operation.number}.prof")
                print(f"\n#{operation.number} {operation.name}: {spent:.2f} ms CPU per request, profiled")
                for part, share in shares(stats).items():
                    print(f"  {part:32s} {share * 100:5.1f}%")


async def _main(numbers: set[int], requests: int, dump: Path | None) -> None:
    with tempfile.TemporaryDirectory(prefix="tablegraph-profile-") as scratch, engine(None, Path(scratch)) as url:
        async with client(url) as dynamodb:
            await data.ensure_table(dynamodb, TABLE, SIZE)
        await _profile(url, numbers, requests, dump)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__)
    parser.add_argument("--operations", default="4,6,7,11", help="operations by number, comma-separated")
    parser.add_argument("--requests", type=int, default=200, help="requests profiled per operation")
    parser.add_argument("--dump", type=Path, default=None, help="a folder to keep each operation's profile in")
    arguments = parser.parse_args()
    if arguments.dump is not None:
        arguments.dump.mkdir(parents=True, exist_ok=True)
    numbers = {int(one) for one in arguments.operations.split(",")}
    asyncio.run(_main(numbers, arguments.requests, arguments.dump))


if __name__ == "__main__":
    main()
