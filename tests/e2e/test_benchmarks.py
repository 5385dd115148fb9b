"""The benchmark suite, run briefly on a tiny table: its systems answer alike, at their plans, and it reports its
targets.

No timing is asserted: only what the report must contain, what reaches DynamoDB, and what the baselines answer.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import pstats
import re
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from benchmarks import chart, data, engine, floor, latency, live, profile, report, servers
from benchmarks.client import Client, HttpError
from benchmarks.latency import LatencyProxy
from benchmarks.operations import OPERATIONS
from benchmarks.run import FLOOR, GATEWAY, PEER, Config, run, workers_name
from gateway.config import Settings
from gateway.design.keys import KeyTemplate
from gateway.dynamo.accounting import Ledger
from tests.support.gateway import Gateway


@pytest.fixture(scope="module")
def bench_table(endpoint: str, dynamodb: Any) -> Iterator[Config]:
    """A benchmark table of the smallest size, loaded as the benchmark loads it; the config that names it."""
    config = Config(sizes=(data.minimum_size(),), endpoint_url=endpoint, table_prefix=f"bench-{uuid.uuid4().hex[:8]}")

    async def load() -> None:
        async with engine.client(endpoint) as client:
            await data.ensure_table(client, config.table(config.sizes[0]), config.sizes[0])

    asyncio.run(load())
    yield config
    dynamodb.delete_table(TableName=config.table(config.sizes[0]))


def _post(url: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"query": query, "variables": variables}).encode()
    headers = {"Content-Type": "application/json", "X-Tablegraph-Accounting": "1"}
    with urllib.request.urlopen(urllib.request.Request(f"{url}/graphql", body, headers), timeout=30) as answer:
        result: dict[str, Any] = json.load(answer)
    return result


def test_peer_answers_every_operation_as_the_gateway_does_at_its_plan(bench_table: Config) -> None:
    """The peer is checked equal to the gateway on every benchmark operation: same data, same global ids. Both
    reach DynamoDB through a proxy that counts their requests: the gateway sends each operation's planned calls, in
    its planned rounds; the peer, reading as GraphQL reaches each level, takes a round more per level on the nested
    ones, and reports the calls it sent."""
    table = bench_table.table(bench_table.sizes[0])
    port = servers.free_port()
    with LatencyProxy(str(bench_table.endpoint_url), delay=0.0) as wire:
        settings = Settings(endpoint_url=wire.url, table=table, cursor_secret="test-secret", auth_open=True)
        with Gateway(settings) as gateway, servers.serve(servers.peer_command(wire.url, table, port), port) as peer:
            peer.wait_until_ready()
            for op in OPERATIONS:
                wire.requests.clear()
                expected = gateway.query(op.query, op.variables)
                assert "errors" not in expected, op.name
                accounted = expected["extensions"]["dynamodb"]
                assert (accounted["calls"], accounted["rounds"]) == (op.calls, op.rounds), op.name
                assert sum(wire.requests.values()) == op.calls, op.name

                wire.requests.clear()
                answer = _post(peer.url, op.query, op.variables)
                assert answer.get("errors") is None, answer
                assert answer["data"] == expected["data"], op.name
                assert answer["extensions"]["dynamodb"]["operations"] == dict(wire.requests), op.name
                if op.nested:
                    assert answer["extensions"]["dynamodb"]["rounds"] > op.rounds, op.name


async def test_floor_makes_each_operations_plan(bench_table: Config) -> None:
    """What the gateway is divided by is the plan itself, made with the stock client."""
    assert {op.number for op in OPERATIONS} == set(floor.PLANS)
    async with engine.client(str(bench_table.endpoint_url)) as client:
        for op in OPERATIONS:
            ledger = Ledger()
            await floor.PLANS[op.number](floor.Floor(client, bench_table.table(bench_table.sizes[0]), ledger))
            assert (len(ledger.calls), ledger.rounds) == (op.calls, op.rounds), op.name


def test_latency_proxy_holds_every_request_for_its_delay_and_forwards_it(
    endpoint: str, bench_table: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each DynamoDB request through the proxy is held once, for the delay, then answered by the engine."""
    held: list[float] = []
    sleep = asyncio.sleep

    async def spy(delay: float) -> None:
        held.append(delay)
        await sleep(delay)

    monkeypatch.setattr(latency, "_hold", spy)
    table = bench_table.table(bench_table.sizes[0])
    with LatencyProxy(endpoint, delay=0.005) as proxy:
        through = boto3.client(
            "dynamodb",
            endpoint_url=proxy.url,
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )
        workspace = {"PK": {"S": f"WS#{data.WS}"}, "SK": {"S": "META"}}
        for _ in range(3):
            assert through.get_item(TableName=table, Key=workspace)["Item"]["displayName"] == {"S": "Probe workspace"}
        found = through.batch_get_item(RequestItems={table: {"Keys": [workspace]}})
        assert len(found["Responses"][table]) == 1
        through.close()
    assert dict(proxy.requests) == {"GetItem": 3, "BatchGetItem": 1}
    assert held == [0.005] * 4


