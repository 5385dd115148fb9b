"""The results as markdown: the gateway per operation with its ratios to the baselines, then the details."""

from __future__ import annotations

import functools
import math
import os
import platform
import re
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

from benchmarks.operations import OPERATIONS, Operation
from benchmarks.run import BIG_QUERY, FLOOR, GATEWAY, GATEWAY_STOCK, GATEWAY_TWIN, PEER, Results, Sample, workers_name

FLOOR_TARGET = 1.0
"""The gateway's p50 latency should be at most the aioboto3 floor's on every canonical operation..."""
MANY_CALLS = 3
FLOOR_TARGET_MANY_CALLS = 0.6
"""... and at most this fraction of it on operations of ``MANY_CALLS`` calls or more."""
PEER_TARGET = 0.5
"""The gateway's p50 latency should be at most half the DataLoader peer's on nested operations."""
CPU_FLOOR_TARGET = 1.0
"""Compiled execution: the gateway's CPU per request at most the floor's on every operation..."""
CPU_FLOOR_TARGET_MANY_CALLS = 0.6
"""... and at most this fraction of it on operations of ``MANY_CALLS`` calls or more..."""
CPU_PEER_TARGET = 0.4
"""... at most this fraction of the DataLoader peer's on nested operations..."""
VARIABLES_TARGET = 0.05
"""... and each operation sent with variables within this share of its literal twin's."""


