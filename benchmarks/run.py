"""The benchmark run: tables ready, servers up, each operation driven for a duration per system, taking turns.

Three phases, on the first table size for all but the first: every system on every size, the same systems
through the latency proxy (``latency_ms``), and the gateway with each number of workers at saturation
(``scaling``).
"""

from __future__ import annotations

import asyncio
import dataclasses
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
from benchmarks.operations import OPERATIONS, PAGE, Operation, twin
from gateway.config import Settings
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.store import Store
from gateway.execution import queries
from gateway.server.app import ACCOUNTING_HEADER
from schema.model import MODEL, ORGANIZATION_USERS

GATEWAY = "gateway"
GATEWAY_STOCK = "gateway (stock decode)"
GATEWAY_TWIN = "gateway (twin)"
"""The gateway sent each operation's twin: with variables where the operation writes its arguments out, and the
other way round."""
FLOOR = "aioboto3 floor"
PEER = "dataloader peer"

DECODES = ("fast", "stock", "both")

BIG_QUERY = 2
"""The operation that is one 100-item Query: the one to compare the clients' CPU on."""

T = TypeVar("T")


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...] = (1_000, 100_000, 1_000_000)
    """Table sizes in items; the baselines run on the first, the gateway on all of them."""
    concurrency: tuple[int, ...] = (1, 4)
    """Concurrent clients, one measurement per level: 1 shows each system's own latency, more show it under load."""
    duration: float = 2.0
    """Seconds each (system, size, operation, level) is measured per round, after ``warmup`` seconds of the same
    load."""
    warmup: float = 0.5
    rounds: int = 3
    """Systems take turns, a round each, so that a slow spell of a shared machine falls on all of them; a sample
    pools the latencies of its rounds."""
    workers: int = 1
    decode: str = "both"
    """``fast`` or ``stock``: how the gateway decodes DynamoDB responses; ``both`` measures the stock one too."""
    baselines: bool = True
    operations: tuple[int, ...] = tuple(op.number for op in OPERATIONS)
    latency_ms: float = 0.0
    """When above 0, the gateway, the peer and the floor are measured again with this delay added to each
    DynamoDB request (``benchmarks.latency``), at 1 client: a model of DynamoDB across a network."""
    scaling: tuple[int, ...] = ()
    """Worker counts the gateway is measured with at ``saturation`` clients, taking turns: requests/s per core."""
    saturation: int = 8
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
    """CPU time of the system's process per request: the gateway's, the peer's, or the floor's client."""
    latency_ms: float = 0.0
    """The delay the latency proxy added to each DynamoDB request; 0 without the proxy."""

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds


@dataclass(frozen=True)
class ClientCpu:
    """CPU ms per call of operation 2's 100-item Query, the two clients taking turns in this process."""

    stock_ms: float
    """aioboto3 as configured by default, then ``TypeDeserializer`` on the items (the floor's client)."""
    gateway_ms: float
    """The gateway's ``Store``: its client settings and its decoding of the response."""
    calls: int


@dataclass
class Results:
    config: Config
    samples: list[Sample] = field(default_factory=list)
    load_seconds: dict[int, float] = field(default_factory=dict)
    client_cpu: ClientCpu | None = None
    """The DynamoDB client's CPU on one 100-item Query: the gateway's store against the stock client."""
    """How long building each table took in this run (tables found complete are not listed)."""

    def get(
        self,
        system: str,
        operation: int,
        size: int | None = None,
        concurrency: int | None = None,
        latency_ms: float = 0.0,
    ) -> Sample | None:
        """A sample; the first table size, the highest concurrency and no added latency unless told."""
        wanted = (
            system,
            operation,
            self.config.sizes[0] if size is None else size,
            self.config.concurrency[-1] if concurrency is None else concurrency,
            latency_ms,
        )
        for sample in self.samples:
            if (sample.system, sample.operation, sample.size, sample.concurrency, sample.latency_ms) == wanted:
                return sample
        return None

    def systems(self) -> list[str]:
        return list(dict.fromkeys(sample.system for sample in self.samples))

    def to_json(self) -> str:
        config = {**self.config.__dict__, "data_dir": str(self.config.data_dir)}
        samples = [{**sample.__dict__, "throughput": sample.throughput} for sample in self.samples]
        clients = self.client_cpu.__dict__ if self.client_cpu else None
        document = {"config": config, "load_seconds": self.load_seconds, "samples": samples, "client_cpu": clients}
        return json.dumps(document, indent=2)