def _rows(markdown: str, header_start: str, after: str = "") -> list[dict[str, str]]:
    """The rows of the first markdown table whose header starts with ``header_start`` (after the line ``after``),
    by column name."""
    lines = markdown.splitlines()
    begin = lines.index(after) if after else 0
    start = next(i for i, line in enumerate(lines) if i > begin and line.startswith(header_start))
    names = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(names, (cell.strip() for cell in line.strip("|").split("|")), strict=True)))
    return rows


def test_benchmark_reports_gateway_peer_and_floor_with_its_targets(bench_table: Config, tmp_path: Path) -> None:
    """A tiny run of every phase: both levels with their ratios, the latency model, the workers, the targets."""
    operations = (2, 3, 10)
    config = Config(
        sizes=bench_table.sizes,
        concurrency=(1, 2),
        duration=0.05,
        warmup=0,
        rounds=1,
        decode="fast",
        operations=operations,
        endpoint_url=bench_table.endpoint_url,
        table_prefix=bench_table.table_prefix,
        latency_ms=5,
        scaling=(1, 2),
        saturation=2,
    )
    results = run(config)
    text = report.markdown(results, machine_line="test machine")
    chosen = [op for op in OPERATIONS if op.number in operations]

    for heading in ("With 1 client: each system's own latency:", "With 2 concurrent clients:"):
        rows = _rows(text, "| # | operation |", after=heading)
        assert [row["#"] for row in rows] == [str(op.number) for op in chosen]
        for op, row in zip(chosen, rows, strict=True):
            assert (row["calls"], row["rounds"]) == (str(op.calls), str(op.rounds)), op.name
            assert row["gateway ÷ floor (p50)"].endswith("x") and row["gateway ÷ peer (p50)"].endswith("x")
    for op in chosen:
        for level in (1, 2):
            gateway, floor_, peer = (results.get(name, op.number, concurrency=level) for name in (GATEWAY, FLOOR, PEER))
            assert gateway and floor_ and peer
            assert (floor_.calls, floor_.rounds) == (op.calls, op.rounds), op.name
            # Each system answered; its CPU figure is reported, not judged (one short run on a shared machine).
            assert gateway.requests > 0 and peer.requests > 0 and floor_.requests > 0

    # Through the latency proxy: every system at 1 client, the gateway still at its plan.
    delayed_heading = "With 5 ms added to each DynamoDB request (benchmarks/latency.py), 1 client:"
    rows = _rows(text, "| # | operation |", after=delayed_heading)
    assert [row["#"] for row in rows] == [str(op.number) for op in chosen]
    for op in chosen:
        for name in (GATEWAY, FLOOR, PEER):
            sample = results.get(name, op.number, concurrency=1, latency_ms=5)
            assert sample is not None and sample.requests > 0, (name, op.name)
        delayed = results.get(GATEWAY, op.number, concurrency=1, latency_ms=5)
        assert delayed is not None and (delayed.calls, delayed.rounds) == (op.calls, op.rounds)

    # The gateway by workers, at saturation.
    rows = _rows(text, "| # | operation |", after="The gateway by worker processes, 2 concurrent clients (saturation):")
    assert [row["#"] for row in rows] == [str(op.number) for op in chosen]
    assert all(float(row[f"req/s, {workers_name(2)}"]) > 0 for row in rows)

    targets = text.split("Targets:\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split(":")[0] for line in targets] == [
        "- gateway ÷ floor ≤ 1.0 on every canonical operation, 1 client",
        "- gateway ÷ floor ≤ 1.0 on every canonical operation, 2 concurrent clients",
        "- gateway ÷ floor ≤ 0.6 on operations of 3 calls or more, 1 client",
        "- gateway ÷ floor ≤ 0.6 on operations of 3 calls or more, 2 concurrent clients",
        "- gateway ÷ peer ≤ 0.5 on nested operations, 1 client",
        "- gateway ÷ peer ≤ 0.5 on nested operations, 2 concurrent clients",
        "- gateway ÷ peer ≤ 0.5 on nested operations, 1 client, 5 ms added to each DynamoDB request",
        "- gateway CPU ÷ floor CPU ≤ 1.0 on every operation, 1 client",
        "- gateway CPU ÷ floor CPU ≤ 1.0 on every operation, 2 concurrent clients",
        "- gateway CPU ÷ floor CPU ≤ 0.6 on operations of 3 calls or more, 1 client",
        "- gateway CPU ÷ floor CPU ≤ 0.6 on operations of 3 calls or more, 2 concurrent clients",
        "- gateway CPU ÷ peer CPU ≤ 0.4 on nested operations, 1 client",
        "- gateway CPU ÷ peer CPU ≤ 0.4 on nested operations, 2 concurrent clients",
        "- variables ÷ literal CPU within 5% on every operation, 1 client",
        "- variables ÷ literal CPU within 5% on every operation, 2 concurrent clients",
        "- CPU per 100-item Query, the DynamoDB client alone",
    ]
    for line in targets[:15]:
        assert re.fullmatch(r"- .+: (met|missed on \d+ of \d+) \((#\d+ \d+\.\d\dx(, )?)+\)(; .+)?\.", line), line
    assert "#2 " in targets[0] and "#3 " in targets[2] and "#10 " in targets[2] and "#10 " in targets[4]
    assert "#2 " in targets[7] and "#3 " in targets[9] and "#10 " in targets[11] and "#2 " in targets[13]
    assert re.search(r"; geometric mean \d+\.\d\dx\.$", targets[13])

    picture = tmp_path / "bench.png"
    chart.save(results, picture, "test")
    assert picture.read_bytes().startswith(b"\x89PNG")