def machine() -> str:
    """What the figures were measured on, in one line."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.MULTILINE)
        cpu = found.group(1).strip() if found else cpu
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, {_java()}"
    )


def _java() -> str:
    try:
        result = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "no Java"
    found = re.search(r'version "([^"]+)"', result.stderr + result.stdout)
    return f"Java {found.group(1)}" if found else "Java"


def _times(top: float, bottom: float) -> str:
    """``top`` ÷ ``bottom`` as a ratio; "n/a" when the sampler saw no CPU for ``bottom`` (a run too short)."""
    return f"{top / bottom:.2f}x" if bottom > 0 else "n/a"


def markdown(results: Results, machine_line: str | None = None) -> str:
    config = results.config
    operations = [op for op in OPERATIONS if op.number in config.operations]
    sizes = ", ".join(f"{size:,}" for size in config.sizes)
    levels = " and ".join(str(level) for level in config.concurrency)
    lines = [
        f"Machine: {machine_line or machine()}.",
        f"Load: {levels} concurrent clients; the systems take turns on each operation, {config.rounds} round(s) "
        f"of {config.duration:g} s each after {config.warmup:g} s of warm-up; gateway with {config.workers} "
        f"worker(s), {config.decode} decode; tables of {sizes} items.",
    ]
    for level in config.concurrency:
        own = ": each system's own latency" if level == 1 else ""
        lines += ["", f"With {clients(level)}{own}:", "", _gateway_table(results, operations, level)]
    twins = _twin_table(results, operations)
    if twins:
        lines += ["", "Each operation sent with variables ÷ the same operation written out (its twin):", "", twins]
    if config.baselines:
        lines += ["", "Every system (the peer's rounds are waves of calls):", "", _baseline_table(results, operations)]
    if len(config.sizes) > 1:
        lines += ["", _size_table(results, operations)]
    if config.latency_ms:
        lines += [
            "",
            f"With {config.latency_ms:g} ms added to each DynamoDB request (benchmarks/latency.py), 1 client:",
            "",
            _latency_table(results, operations),
        ]
    if config.scaling:
        lines += [
            "",
            f"The gateway by worker processes, {clients(config.saturation)} (saturation):",
            "",
            _scaling_table(results, operations),
        ]
    targets = _targets(results, operations)
    if targets:
        lines += ["", "Targets:", "", *targets]
    summary = _cpu_summary(results)
    if summary:
        lines += ["", summary]
    if results.load_seconds:
        built = ", ".join(f"{size:,} items in {seconds:.0f} s" for size, seconds in results.load_seconds.items())
        lines += ["", f"Tables built in this run: {built}."]
    return "\n".join(lines) + "\n"


def _gateway_table(results: Results, operations: list[Operation], level: int) -> str:
    config = results.config
    smallest, largest = config.sizes[0], config.sizes[-1]
    header = ["#", "operation", "calls", "rounds", "p50 ms", "p99 ms", "req/s", "CPU ms/req"]
    if config.baselines:
        header += ["gateway ÷ floor (p50)", "gateway ÷ peer (p50)", "CPU ms/req floor", "CPU ms/req peer"]
    if len(config.sizes) > 1:
        header += [f"{_short(largest)} ÷ {_short(smallest)} items (p50)"]
    rows = []
    for op in operations:
        sample = results.get(GATEWAY, op.number, concurrency=level)
        if sample is None:
            continue
        row = [
            str(op.number),
            op.name,
            str(sample.calls),
            str(sample.rounds),
            _ms(sample.p50_ms),
            _ms(sample.p99_ms),
            f"{sample.throughput:.0f}",
            f"{sample.cpu_ms:.2f}",
        ]
        if config.baselines:
            floor, peer = (results.get(system, op.number, concurrency=level) for system in (FLOOR, PEER))
            row += [
                _ratio(sample, floor),
                _ratio(sample, peer),
                f"{floor.cpu_ms:.2f}" if floor else "",
                f"{peer.cpu_ms:.2f}" if peer else "",
            ]
        if len(config.sizes) > 1:
            row += [_ratio(results.get(GATEWAY, op.number, largest, level), sample)]
        rows.append(row)
    return _table(header, rows)


def _twin_table(results: Results, operations: list[Operation]) -> str:
    """The gateway's CPU and p50 on each operation with variables over its literal twin, at each level."""
    header = ["#", "operation"]
    for level in results.config.concurrency:
        header += [f"CPU ms/req literal, variables (x{level})", f"variables ÷ literal CPU (x{level})"]
        header += [f"variables ÷ literal p50 (x{level})"]
    rows = []
    size = results.config.sizes[0]
    for op in operations:
        row = [str(op.number), op.name]
        for level in results.config.concurrency:
            sent, other = (results.get(system, op.number, size, level) for system in (GATEWAY, GATEWAY_TWIN))
            if sent is None or other is None:
                row += ["", "", ""]
                continue
            variables, literal = (sent, other) if op.variables else (other, sent)
            row += [
                f"{literal.cpu_ms:.2f}, {variables.cpu_ms:.2f}",
                _times(variables.cpu_ms, literal.cpu_ms),
                _ratio(variables, literal),
            ]
        rows.append(row)
    return _table(header, rows) if any(any(row[2:]) for row in rows) else ""


def _baseline_table(results: Results, operations: list[Operation]) -> str:
    header = ["#", "system", "clients", "calls", "rounds", "p50 ms", "p99 ms", "req/s", "CPU ms/req"]
    rows = []
    for op in operations:
        for system in (GATEWAY, GATEWAY_STOCK, FLOOR, PEER):
            for level in results.config.concurrency:
                sample = results.get(system, op.number, concurrency=level)
                if sample is None:
                    continue
                rows.append(
                    [
                        str(op.number),
                        system,
                        str(level),
                        str(sample.calls),
                        str(sample.rounds),
                        _ms(sample.p50_ms),
                        _ms(sample.p99_ms),
                        f"{sample.throughput:.0f}",
                        f"{sample.cpu_ms:.2f}",
                    ]
                )
    return _table(header, rows)


def _size_table(results: Results, operations: list[Operation]) -> str:
    sizes = results.config.sizes
    header = ["#", "clients", *(f"p50 ms, {_short(size)} items" for size in sizes)]
    rows = []
    for op in operations:
        for level in results.config.concurrency:
            found = [results.get(GATEWAY, op.number, size, level) for size in sizes]
            rows.append([str(op.number), str(level), *(_ms(sample.p50_ms) if sample else "" for sample in found)])
    return _table(header, rows)


