"""The benchmark suite, run briefly on a tiny table: it reports every canonical operation at its DESIGN.md plan.

No timing is asserted: only what the report must contain and what the baselines must show.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from benchmarks import chart, data, report
from benchmarks.client import Client, HttpError
from benchmarks.operations import OPERATIONS
from benchmarks.run import FLOOR, GATEWAY, NAIVE, Config, Results, run


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


def _brief_run(endpoint: str, dynamodb: Any) -> Results:
    config = Config(
        sizes=(data.minimum_size(),),
        concurrency=(1, 2),
        duration=0.1,
        warmup=0,
        rounds=2,
        decode="fast",
        endpoint_url=endpoint,
        table_prefix=f"bench-{uuid.uuid4().hex[:8]}",
    )
    try:
        return run(config)
    finally:
        dynamodb.delete_table(TableName=config.table(config.sizes[0]))


def test_benchmark_reports_each_canonical_operation_at_its_planned_cost(
    endpoint: str, dynamodb: Any, tmp_path: Path
) -> None:
    results = _brief_run(endpoint, dynamodb)
    text = report.markdown(results, machine_line="test machine")

    # One table per concurrency level, each with every operation at its plan and the ratios of that level.
    for heading in ("With 1 client: each system's own latency:", "With 2 concurrent clients:"):
        rows = _rows(text, "| # | operation |", after=heading)
        assert [row["#"] for row in rows] == [str(op.number) for op in OPERATIONS]
        for op, row in zip(OPERATIONS, rows, strict=True):
            assert (row["calls"], row["rounds"]) == (str(op.calls), str(op.rounds)), op.name
            assert row["gateway ÷ floor (p50)"].endswith("x")
            assert row["N+1 ÷ gateway (p50)"].endswith("x")
    for op in OPERATIONS:
        for level in (1, 2):
            samples = [results.get(system, op.number, concurrency=level) for system in (GATEWAY, FLOOR, NAIVE)]
            gateway, floor, naive = samples
            assert gateway and floor and naive
            assert {sample.concurrency for sample in samples} == {level}
            assert (floor.calls, floor.rounds) == (op.calls, op.rounds), op.name
            if op.nested:
                assert naive.calls > gateway.calls, op.name
            assert gateway.requests > 0 and gateway.cpu_ms > 0

    # The targets, with the figures that meet or miss them.
    assert results.client_cpu is not None
    assert results.client_cpu.stock_ms > 0 and results.client_cpu.gateway_ms > 0
    targets = text.split("Targets:\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split(":")[0] for line in targets] == [
        "- p50 latency within 1.3x of the aioboto3 floor, 1 client",
        "- p50 latency within 1.3x of the aioboto3 floor, 2 concurrent clients",
        "- CPU per 100-item Query below half of the stock aioboto3 client's",
    ]
    assert all(f"of {len(OPERATIONS)} within." in line for line in targets[:2])
    assert targets[2].endswith(("met.", "missed."))

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