async def test_load_generator_client_reads_kept_alive_answers_and_refuses_what_it_cannot_read() -> None:
    """The driver's own HTTP client: answers in order on one reused connection; no Content-Length is an error."""
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst",
        b"HTTP/1.1 400 Bad Request\r\ncontent-length: 6\r\n\r\nsecond",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ]
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        for answer in answers:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
            assert await reader.readexactly(length) == b"{}"
            writer.write(answer)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    http = Client(f"http://127.0.0.1:{port}")
    try:
        assert await http.post("/graphql", b"{}", {"Content-Type": "application/json"}) == (200, b"first")
        assert await http.post("/graphql", b"{}", {}) == (400, b"second")
        with pytest.raises(HttpError, match="without Content-Length"):
            await http.post("/graphql", b"{}", {})
        assert connections == 1
    finally:
        await http.aclose()
        server.close()
        await server.wait_closed()


async def test_load_generator_client_reconnects_when_the_server_closed_an_idle_connection() -> None:
    """A server's keep-alive timeout closes idle connections while other systems are measured: the request
    goes out again on a new connection."""
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # without Connection: close, as a keep-alive timeout does later

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    http = Client(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
    try:
        assert await http.post("/graphql", b"", {}) == (200, b"ok")
        await asyncio.sleep(0.05)
        assert await http.post("/graphql", b"", {}) == (200, b"ok")
        assert connections == 2
    finally:
        await http.aclose()
        server.close()
        await server.wait_closed()


def test_live_benchmark_reports_shared_and_own_fan_out_with_its_targets(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    live.main(["--endpoint-url", endpoint, "--subscribers", "3", "--events", "2", "--distinct-events", "1", "--quick"])
    printed = capsys.readouterr().out
    assert "Machine: " in printed
    assert "one subscriber, 2 writes one at a time" in printed and "polls each shard every 250 ms" in printed
    figures = r"\| -?[\d.]+ / -?[\d.]+ KiB \| -?\d+ ms \| -?\d+ µs \| \d+ ms \| \d+ ms \|"
    assert re.search(r"^\| 3 \| shared \| 2 " + figures, printed, re.MULTILINE)
    assert re.search(r"^\| 3 \| own document \| 1 " + figures, printed, re.MULTILINE)
    # A workspace each: one round writes a change for each of the 3 subscribers.
    assert re.search(r"^\| 3 \| own workspace \| 3 " + figures, printed, re.MULTILINE)
    assert "target CPU ≤ 100 µs per change per subscriber, shared selections: " in printed
    assert "target memory ≤ 20 KiB per idle subscriber, shared documents (shared, own workspace): " in printed
    assert "permessage-deflate: off (offered by the clients, declined)." in printed
    assert re.search(r"^  - 3 shared: CPU -?[\d.]+, memory -?[\d.]+$", printed, re.MULTILINE)
    assert re.search(r"^  - 3 own workspace: memory -?[\d.]+$", printed, re.MULTILINE)
    assert re.search(r"^  - 3 own document: memory -?[\d.]+ \(a document each: measured", printed, re.MULTILINE)
    bandwidth = re.search(r"one subscriber's 2 events: ([\d,]+) bytes as text, ([\d,]+) bytes with", printed)
    assert bandwidth is not None
    text, deflated = (int(one.replace(",", "")) for one in bandwidth.groups())
    assert 0 < deflated < text  # two events of one selection: the second deflates against the first


def test_live_report_holds_shared_documents_to_the_memory_target_and_says_how_runs_of_their_own_scale() -> None:
    def run(count: int, selections: str, memory: float, cpu: float) -> live.FanOut:
        total = memory * count / 1024
        return live.FanOut(count, selections, 2, memory, total, cpu * count / 1000, cpu, 150, 300, 0, 0, memory + 5)

    runs = [
        run(1000, live.SHARED, 14.0, 50),
        run(1000, live.OWN_DOCUMENT, 40.0, 800),
        run(1000, live.OWN_WORKSPACE, 18.0, 900),
        run(10000, live.SHARED, 14.5, 60),
        run(10000, live.OWN_DOCUMENT, 44.0, 880),
        run(10000, live.OWN_WORKSPACE, 19.0, 1800),
    ]
    printed = live.report([0.15, 0.2], runs)
    # A document each is measured, not held to the target: the most a subscriber of a shared document costs is.
    target = "target memory ≤ 20 KiB per idle subscriber, shared documents (shared, own workspace): met (at most 19.0"
    assert target + " KiB; once each has been served a change, at most 24.0 KiB)" in printed
    linear = "a run each, 10,000 ÷ 1,000 subscribers, per subscriber:"
    assert f"- own document, {linear} memory 1.10, CPU per change 1.10 (1.00: linear)" in printed
    assert f"- own workspace, {linear} memory 1.06, CPU per change 2.00 (1.00: linear)" in printed
    assert "| 10,000 | own workspace | 20,000 | 19.0 / 24.0 KiB |" in printed  # two rounds of a change for each
    over = [run(1000, live.SHARED, 14.0, 50), run(1000, live.OWN_WORKSPACE, 21.0, 900)]
    assert "shared documents (shared, own workspace): missed (at most 21.0 KiB" in live.report([0.1], over)


def test_profile_shares_are_the_gateways_own_with_builtins_given_to_their_callers() -> None:
    """``python -m benchmarks.profile``'s shares: a key template's parsing (its regex's ``fullmatch`` a builtin,
    counted with the keys' part) is most of a profile in which httpx builds URLs, which is left out; the shares
    sum to one."""
    template = KeyTemplate("WS#{workspaceId}#PROJECT#{projectId}", "#")
    keys = [f"WS#w{n}#PROJECT#p{n}" for n in range(2000)]
    urls = [f"http://client/{n}" for n in range(2000)]
    profiler = cProfile.Profile()
    profiler.enable()
    parsed = list(map(template.parse, keys))
    built = list(map(httpx.URL, urls))
    profiler.disable()
    assert parsed[7] == {"workspaceId": "w7", "projectId": "p7"} and len(built) == 2000
    shares = profile.shares(pstats.Stats(profiler))
    assert not any(part.startswith("left out") for part in shares)
    assert abs(sum(shares.values()) - 1) < 1e-9
    assert shares["recognition, keys, values"] > 0.7, shares
    assert profile.part_of(("/x/site-packages/httpx/_urls.py", 1, "__init__")) == "left out: the client"
    assert profile.part_of(("~", 0, "<method 'poll' of 'select.epoll' objects>")) == "left out: idle"