def run(config: Config, progress: Callable[[str], None] = lambda _: None) -> Results:
    """Measure every selected operation: the gateway on each table size, the baselines on the first."""
    if config.decode not in DECODES:
        raise ValueError(f"decode must be one of {DECODES}, not {config.decode!r}")
    if not config.concurrency or min(config.concurrency) < 1:
        raise ValueError(f"concurrency levels must be 1 or more, not {config.concurrency!r}")
    if config.rounds < 1:
        raise ValueError(f"rounds must be 1 or more, not {config.rounds!r}")
    if min(config.scaling, default=1) < 1 or config.saturation < 1 or config.latency_ms < 0:
        raise ValueError("workers and clients must be 1 or more, and the added latency 0 or more")
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
                base = size == config.sizes[0]
                systems = dict(_start_servers(stack, config, endpoint_url, size, base=base))
                for server in systems.values():
                    server.wait_until_ready()
                for operation in operations:
                    samples = _run(_measure(config, endpoint_url, size, operation, systems, floor=base, twins=True))
                    for sample in samples:
                        progress(_line(sample))
                    results.samples += samples
        if config.latency_ms:
            progress(f"with {config.latency_ms:g} ms added to each DynamoDB request")
            results.samples += _latency_model(config, endpoint_url, operations, progress)
        if config.scaling:
            progress(f"the gateway with {', '.join(map(str, config.scaling))} workers, {config.saturation} clients")
            results.samples += _scaling(config, endpoint_url, operations, progress)
        if config.baselines and BIG_QUERY in config.operations:
            results.client_cpu = _run(_client_cpu(endpoint_url, config.table(config.sizes[0]), config))
            progress(
                f"  client CPU per 100-item Query: stock {results.client_cpu.stock_ms:.2f} ms, "
                f"gateway store {results.client_cpu.gateway_ms:.2f} ms"
            )
    return results


async def _client_cpu(endpoint_url: str, table: str, config: Config) -> ClientCpu:
    """Operation 2's Query as the floor sends it with the stock client, and as the gateway's store sends it."""
    request = queries.parent_and_members_query(MODEL, ORGANIZATION_USERS, {"orgName": data.ORG}, queries.Window(PAGE))
    settings = Settings(endpoint_url=endpoint_url, table=table)
    async with engine.client(endpoint_url) as client, Store.open(settings, MODEL) as store:
        stock = _floor_call(OPERATIONS[BIG_QUERY - 1], client, table)

        async def gateway() -> None:
            await store.query(request, Ledger())

        parts: dict[Callable[[], Awaitable[None]], list[_Part]] = {stock: [], gateway: []}
        # Taking turns, so a slow spell of the machine falls on both.
        for _ in range(config.rounds):
            for call, measured in parts.items():
                measured.append(await _measured(call, time.process_time, 1, 0, config.duration / 2))
    stock_ms, gateway_ms = (_cpu_ms(parts[call]) for call in (stock, gateway))
    return ClientCpu(
        stock_ms=stock_ms,
        gateway_ms=gateway_ms,
        calls=sum(len(part.latencies) for measured in parts.values() for part in measured),
    )


