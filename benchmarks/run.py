"""The benchmark run: tables ready, servers up, each canonical operation driven for a duration per system."""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from benchmarks import data, engine, floor, servers
from benchmarks.client import Client
from benchmarks.operations import OPERATIONS, Operation
from gateway.accounting import Ledger
from gateway.app import ACCOUNTING_HEADER

GATEWAY = "gateway"
GATEWAY_STOCK = "gateway (stock decode)"
FLOOR = "aioboto3 floor"
NAIVE = "N+1 strawberry"

DECODES = ("fast", "stock", "both")

T = TypeVar("T")


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...] = (1_000, 100_000, 1_000_000)
    """Table sizes in items; the baselines run on the first, the gateway on all of them."""
    concurrency: tuple[int, ...] = (1, 4)
    """Concurrent clients, one measurement per level: 1 shows each system's own latency, more show it under load."""
    duration: float = 5.0
    """Seconds each (system, size, operation) is measured, after ``warmup`` seconds of the same load."""
    warmup: float = 1.0
    workers: int = 1
    decode: str = "both"
    """``fast`` or ``stock``: how the gateway decodes DynamoDB responses; ``both`` measures the stock one too."""
    baselines: bool = True
    operations: tuple[int, ...] = tuple(op.number for op in OPERATIONS)
    endpoint_url: str | None = None
    """A DynamoDB to use; by default the benchmark runs its own DynamoDB Local with tables under ``data_dir``."""
    data_dir: Path = engine.DATA_DIR
    table_prefix: str = "bench"

    def table(self, size: int) -> str:
        return f"{self.table_prefix}-{size}"


@dataclass(frozen=True)
class Sample:
    """One system answering one operation on one table size, under load."""

    system: str
    size: int
    operation: int
    concurrency: int
    calls: int
    rounds: int
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    cpu_ms: float
    """CPU time of the system's process per request: the gateway's, the N+1 server's, or the floor's client."""

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds


@dataclass
class Results:
    config: Config
    samples: list[Sample] = field(default_factory=list)
    load_seconds: dict[int, float] = field(default_factory=dict)
    """How long building each table took in this run (tables found complete are not listed)."""

    def get(
        self, system: str, operation: int, size: int | None = None, concurrency: int | None = None
    ) -> Sample | None:
        """A sample; the first table size and the highest concurrency unless told."""
        wanted = (
            system,
            operation,
            self.config.sizes[0] if size is None else size,
            self.config.concurrency[-1] if concurrency is None else concurrency,
        )
        for sample in self.samples:
            if (sample.system, sample.operation, sample.size, sample.concurrency) == wanted:
                return sample
        return None

    def systems(self) -> list[str]:
        return list(dict.fromkeys(sample.system for sample in self.samples))

    def to_json(self) -> str:
        config = {**self.config.__dict__, "data_dir": str(self.config.data_dir)}
        samples = [{**sample.__dict__, "throughput": sample.throughput} for sample in self.samples]
        return json.dumps({"config": config, "load_seconds": self.load_seconds, "samples": samples}, indent=2)


def run(config: Config, progress: Callable[[str], None] = lambda _: None) -> Results:
    """Measure every selected operation: the gateway on each table size, the baselines on the first."""
    if config.decode not in DECODES:
        raise ValueError(f"decode must be one of {DECODES}, not {config.decode!r}")
    if not config.concurrency or min(config.concurrency) < 1:
        raise ValueError(f"concurrency levels must be 1 or more, not {config.concurrency!r}")
    results = Results(config)
    operations = [op for op in OPERATIONS if op.number in config.operations]
    with engine.engine(config.endpoint_url, config.data_dir) as endpoint_url:
        for size in config.sizes:
            progress(f"table of {size:,} items")
            loaded = _run(_ensure_table(endpoint_url, config.table(size), size))
            if loaded is not None:
                progress(f"  built in {loaded:.1f} s")
                results.load_seconds[size] = loaded
        # A fresh engine runs cold (its JIT, its caches): the first system measured would pay for that.
        _run(_warm_engine(endpoint_url, config.table(config.sizes[0]), operations, config))
        for size in config.sizes:
            with ExitStack() as stack:
                systems = dict(_start_servers(stack, config, endpoint_url, size, base=size == config.sizes[0]))
                for server in systems.values():
                    server.wait_until_ready()
                for operation in operations:
                    for level in config.concurrency:
                        answers: dict[str, Any] = {}
                        for system, target in systems.items():
                            sample, answers[system] = _run(_measure(system, target, operation, size, level, config))
                            progress(_line(sample))
                            results.samples.append(sample)
                        _check_same_answers(operation, answers)
                if config.baselines and size == config.sizes[0]:
                    for operation in operations:
                        for level in config.concurrency:
                            table = config.table(size)
                            sample = _run(_measure_floor(operation, endpoint_url, table, size, level, config))
                            progress(_line(sample))
                            results.samples.append(sample)
    return results


