"""``python -m benchmarks.compiled``: the gateway's CPU per request in one process, compiled and interpreted.

Both applications serve the same table from this process, one request at a time through httpx's ASGI transport,
so what differs between the two figures of an operation is execution alone: the same reads, the same reader, the
same response. The figures include the client's and the DynamoDB client's CPU, which are the same both ways, so
the ratio understates what compilation saves in execution itself.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks import data
from benchmarks.engine import client, engine
from benchmarks.operations import OPERATIONS, Operation
from gateway.config import Settings
from gateway.server.app import create_app

SIZE = 1000
TABLE = "bench-compiled"


async def _cpu(endpoint_url: str, compiled: bool, operations: list[Operation], requests: int) -> dict[int, float]:
    """CPU ms per request of each operation, after as many requests to warm up."""
    settings = Settings(
        endpoint_url=endpoint_url,
        table=TABLE,
        auth_open=True,
        cursor_secret="benchmark",
        log_level="WARNING",
        compiled_execution=compiled,
    )
    app = create_app(settings)
    out = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            for operation in operations:
                body = {"query": operation.query, "variables": operation.variables}
                for _ in range(requests):
                    await http.post("/graphql", json=body)
                start = time.process_time()
                for _ in range(requests):
                    answer = (await http.post("/graphql", json=body)).json()
                    assert "errors" not in answer, answer
                out[operation.number] = (time.process_time() - start) / requests * 1000
    return out


async def _main(requests: int) -> None:
    with tempfile.TemporaryDirectory(prefix="tablegraph-compiled-") as scratch, engine(None, Path(scratch)) as url:
        async with client(url) as dynamodb:
            await data.ensure_table(dynamodb, TABLE, SIZE)
        operations = list(OPERATIONS)
        # Each mode runs first once and second once (A B B A), so neither gains from going second.
        runs = [await _cpu(url, compiled, operations, requests) for compiled in (False, True, True, False)]
    interpreted = _mean(runs[0], runs[3])
    compiled = _mean(runs[1], runs[2])
    print(f"In-process CPU per request, one client, the mean of two runs of {requests} requests each (after as many")
    print("to warm up), the modes taking turns interpreted, compiled, compiled, interpreted:\n")
    print("| # | operation | interpreted ms | compiled ms | compiled ÷ interpreted |")
    print("|---|---|---|---|---|")
    for operation in operations:
        before, after = interpreted[operation.number], compiled[operation.number]
        print(f"| {operation.number} | {operation.name} | {before:.2f} | {after:.2f} | {after / before:.2f}x |")


def _mean(one: dict[int, float], other: dict[int, float]) -> dict[int, float]:
    return {number: (one[number] + other[number]) / 2 for number in one}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compiled", description=__doc__)
    parser.add_argument("--requests", type=int, default=100, help="requests measured per operation and mode")
    asyncio.run(_main(parser.parse_args().requests))


if __name__ == "__main__":
    main()