def _latency_table(results: Results, operations: list[Operation]) -> str:
    added = results.config.latency_ms
    header = ["#", "operation", "rounds: gateway, peer", "p50 ms floor", "p50 ms gateway", "p50 ms peer"]
    header += ["gateway ÷ floor", "gateway ÷ peer"]
    rows = []
    for op in operations:
        floor, gateway, peer = (results.get(name, op.number, concurrency=1, latency_ms=added) for name in SYSTEMS)
        if gateway is None:
            continue
        rows.append(
            [
                str(op.number),
                op.name,
                f"{gateway.rounds}, {peer.rounds}" if peer else str(gateway.rounds),
                _ms(floor.p50_ms) if floor else "",
                _ms(gateway.p50_ms),
                _ms(peer.p50_ms) if peer else "",
                _ratio(gateway, floor),
                _ratio(gateway, peer),
            ]
        )
    return _table(header, rows)


def _scaling_table(results: Results, operations: list[Operation]) -> str:
    config = results.config
    counts = config.scaling
    header = ["#", "operation", *(f"req/s, {workers_name(n)}" for n in counts)]
    header += [f"CPU ms/req, {workers_name(counts[0])}", f"{counts[-1]} ÷ {counts[0]} workers"]
    rows = []
    for op in operations:
        found = [results.get(workers_name(n), op.number, concurrency=config.saturation) for n in counts]
        if not all(found):
            continue
        samples = [sample for sample in found if sample is not None]
        rows.append(
            [
                str(op.number),
                op.name,
                *(f"{sample.throughput:.0f}" for sample in samples),
                f"{samples[0].cpu_ms:.2f}",
                f"{samples[-1].throughput / samples[0].throughput:.2f}x",
            ]
        )
    return _table(header, rows)


SYSTEMS = (FLOOR, GATEWAY, PEER)


def clients(level: int) -> str:
    return "1 client" if level == 1 else f"{level} concurrent clients"


def _targets(results: Results, operations: list[Operation]) -> list[str]:
    """Each target of the benchmark at each level, met or missed, with the ratio measured on each operation: the
    latency targets (p50), then compiled execution's (CPU per request), then variables against literals."""
    goals = [
        (f"gateway ÷ floor ≤ {FLOOR_TARGET} on every canonical operation", FLOOR, FLOOR_TARGET, _canonical, _p50),
        (
            f"gateway ÷ floor ≤ {FLOOR_TARGET_MANY_CALLS} on operations of {MANY_CALLS} calls or more",
            FLOOR,
            FLOOR_TARGET_MANY_CALLS,
            _many_calls,
            _p50,
        ),
        (f"gateway ÷ peer ≤ {PEER_TARGET} on nested operations", PEER, PEER_TARGET, _nested, _p50),
        (f"gateway CPU ÷ floor CPU ≤ {CPU_FLOOR_TARGET} on every operation", FLOOR, CPU_FLOOR_TARGET, _every, _cpu),
        (
            f"gateway CPU ÷ floor CPU ≤ {CPU_FLOOR_TARGET_MANY_CALLS} on operations of {MANY_CALLS} calls or more",
            FLOOR,
            CPU_FLOOR_TARGET_MANY_CALLS,
            _many_calls,
            _cpu,
        ),
        (f"gateway CPU ÷ peer CPU ≤ {CPU_PEER_TARGET} on nested operations", PEER, CPU_PEER_TARGET, _nested, _cpu),
    ]
    added = results.config.latency_ms
    # The latency goal against the peer again under the latency model, where rounds weigh most.
    measured = [(level, 0.0) for level in results.config.concurrency] + ([(1, added)] if added else [])
    lines = []
    for goal, baseline, target, chosen, measure in goals:
        for level, latency_ms in measured:
            if latency_ms and (baseline != PEER or measure is not _p50):
                continue
            ratios = {}
            for op in filter(chosen, operations):
                gateway, other = (
                    results.get(system, op.number, concurrency=level, latency_ms=latency_ms)
                    for system in (GATEWAY, baseline)
                )
                if gateway is not None and other is not None and measure(other) > 0:
                    ratios[op.number] = measure(gateway) / measure(other)
            if ratios:
                where = f", {latency_ms:g} ms added to each DynamoDB request" if latency_ms else ""
                holds = functools.partial(_within, target)
                lines.append(_verdict(f"{goal}, {clients(level)}{where}", ratios, holds))
    lines += _variables_targets(results, operations)
    cpu = results.client_cpu
    if cpu is not None:
        lines.append(
            f"- CPU per 100-item Query, the DynamoDB client alone: the gateway's store {cpu.gateway_ms:.2f} ms, "
            f"the stock client with TypeDeserializer {cpu.stock_ms:.2f} ms ({cpu.gateway_ms / cpu.stock_ms:.2f}x)."
        )
    return lines