def _run(work: Coroutine[Any, Any, T]) -> T:
    """Run on the event loop the gateway serves on (uvloop where installed), so the floor and the driver pay
    what an application on that loop would."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(work)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(work)


def _latency_model(
    config: Config, endpoint_url: str, operations: list[Operation], progress: Callable[[str], None]
) -> list[Sample]:
    """The gateway, the peer and the floor on the first table, each DynamoDB request through the latency proxy."""
    size, port = config.sizes[0], servers.free_port()
    command = servers.latency_command(endpoint_url, config.latency_ms, port)
    decode = "fast" if config.decode == "both" else config.decode
    measured = dataclasses.replace(config, concurrency=(1,), decode=decode)
    samples = []
    with ExitStack() as stack:
        proxy = stack.enter_context(servers.serve(command, port))
        proxy.wait_until_listening()
        systems = dict(_start_servers(stack, measured, proxy.url, size, base=True))
        for server in systems.values():
            server.wait_until_ready()
        for operation in operations:
            found = _run(_measure(measured, proxy.url, size, operation, systems, floor=True))
            for sample in found:
                sample = dataclasses.replace(sample, latency_ms=config.latency_ms)
                progress(_line(sample))
                samples.append(sample)
    return samples


def workers_name(workers: int) -> str:
    """The gateway's name in the scaling phase."""
    return f"{GATEWAY}, {workers} worker{'s' if workers > 1 else ''}"


def _scaling(
    config: Config, endpoint_url: str, operations: list[Operation], progress: Callable[[str], None]
) -> list[Sample]:
    """The gateway with each worker count at saturation, on the first table, the counts taking turns."""
    measured = dataclasses.replace(config, concurrency=(config.saturation,), baselines=False, decode="fast")
    samples = []
    with ExitStack() as stack:
        systems = {}
        for workers in config.scaling:
            one = dataclasses.replace(measured, workers=workers)
            ((_, server),) = _start_servers(stack, one, endpoint_url, config.sizes[0], base=False)
            systems[workers_name(workers)] = server
        for server in systems.values():
            server.wait_until_ready()
        for operation in operations:
            found = _run(_measure(measured, endpoint_url, config.sizes[0], operation, systems, floor=False))
            for sample in found:
                progress(_line(sample))
            samples += found
    return samples


def _line(sample: Sample) -> str:
    added = f" +{sample.latency_ms:g} ms" if sample.latency_ms else ""
    return (
        f"  {sample.size:>9,} #{sample.operation:<2} {sample.system + added:<24} x{sample.concurrency:<3} "
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
        yield PEER, stack.enter_context(servers.serve(servers.peer_command(endpoint_url, table, port), port))


def _check_same_answers(operation: Operation, answers: dict[str, Any]) -> None:
    """A baseline that answers differently would not be a baseline for the same work."""
    (first, expected), *others = answers.items()
    for system, answer in others:
        if answer != expected:
            raise RuntimeError(f"{system} answers operation #{operation.number} differently from {first}")


@dataclass(frozen=True)
class _Part:
    """One round of one system under load."""

    latencies: list[float]
    seconds: float
    cpu: float


class _Served:
    """A server under test: asked the operation over HTTP; its process's CPU time is its cost."""

    def __init__(self, name: str, server: servers.Server, operation: Operation) -> None:
        self.name, self.calls, self.rounds = name, 0, 0
        self._server, self._operation = server, operation
        self._http = Client(server.url)
        self._body = json.dumps({"query": operation.query, "variables": operation.variables}).encode()
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}

    async def prepare(self) -> Any:
        """The answer's data, with the calls and rounds it took from the accounting extension."""
        status, content = await self._http.post("/graphql", self._body, {**self._headers, ACCOUNTING_HEADER: "1"})
        answer = self._answer(status, content)
        accounted = answer["extensions"]["dynamodb"]
        self.calls, self.rounds = accounted["calls"], accounted["rounds"]
        return answer["data"]

    async def measure(self, concurrency: int, config: Config) -> _Part:
        return await _measured(self._call, self._server.cpu_seconds, concurrency, config.warmup, config.duration)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self) -> None:
        status, content = await self._http.post("/graphql", self._body, self._headers)
        # A cheap check: decoding every JSON answer would load the driver, which shares the machine.
        if status != 200 or b'"errors"' in content:
            self._answer(status, content)

    def _answer(self, status: int, content: bytes) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(content) if status == 200 else {}
        if status != 200 or answer.get("errors") or not answer.get("data"):
            text = content.decode(errors="replace")
            raise RuntimeError(f"{self.name} failed operation #{self._operation.number}: {status} {text}")
        return answer


