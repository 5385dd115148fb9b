"""The results as a PNG: latency per operation for each system, CPU per request, latency under the latency model,
and latency per table size."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from benchmarks.operations import OPERATIONS
from benchmarks.report import clients
from benchmarks.run import FLOOR, GATEWAY, GATEWAY_STOCK, PEER, Results

_COLOURS = {FLOOR: "#9e9e9e", GATEWAY: "#1565c0", GATEWAY_STOCK: "#90caf9", PEER: "#e65100"}


def save(results: Results, path: Path, title: str) -> None:
    operations = [op.number for op in OPERATIONS if op.number in results.config.operations]
    systems = [system for system in (FLOOR, GATEWAY, GATEWAY_STOCK, PEER) if system in results.systems()]
    sizes = results.config.sizes
    # Latency without queueing behind other clients where it was measured: each system's own.
    level = min(results.config.concurrency)
    added = results.config.latency_ms
    panels = 2 + (len(sizes) > 1) + bool(added)
    # A bare Figure, not pyplot: no GUI backend and no global state, only a file is wanted.
    figure = Figure(figsize=(6 * panels, 4.8), layout="constrained")
    axes = figure.subplots(1, panels)
    figure.suptitle(title, fontsize=10)
    width = 0.8 / len(systems)
    for i, system in enumerate(systems):
        samples = [results.get(system, number, concurrency=level) for number in operations]
        positions = [n + (i - (len(systems) - 1) / 2) * width for n in range(len(operations))]
        colour = _COLOURS[system]
        p50 = [sample.p50_ms if sample else 0.0 for sample in samples]
        cpu = [sample.cpu_ms if sample else 0.0 for sample in samples]
        axes[0].bar(positions, p50, width, label=system, color=colour)
        axes[1].bar(positions, cpu, width, label=system, color=colour)
    for axis, label in ((axes[0], f"p50 latency, {clients(level)}, ms (log)"), (axes[1], "CPU per request, ms (log)")):
        axis.set_yscale("log")
        axis.set_ylabel(label)
        axis.set_xticks(range(len(operations)), [f"#{number}" for number in operations])
        axis.set_xlabel("operation (benchmarks/operations.py)")
        axis.legend(fontsize=8)
    if added:
        delayed = axes[2]
        for i, system in enumerate(systems):
            found = [results.get(system, number, concurrency=1, latency_ms=added) for number in operations]
            positions = [n + (i - (len(systems) - 1) / 2) * width for n in range(len(operations))]
            delayed.bar(positions, [one.p50_ms if one else 0.0 for one in found], width, color=_COLOURS[system])
        delayed.set_yscale("log")
        delayed.set_ylabel(f"p50 latency, 1 client, {added:g} ms per DynamoDB request, ms (log)")
        delayed.set_xticks(range(len(operations)), [f"#{number}" for number in operations])
        delayed.set_xlabel("operation (benchmarks/operations.py)")
    if len(sizes) > 1:
        sized = axes[-1]
        for number in operations:
            found = [results.get(GATEWAY, number, size, level) for size in sizes]
            points = [(size, sample.p50_ms) for size, sample in zip(sizes, found, strict=True) if sample]
            sized.plot(*zip(*points, strict=True), marker="o", label=f"#{number}")
        sized.set_xscale("log")
        sized.set_yscale("log")
        sized.set_xlabel("items in the table")
        sized.set_ylabel(f"gateway p50 latency, {clients(level)}, ms (log)")
        sized.legend(fontsize=8, ncols=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