def _p50(sample: Sample) -> float:
    return sample.p50_ms


def _cpu(sample: Sample) -> float:
    return sample.cpu_ms


def _variables_targets(results: Results, operations: list[Operation]) -> list[str]:
    """Each operation sent with variables within ``VARIABLES_TARGET`` of its literal twin's CPU, at each level."""
    lines = []
    for level in results.config.concurrency:
        ratios = {}
        for op in operations:
            sent, twin = (results.get(system, op.number, concurrency=level) for system in (GATEWAY, GATEWAY_TWIN))
            if sent is not None and twin is not None:
                variables, literal = (sent, twin) if op.variables else (twin, sent)
                if literal.cpu_ms > 0:
                    ratios[op.number] = variables.cpu_ms / literal.cpu_ms
        if ratios:
            mean = (
                math.exp(statistics.fmean(math.log(ratio) for ratio in ratios.values())) if all(ratios.values()) else 0
            )
            goal = f"variables ÷ literal CPU within {VARIABLES_TARGET:.0%} on every operation, {clients(level)}"
            line = _verdict(goal, ratios, lambda ratio: abs(ratio - 1) <= VARIABLES_TARGET)
            lines.append(f"{line[:-1]}; geometric mean {mean:.2f}x.")
    return lines


def _verdict(goal: str, ratios: dict[int, float], holds: Callable[[float], bool]) -> str:
    missed = sum(not holds(ratio) for ratio in ratios.values())
    verdict = "met" if not missed else f"missed on {missed} of {len(ratios)}"
    figures = ", ".join(f"#{number} {ratio:.2f}x" for number, ratio in ratios.items())
    return f"- {goal}: {verdict} ({figures})."


def _within(most: float, ratio: float) -> bool:
    return ratio <= most


def _every(op: Operation) -> bool:
    return True


def _canonical(op: Operation) -> bool:
    return op.canonical


def _many_calls(op: Operation) -> bool:
    return op.calls >= MANY_CALLS


def _nested(op: Operation) -> bool:
    return op.nested


def _cpu_summary(results: Results) -> str:
    gateway, stock, client = (results.get(system, BIG_QUERY) for system in (GATEWAY, GATEWAY_STOCK, FLOOR))
    if gateway is None or client is None:
        return ""
    parts = [f"gateway {gateway.cpu_ms:.2f} ms"]
    if stock is not None:
        parts.append(f"gateway with stock decoding {stock.cpu_ms:.2f} ms")
    parts.append(
        f"stock aioboto3 client {client.cpu_ms:.2f} ms (gateway ÷ client {gateway.cpu_ms / client.cpu_ms:.2f})"
    )
    return f"CPU per request of operation {BIG_QUERY}, the 100-item Query, whole: " + "; ".join(parts) + "."


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _ratio(top: Sample | None, bottom: Sample | None) -> str:
    if top is None or bottom is None:
        return ""
    return f"{top.p50_ms / bottom.p50_ms:.2f}x"


def _ms(value: float) -> str:
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _short(size: int) -> str:
    exponent = len(str(size)) - 1
    return f"10^{exponent}" if size == 10**exponent else f"{size:,}"