class _Floor:
    """The operation's plan made with aioboto3 in this process, alone while it is measured: this process's CPU
    time is the client's."""

    name = FLOOR

    def __init__(self, client: Any, table: str, operation: Operation) -> None:
        self.calls, self.rounds = 0, 0
        self._call = _floor_call(operation, client, table)
        self._plan, self._client, self._table = floor.PLANS[operation.number], client, table

    async def prepare(self) -> Any:
        ledger = Ledger()
        await self._plan(floor.Floor(self._client, self._table, ledger))
        self.calls, self.rounds = len(ledger.calls), ledger.rounds
        return None

    async def measure(self, concurrency: int, config: Config) -> _Part:
        return await _measured(self._call, time.process_time, concurrency, config.warmup, config.duration)

    async def aclose(self) -> None:
        pass


async def _measure(
    config: Config,
    endpoint_url: str,
    size: int,
    operation: Operation,
    systems: dict[str, servers.Server],
    *,
    floor: bool,
    twins: bool = False,
) -> list[Sample]:
    """Every system on one operation, at each concurrency level, taking turns round after round; with ``twins``,
    the gateway on the operation's twin as well."""
    async with engine.client(endpoint_url) as client:
        contenders: list[_Served | _Floor] = [_Served(name, server, operation) for name, server in systems.items()]
        if twins and GATEWAY in systems:
            contenders.insert(1, _Served(GATEWAY_TWIN, systems[GATEWAY], twin(operation)))
        if floor and config.baselines:
            contenders.append(_Floor(client, config.table(size), operation))
        try:
            answers = {one.name: await one.prepare() for one in contenders}
            _check_same_answers(operation, {name: data for name, data in answers.items() if name != FLOOR})
            samples = []
            for level in config.concurrency:
                parts: dict[str, list[_Part]] = {one.name: [] for one in contenders}
                for round_ in range(config.rounds):
                    # Each round starts with another system, so none is always measured first.
                    turn = round_ % len(contenders)
                    for one in contenders[turn:] + contenders[:turn]:
                        parts[one.name].append(await one.measure(level, config))
                samples += [_sample(one, size, operation, level, parts[one.name]) for one in contenders]
            return samples
        finally:
            for one in contenders:
                await one.aclose()


async def _warm_engine(endpoint_url: str, table: str, operations: list[Operation], config: Config) -> None:
    async with engine.client(endpoint_url) as client:
        for operation in operations:
            await _drive(_floor_call(operation, client, table), max(config.concurrency), config.warmup)


def _floor_call(operation: Operation, client: Any, table: str) -> Callable[[], Awaitable[None]]:
    plan = floor.PLANS[operation.number]

    async def call() -> None:
        await plan(floor.Floor(client, table, Ledger()))

    return call


async def _measured(
    call: Callable[[], Awaitable[None]],
    cpu_seconds: Callable[[], float],
    concurrency: int,
    warmup: float,
    duration: float,
) -> _Part:
    """``call`` under load after a warm-up, with the CPU time ``cpu_seconds`` counts while it is measured."""
    await _drive(call, concurrency, warmup)
    cpu = cpu_seconds()
    latencies, seconds = await _drive(call, concurrency, duration)
    return _Part(latencies, seconds, cpu_seconds() - cpu)


def _cpu_ms(parts: list[_Part]) -> float:
    return sum(part.cpu for part in parts) / sum(len(part.latencies) for part in parts) * 1e3


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
    contender: _Served | _Floor, size: int, operation: Operation, concurrency: int, parts: list[_Part]
) -> Sample:
    ordered = sorted(latency for part in parts for latency in part.latencies)
    return Sample(
        system=contender.name,
        size=size,
        operation=operation.number,
        concurrency=concurrency,
        calls=contender.calls,
        rounds=contender.rounds,
        requests=len(ordered),
        seconds=sum(part.seconds for part in parts),
        p50_ms=_percentile(ordered, 50) * 1e3,
        p99_ms=_percentile(ordered, 99) * 1e3,
        cpu_ms=_cpu_ms(parts),
    )


def _percentile(ordered: list[float], percent: int) -> float:
    if len(ordered) < 2:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[percent - 1]
