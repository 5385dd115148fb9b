"""The benchmark suite, run briefly on a tiny table: it reports every canonical operation at its DESIGN.md plan.

No timing is asserted: only what the report must contain and what the baselines must show.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from benchmarks import chart, data, report
from benchmarks.operations import OPERATIONS
from benchmarks.run import FLOOR, GATEWAY, NAIVE, Config, Results, run


def _rows(markdown: str, header_start: str) -> list[dict[str, str]]:
    """The rows of the first markdown table whose header starts with ``header_start``, by column name."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
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
        concurrency=2,
        duration=0.1,
        warmup=0,
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

    rows = _rows(text, "| # | operation |")
    assert [row["#"] for row in rows] == [str(op.number) for op in OPERATIONS]
    for op, row in zip(OPERATIONS, rows, strict=True):
        assert (row["calls"], row["rounds"]) == (str(op.calls), str(op.rounds)), op.name
        assert row["gateway ÷ floor (p50)"].endswith("x")
        assert row["N+1 ÷ gateway (p50)"].endswith("x")
    for op in OPERATIONS:
        gateway, floor, naive = (results.get(system, op.number) for system in (GATEWAY, FLOOR, NAIVE))
        assert gateway and floor and naive
        assert (floor.calls, floor.rounds) == (op.calls, op.rounds), op.name
        if op.nested:
            assert naive.calls > gateway.calls, op.name
        assert gateway.requests > 0 and gateway.cpu_ms > 0

    picture = tmp_path / "bench.png"
    chart.save(results, picture, "test")
    assert picture.read_bytes().startswith(b"\x89PNG")
