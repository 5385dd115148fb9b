"""The ``tablegraph`` command: serve, create-table, seed, export-schema."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from gateway.config import Settings
from gateway.errors import GatewayError
from gateway.local import DynamoDBLocal, LocalEngineError
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
        command.add_argument("--table", help="table name (default: tablegraph)")
        command.add_argument("--region", help="AWS region (default: us-east-1)")

    serve = commands.add_parser(
        "serve", help="serve GraphQL at /graphql; with no endpoint, on a managed DynamoDB Local"
    )
    serve.add_argument("--host", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default: 8000)")
    serve.add_argument("--demo", action="store_true", default=None, help="create the table and load the demo data")
    serve.add_argument("--data-dir", type=Path, help="keep the managed DynamoDB Local's data in this folder")
    table_options(serve)

    create = commands.add_parser("create-table", help="create the table and GSI1 (does nothing if they exist)")
    table_options(create)

    seed = commands.add_parser("seed", help="load data into the table")
    seed.add_argument("--demo", action="store_true", required=True, help="load the demo data")
    table_options(seed)

    export = commands.add_parser("export-schema", help="print the GraphQL schema (SDL)")
    export.add_argument("--output", type=Path, help="write to this file instead of standard output")
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
        if command == "serve":
            _serve(settings)
        elif command == "export-schema":
            _export_schema(output)
        else:
            _require_endpoint(settings, command)
            asyncio.run(_prepare(settings, create=True, demo=command == "seed"))
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
def _engine(settings: Settings) -> Iterator[Settings]:
    """The settings to serve with: as given, or pointing at a managed DynamoDB Local for the duration."""
    if settings.endpoint_url is not None or settings.aws:
        yield settings
        return
    with DynamoDBLocal(data_dir=settings.data_dir) as engine:
        where = settings.data_dir or "memory"
        log.info("started DynamoDB Local at %s (data in %s)", engine.endpoint_url, where)
        yield settings.with_endpoint(engine.endpoint_url)


def _serve(settings: Settings) -> None:
    import uvicorn

    from gateway.app import create_app

    with _engine(settings) as settings:
        managed = settings.endpoint_url is not None and not settings.aws
        asyncio.run(_prepare(settings, create=settings.demo or managed, demo=settings.demo))
        if settings.demo:
            log.warning("demo mode: the gateway is open to anyone who can reach %s:%s", settings.host, settings.port)
        log.info("GraphiQL at http://%s:%s/graphql", settings.host, settings.port)
        # uvicorn stops gracefully on SIGINT/SIGTERM, then raises the signal again for whoever runs it; we are
        # that caller and have nothing left to interrupt, so the repeat must not become a KeyboardInterrupt.
        previous = {sig: signal.signal(sig, _ignore_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            uvicorn.run(
                create_app(settings), host=settings.host, port=settings.port, log_level=settings.log_level.lower()
            )
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    log.debug("signal %d after shutdown", signum)


async def _prepare(settings: Settings, *, create: bool, demo: bool) -> None:
    from schema import MODEL
    from schema.demo import demo_items

    async with Store.open(settings, MODEL) as store:
        if create and await store.create_table():
            log.info("created table %s", store.table)
        if demo:
            count = await store.put_items(demo_items())
            log.info("loaded %d demo items into %s", count, store.table)


def _export_schema(output: Path | None) -> None:
    from schema import SCHEMA

    text = SCHEMA.as_str() + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
