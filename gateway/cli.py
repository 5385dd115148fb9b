"""The ``tablegraph`` command: serve, create-table, seed, recount, export-schema."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TextIO

from gateway.accounting import Ledger
from gateway.config import DEFAULT_MODEL, Settings
from gateway.declaration import Declaration, load
from gateway.errors import GatewayError
from gateway.local import DynamoDBLocal, LocalEngineError
from gateway.model import Item
from gateway.store import Store

log = logging.getLogger("tablegraph")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablegraph",
        description="A GraphQL gateway over a DynamoDB single-table design. "
        "Every option can also be set as TABLEGRAPH_<OPTION> in the environment.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def table_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("--endpoint-url", help="DynamoDB endpoint, e.g. http://127.0.0.1:8001")
        command.add_argument(
            "--aws",
            action="store_true",
            default=None,
            help="use AWS DynamoDB with the AWS SDK's credentials and region",
        )
        command.add_argument("--table", help="table name (default: the one the declaration names)")
        command.add_argument(
            "--model", help=f"the declared design to serve, as pkg.module:attr (default: {DEFAULT_MODEL}, the demo)"
        )
        command.add_argument("--region", help="AWS region (default: us-east-1)")

    serve = commands.add_parser(
        "serve", help="serve GraphQL at /graphql; with no endpoint, on a managed DynamoDB Local"
    )
    serve.add_argument("--host", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default: 8000)")
    serve.add_argument("--demo", action="store_true", default=None, help="create the table and load the demo data")
    serve.add_argument("--data-dir", type=Path, help="keep the managed DynamoDB Local's data in this folder")
    serve.add_argument("--workers", type=int, help="worker processes sharing the port (default: 1)")
    table_options(serve)

    create = commands.add_parser(
        "create-table", help="create the table and its indexes as declared (does nothing if they exist)"
    )
    table_options(create)

    seed = commands.add_parser("seed", help="load the declaration's demo data into the table")
    seed.add_argument("--demo", action="store_true", default=None, help="accepted for compatibility; seed always does")
    table_options(seed)

    recount = commands.add_parser(
        "recount",
        help="rebuild the member counters (projectCount, ...) with one Scan; offline, for a table another tool wrote",
    )
    table_options(recount)

    export = commands.add_parser("export-schema", help="print the GraphQL schema (SDL)")
    export.add_argument("--output", type=Path, help="write to this file instead of standard output")
    export.add_argument(
        "--model", help=f"the declared design to serve, as pkg.module:attr (default: {DEFAULT_MODEL}, the demo)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = vars(_parser().parse_args(argv))
    command = args.pop("command")
    output = args.pop("output", None)
    try:
        settings = Settings.from_env(**args)
    except (TypeError, ValueError) as error:
        print(f"tablegraph: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        declaration = load(settings.model)
    except ValueError as error:
        print(f"tablegraph: {error}", file=sys.stderr)
        return 2
    try:
        if command == "serve":
            _serve(settings, declaration)
        elif command == "export-schema":
            _export_schema(declaration, output)
        elif command == "recount":
            _require_endpoint(settings, command)
            return asyncio.run(_recount(settings, declaration))
        else:
            _require_endpoint(settings, command)
            asyncio.run(_prepare(settings, declaration, create=True, demo=command == "seed"))
    except (LocalEngineError, GatewayError) as error:
        print(f"tablegraph: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def _require_endpoint(settings: Settings, command: str) -> None:
    if settings.endpoint_url is None and not settings.aws:
        raise GatewayError(
            f"{command} needs --endpoint-url URL or --aws; `tablegraph serve --demo` prepares its own engine"
        )


@contextmanager
def _engine(settings: Settings) -> Iterator[tuple[Settings, bool]]:
    """The settings to serve with, and whether the engine is ours: a managed DynamoDB Local for the duration."""
    if settings.endpoint_url is not None or settings.aws:
        yield settings, False
        return
    with DynamoDBLocal(data_dir=settings.data_dir) as engine:
        where = settings.data_dir or "memory"
        log.info("started DynamoDB Local at %s (data in %s)", engine.endpoint_url, where)
        yield settings.with_endpoint(engine.endpoint_url), True


def _serve(settings: Settings, declaration: Declaration) -> None:
    import uvicorn

    from gateway.app import create_app
    from gateway.auth import Authenticator

    if settings.demo and not (settings.jwt_issuer or settings.jwt_secret or settings.api_keys):
        # The demo path opens the gateway explicitly; nothing else defaults to open.
        settings = replace(settings, auth_open=True)
    try:
        authenticator = Authenticator.from_settings(settings, declaration.tenancy.grant_names)
    except ValueError as error:
        raise GatewayError(str(error)) from None
    with _engine(settings) as (settings, managed):
        # A table someone else provides is served as it is: only our own engine, or a demo, gets one made.
        asyncio.run(_prepare(settings, declaration, create=settings.demo or managed, demo=settings.demo))
        where = f"{settings.host}:{settings.port}"
        if settings.auth_open:
            log.warning(
                "%sauthentication is OFF: anyone who can reach %s reads and writes every tenant's data",
                "demo mode: " if settings.demo else "",
                where,
            )
        elif settings.demo:
            log.warning("demo mode: demo data loaded into %s; callers still need credentials", settings.table)
        log.info("accepting %s", "; ".join(authenticator.modes))
        log.info("GraphiQL at http://%s:%s/graphql", settings.host, settings.port)
        # uvicorn stops gracefully on SIGINT/SIGTERM, then raises the signal again for whoever runs it; we are
        # that caller and have nothing left to interrupt, so the repeat must not become a KeyboardInterrupt.
        previous = {sig: signal.signal(sig, _ignore_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            if settings.workers == 1:
                uvicorn.run(
                    create_app(settings, declaration),
                    host=settings.host,
                    port=settings.port,
                    log_level=settings.log_level.lower(),
                )
            else:
                # Workers are new processes that import the app by name: settings travel in the environment,
                # the generated cursor secret too, so a cursor from one worker is valid on the others.
                os.environ.update(settings.environment())
                uvicorn.run(
                    "gateway.app:app_from_env",
                    factory=True,
                    workers=settings.workers,
                    host=settings.host,
                    port=settings.port,
                    log_level=settings.log_level.lower(),
                )
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    log.debug("signal %d after shutdown", signum)


async def _prepare(settings: Settings, declaration: Declaration, *, create: bool, demo: bool) -> None:
    from gateway.writes import with_counters

    async with Store.open(settings, declaration.model) as store:
        created = create and await store.create_table()
        if created:
            log.info("created table %s", store.table)
        if not demo:
            return
        if declaration.seed is None:
            raise GatewayError(f"{settings.model} declares no demo data to load")
        items = list(with_counters(declaration.writes, declaration.seed()))
        # Loading again over data that writes have since changed would undo them and break the counters.
        if not created and items and await store.get_item(_key(declaration, items[0]), Ledger()) is not None:
            log.info("the demo data is already in %s; left as it is", store.table)
            return
        count = await store.put_items(items)
        log.info("loaded %d demo items into %s", count, store.table)


def _key(declaration: Declaration, item: Item) -> dict[str, str]:
    table = declaration.model.index(None)
    return {table.pk: item[table.pk], table.sk: item[table.sk]}


def _export_schema(declaration: Declaration, output: Path | None) -> None:
    from gateway.graph import build

    text = build(declaration).schema.as_str() + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)


async def _recount(settings: Settings, declaration: Declaration) -> int:
    from gateway.maintenance import recount

    async with Store.open(settings, declaration.model) as store:
        report = await recount(store, declaration.writes, _ProgressBar(sys.stderr))
    print(
        f"tablegraph: scanned {report.scanned} items; {report.parents} parents, {report.corrected} with counters set",
        file=sys.stderr,
    )
    if report.changed_meanwhile:
        print(
            f"tablegraph: {len(report.changed_meanwhile)} parents were written while counting and were left as they "
            "were; run recount again when nothing writes: " + ", ".join(report.changed_meanwhile[:10]),
            file=sys.stderr,
        )
        return 1
    return 0


class _ProgressBar:
    """A one-line bar per phase on stderr, redrawn when the percentage moves (a line per phase when not a TTY)."""

    WIDTH = 30

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._shown: tuple[str, int] | None = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        percent = 100 if total <= 0 else min(100, done * 100 // total)
        if self._shown == (phase, percent):
            return
        self._shown = (phase, percent)
        if not self._stream.isatty() and percent < 100:
            return
        filled = self.WIDTH * percent // 100
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self._stream.write(f"\r{phase:<9} [{bar}] {percent:3d}% {done}/{total}")
        if percent == 100:
            self._stream.write("\n")
        self._stream.flush()