def _run(work: Coroutine[Any, Any, T]) -> T:
    """Run on the event loop the gateway serves on (uvloop where installed), so the floor and the driver pay
    what an application on that loop would."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(work)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(work)


def _line(sample: Sample) -> str:
    return (
        f"  {sample.size:>9,} #{sample.operation} {sample.system:<24} x{sample.concurrency:<3} "
        f"p50 {sample.p50_ms:7.2f} ms  {sample.throughput:7.1f}/s  CPU {sample.cpu_ms:6.2f} ms"
    )


async def _ensure_table(endpoint_url: str, table: str, size: int) -> float | None:
    async with engine.client(endpoint_url) as client:
        return await data.ensure_table(client, table, size)


def _start_servers(
    stack: ExitStack, config: Config, endpoint_url: str, size: int, *, base: bool
) -> Iterator[tuple[str, servers.Server]]:
    table = config.table(size)
    decodes = [(GATEWAY, config.decode != "stock")]
    if config.decode == "both" and base:
        decodes.append((GATEWAY_STOCK, False))
    for name, fast in decodes:
        port = servers.free_port()
        env = {
            "TABLEGRAPH_FAST_DECODE": "1" if fast else "0",
            "TABLEGRAPH_CURSOR_SECRET": "benchmark",
            "TABLEGRAPH_LOG_LEVEL": "WARNING",
            # Measured without authentication: the figures are about reading, and a bearer check is per request.
            "TABLEGRAPH_AUTH_OPEN": "1",
        }
        command = servers.gateway_command(endpoint_url, table, port, config.workers)
        yield name, stack.enter_context(servers.serve(command, port, env))
    if config.baselines and base:
        port = servers.free_port()
        yield NAIVE, stack.enter_context(servers.serve(servers.naive_command(endpoint_url, table, port), port))


def _check_same_answers(operation: Operation, answers: dict[str, Any]) -> None:
    """A baseline that answers differently would not be a baseline for the same work."""
    expected = answers[GATEWAY]
    for system, answer in answers.items():
        if answer != expected:
            raise RuntimeError(f"{system} answers operation #{operation.number} differently from the gateway")


async def _measure(
    system: str, server: servers.Server, operation: Operation, size: int, concurrency: int, config: Config
) -> tuple[Sample, Any]:
    body = json.dumps({"query": operation.query, "variables": operation.variables}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    http = Client(server.url)
    try:
        answer = _answer(system, operation, *await http.post("/graphql", body, {**headers, ACCOUNTING_HEADER: "1"}))
        accounted = answer["extensions"]["dynamodb"]

        async def call() -> None:
            status, content = await http.post("/graphql", body, headers)
            # A cheap check: decoding every JSON answer would load the driver, which shares the machine.
            if status != 200 or b'"errors"' in content:
                _answer(system, operation, status, content)

        await _drive(call, concurrency, config.warmup)
        cpu = server.cpu_seconds()
        latencies, seconds = await _drive(call, concurrency, config.duration)
        cpu = server.cpu_seconds() - cpu
    finally:
        await http.aclose()
    calls, rounds = accounted["calls"], accounted["rounds"]
    sample = _sample(system, size, operation, concurrency, calls, rounds, latencies, seconds, cpu)
    return sample, answer["data"]


def _answer(system: str, operation: Operation, status: int, content: bytes) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(content) if status == 200 else {}
    if status != 200 or answer.get("errors") or not answer.get("data"):
        text = content.decode(errors="replace")
        raise RuntimeError(f"{system} failed operation #{operation.number}: {status} {text}")
    return answer


async def _warm_engine(endpoint_url: str, table: str, operations: list[Operation], config: Config) -> None:
    async with engine.client(endpoint_url) as client:
        for operation in operations:
            await _drive(_floor_call(operation, client, table), max(config.concurrency), config.warmup)


def _floor_call(operation: Operation, client: Any, table: str) -> Callable[[], Awaitable[None]]:
    plan = floor.PLANS[operation.number]

    async def call() -> None:
        await plan(floor.Floor(client, table, Ledger()))

    return call


async def _measure_floor(
    operation: Operation, endpoint_url: str, table: str, size: int, concurrency: int, config: Config
) -> Sample:
    plan = floor.PLANS[operation.number]
    async with engine.client(endpoint_url) as client:
        ledger = Ledger()
        await plan(floor.Floor(client, table, ledger))
        call = _floor_call(operation, client, table)
        await _drive(call, concurrency, config.warmup)
        # The floor runs in this process, alone while it is measured: this process's CPU time is the client's.
        cpu = time.process_time()
        latencies, seconds = await _drive(call, concurrency, config.duration)
        cpu = time.process_time() - cpu
    return _sample(FLOOR, size, operation, concurrency, len(ledger.calls), ledger.rounds, latencies, seconds, cpu)


async def _drive(call: Callable[[], Awaitable[None]], concurrency: int, duration: float) -> tuple[list[float], float]:
    """``concurrency`` callers, each calling again as soon as its call returns, until ``duration`` is up."""
    latencies: list[float] = []
    started = time.perf_counter()
    deadline = started + duration

    async def caller() -> None:
        while time.perf_counter() < deadline:
            begun = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - begun)

    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return latencies, time.perf_counter() - started


def _sample(
    system: str,
    size: int,
    operation: Operation,
    concurrency: int,
    calls: int,
    rounds: int,
    latencies: list[float],
    seconds: float,
    cpu: float,
) -> Sample:
    ordered = sorted(latencies)
    return Sample(
        system=system,
        size=size,
        operation=operation.number,
        concurrency=concurrency,
        calls=calls,
        rounds=rounds,
        requests=len(ordered),
        seconds=seconds,
        p50_ms=_percentile(ordered, 50) * 1e3,
        p99_ms=_percentile(ordered, 99) * 1e3,
        cpu_ms=cpu / len(ordered) * 1e3,
    )


def _percentile(ordered: list[float], percent: int) -> float:
    if len(ordered) < 2:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[percent - 1]
