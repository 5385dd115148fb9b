"""``python -m benchmarks``: run the benchmark suite and print its markdown report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import chart, report
from benchmarks.engine import DATA_DIR
from benchmarks.operations import OPERATIONS
from benchmarks.run import DECODES, Config, run


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())


def _parser() -> argparse.ArgumentParser:
    defaults = Config()
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Drive the canonical and nested operations through HTTP against the gateway on DynamoDB Local, "
        "with the aioboto3 floor and a hand-written DataLoader peer on the same table, and print markdown tables.",
    )
    parser.add_argument(
        "--sizes",
        type=_numbers,
        default=defaults.sizes,
        help="table sizes in items, comma-separated; the baselines run on the first (default: 1000,100000,1000000)",
    )
    parser.add_argument(
        "--concurrency",
        type=_numbers,
        default=defaults.concurrency,
        help="concurrent clients, comma-separated levels, each measured (default: 1,4)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=defaults.duration,
        help=f"seconds per measurement, in each round (default: {defaults.duration:g})",
    )
    parser.add_argument(
        "--warmup", type=float, default=defaults.warmup, help=f"seconds of warm-up before each ({defaults.warmup:g})"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=defaults.rounds,
        help=f"rounds in which the systems take turns on each operation (default: {defaults.rounds})",
    )
    parser.add_argument("--workers", type=int, default=defaults.workers, help="gateway worker processes (default: 1)")
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=defaults.latency_ms,
        help="also measure gateway, peer and floor at 1 client with this many ms added to each DynamoDB request "
        "by a proxy, a model of DynamoDB across a network (default: off; try 5)",
    )
    parser.add_argument(
        "--scaling",
        type=_numbers,
        default=defaults.scaling,
        help="also measure the gateway's requests/s with each of these worker counts, comma-separated, "
        "at --saturation clients (default: off; try 1,2)",
    )
    parser.add_argument(
        "--saturation",
        type=int,
        default=defaults.saturation,
        help=f"concurrent clients for --scaling (default: {defaults.saturation})",
    )
    parser.add_argument(
        "--decode",
        choices=DECODES,
        default=defaults.decode,
        help="the gateway's response decoding; both also measures the stock one on the first size (default: both)",
    )
    parser.add_argument(
        "--operations",
        type=_numbers,
        default=defaults.operations,
        help=f"operations to run, by number: 1-8 canonical, 9- nested (default: all of 1..{len(OPERATIONS)})",
    )
    parser.add_argument("--no-baselines", dest="baselines", action="store_false", help="measure the gateway only")
    parser.add_argument(
        "--endpoint-url",
        help="use this DynamoDB (tables bench-<size> are created there); "
        "by default a DynamoDB Local of its own runs with its tables kept in --data-dir",
    )
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help=f"kept tables (default: {DATA_DIR})")
    parser.add_argument(
        "--output", type=Path, default=Path("benchmarks/results"), help="folder for results.{md,json} and the chart"
    )
    parser.add_argument("--chart", type=Path, help="where to write the PNG chart (default: <output>/bench.png)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    unknown = set(args.operations) - {op.number for op in OPERATIONS}
    if unknown:
        print(f"benchmarks: no operation {sorted(unknown)}", file=sys.stderr)
        return 2
    config = Config(
        sizes=args.sizes,
        concurrency=args.concurrency,
        duration=args.duration,
        warmup=args.warmup,
        rounds=args.rounds,
        workers=args.workers,
        decode=args.decode,
        baselines=args.baselines,
        operations=args.operations,
        latency_ms=args.latency_ms,
        scaling=args.scaling,
        saturation=args.saturation,
        endpoint_url=args.endpoint_url,
        data_dir=args.data_dir,
    )
    results = run(config, progress=lambda line: print(line, file=sys.stderr, flush=True))
    machine = report.machine()
    text = report.markdown(results, machine)
    print(text)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "results.md").write_text(text)
    (args.output / "results.json").write_text(results.to_json())
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    chart.save(results, args.chart or args.output / "bench.png", f"tablegraph benchmark, {when}: {machine}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
