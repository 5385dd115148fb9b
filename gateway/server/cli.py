"""The ``tablegraph`` command: serve, create-table, seed, recount, check, export-schema, import, init."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import FrameType
from typing import Any, TextIO
from urllib.parse import urlsplit

from gateway.config import Setting, Settings, describe
from gateway.design.declaration import Declaration
from gateway.design.model import Item
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.store import Store
from gateway.errors import GatewayError, Unavailable
from gateway.server.declaration_file import load_model
from gateway.server.local import DynamoDBLocal, LocalEngineError
from gateway.writes.check import EXAMPLES, KEY_KINDS, Report

log = logging.getLogger("tablegraph")

_CONNECT_TIMEOUT = 5.0


# Exit codes; the README's command-line table lists them.
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_TABLE = 3
EXIT_UNREACHABLE = 4
EXIT_PORT_IN_USE = 5

# The settings each command reads besides those of every command; `serve` reads them all, new ones included.
_EVERY_COMMAND = ("model", "log_level")
_TABLE_COMMAND = ("endpoint_url", "aws", "region", "table", *_EVERY_COMMAND)
_COMMAND_SETTINGS: dict[str, tuple[str, ...]] = {
    "create-table": _TABLE_COMMAND,
    "seed": _TABLE_COMMAND,
    "recount": _TABLE_COMMAND,
    "check": _TABLE_COMMAND,
    "export-schema": _EVERY_COMMAND,
    "init": ("endpoint_url", "aws", "region", "log_level"),
    "import": ("log_level",),
}
# Commands that draft a declaration rather than load one.
_DRAFTING = ("init", "import")
DEFAULT_SAMPLE = 200
CHECK_SAMPLE = 1000
"""Items ``check`` reads without ``--full``."""


class CommandError(Exception):
    """A failure the user can act on: one line on stderr, this exit code, no traceback."""

    exit_code = EXIT_FAILED


class UsageError(CommandError):
    exit_code = EXIT_USAGE


class TableMissing(CommandError):
    exit_code = EXIT_NO_TABLE


class EngineUnreachable(CommandError):
    exit_code = EXIT_UNREACHABLE


class PortInUse(CommandError):
    exit_code = EXIT_PORT_IN_USE


class KeysContradicted(CommandError):
    """``serve`` on a table whose keys are not the declaration's."""


def _version() -> str:
    try:
        return version("tablegraph")
    except PackageNotFoundError:
        return "(not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablegraph",
        description="A GraphQL gateway over a DynamoDB single-table design. Every setting is a flag of the "
        "commands it applies to and a TABLEGRAPH_<SETTING> environment variable; a flag wins over the variable. "
        "`tablegraph COMMAND --help` lists them with their defaults.",
        epilog=f"exit codes: {EXIT_FAILED} failed, {EXIT_USAGE} bad, missing or conflicting options, "
        f"{EXIT_NO_TABLE} no such table, {EXIT_UNREACHABLE} DynamoDB unreachable, {EXIT_PORT_IN_USE} port in use",
    )
    parser.add_argument("--version", action="version", version=f"tablegraph {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="serve GraphQL at /graphql; with no endpoint, on a managed DynamoDB Local",
        usage="tablegraph serve [-h] [--SETTING VALUE ...]",
    )
    _add_settings(serve, [setting.name for setting in describe()])
    create = commands.add_parser(
        "create-table", help="create the table and its indexes as declared (does nothing if they exist)"
    )
    _add_settings(create, _COMMAND_SETTINGS["create-table"])
    seed = commands.add_parser("seed", help="load the declaration's demo data into the table")
    seed.add_argument("--demo", action="store_true", default=None, help="accepted for compatibility; seed always does")
    _add_settings(seed, _COMMAND_SETTINGS["seed"])
    recount = commands.add_parser(
        "recount",
        help="rebuild the member counters (projectCount, ...) with one Scan; offline, for a table another tool wrote",
    )
    _add_settings(recount, _COMMAND_SETTINGS["recount"])
    check = commands.add_parser(
        "check",
        help="hold the declaration against the table: its keys, indexes and stream, then a sample of its items, or "
        f"every item with --full; exit {EXIT_FAILED} on a mismatch",
    )
    check.add_argument(
        "--full", action="store_true", help="read every item (a parallel Scan, offline like recount), and recount"
    )
    check.add_argument(
        "--sample",
        type=int,
        default=CHECK_SAMPLE,
        metavar="N",
        help=f"without --full, read at most N items with Scan (default {CHECK_SAMPLE})",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON (docs/cli.md has its shape)")
    check.add_argument(
        "--examples", type=int, default=EXAMPLES, metavar="N", help=f"example keys per finding (default {EXAMPLES})"
    )
    _add_settings(check, _COMMAND_SETTINGS["check"])
    export = commands.add_parser("export-schema", help="print the GraphQL schema (SDL)")
    export.add_argument("--output", type=Path, help="write to this file instead of standard output")
    export.add_argument(
        "--possible-types",
        type=Path,
        help="also write the interfaces' and unions' object types to this JSON file (Apollo Client's possibleTypes)",
    )
    _add_settings(export, _COMMAND_SETTINGS["export-schema"])
    imported = commands.add_parser("import", help="draft a YAML declaration from a design tool's model")
    imported.add_argument("source", choices=["workbench"], help="the tool: workbench (AWS NoSQL Workbench)")
    imported.add_argument("path", type=Path, metavar="MODEL.json", help="the tool's exported data model")
    imported.add_argument("--output", type=Path, help="write the draft to this file instead of standard output")
    _add_settings(imported, _COMMAND_SETTINGS["import"])
    init = commands.add_parser(
        "init",
        help="draft a YAML declaration from a live table's key schema and a bounded sample read with Scan (with "
        "recount and check, the only commands that scan; offline, never to answer a request)",
    )
    init.add_argument("--from-table", required=True, metavar="NAME", help="the table to sample")
    init.add_argument(
        "--sample",
        type=int,
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"read at most N items with Scan (default {DEFAULT_SAMPLE})",
    )
    init.add_argument("--output", type=Path, help="write the draft to this file instead of standard output")
    _add_settings(init, _COMMAND_SETTINGS["init"])
    return parser


def _add_settings(command: argparse.ArgumentParser, names: Sequence[str]) -> None:
    """A flag per setting, generated from Settings: its docstring, variable and default are the help."""
    group = command.add_argument_group("settings", "each also TABLEGRAPH_<SETTING> in the environment")
    chosen = set(names)
    for setting in describe():
        if setting.name not in chosen:
            continue
        flag = "--" + setting.name.replace("_", "-")
        doc = setting.doc.replace("``", "")
        help_text = f"{doc} [{setting.env}; default: {_shown(setting.default)}]".lstrip().replace("%", "%%")
        if setting.kind is bool:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        else:
            group.add_argument(flag, type=_converter(setting), default=None, help=help_text)


def _shown(default: object) -> str:
    if default is None or default == "":
        return "none"
    if isinstance(default, bool):
        return "on" if default else "off"
    return str(default)


def _converter(setting: Setting) -> Callable[[str], Any]:
    def convert(raw: str) -> Any:
        try:
            return setting.parse(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{raw!r} is not a valid {setting.kind.__name__}") from None

    return convert


def main(argv: Sequence[str] | None = None) -> int:
    args = vars(_parser().parse_args(argv))
    command = args.pop("command")
    output = args.pop("output", None)
    possible_types = args.pop("possible_types", None)
    drafting: dict[str, Any] = {
        name: args.pop(name)
        for name in ("source", "path", "from_table", "sample", "full", "json", "examples")
        if name in args
    }
    try:
        settings = Settings.from_env(**args)
    except (TypeError, ValueError) as error:
        print(f"tablegraph: {error}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if command in _DRAFTING:
        try:
            return _draft(command, settings, drafting, output)
        except CommandError as error:
            print(f"tablegraph: {error}", file=sys.stderr)
            return error.exit_code
        except GatewayError as error:
            print(f"tablegraph: {error}", file=sys.stderr)
            return EXIT_FAILED
    try:
        declaration = load_model(settings.model)
    except ValueError as error:
        print(f"tablegraph: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if command == "serve":
            _serve(settings, declaration)
        elif command == "export-schema":
            _export_schema(declaration, settings, output, possible_types)
        elif command == "recount":
            _require_endpoint(settings, command)
            _require_reachable(settings)
            return asyncio.run(_recount(settings, declaration))
        elif command == "check":
            _require_endpoint(settings, command)
            _require_reachable(settings)
            return _check(settings, declaration, drafting)
        else:
            _require_endpoint(settings, command)
            _require_reachable(settings)
            asyncio.run(_prepare(settings, declaration, create=True, demo=command == "seed"))
    except CommandError as error:
        print(f"tablegraph: {error}", file=sys.stderr)
        return error.exit_code
    except (LocalEngineError, GatewayError) as error:
        print(f"tablegraph: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    return 0


def _require_endpoint(settings: Settings, command: str) -> None:
    if settings.endpoint_url is None and not settings.aws:
        raise UsageError(
            f"{command} needs --endpoint-url URL or --aws; `tablegraph serve --demo` prepares its own engine"
        )


def _require_reachable(settings: Settings) -> None:
    """Refuse at once an endpoint where nothing listens, rather than after the SDK's retries."""
    if settings.endpoint_url is None:
        return
    url = urlsplit(settings.endpoint_url)
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        port = None
    if url.hostname is None or port is None:
        raise UsageError(f"the endpoint URL {settings.endpoint_url!r} names no host and port")
    try:
        socket.create_connection((url.hostname, port), timeout=_CONNECT_TIMEOUT).close()
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise EngineUnreachable(
            f"DynamoDB at {settings.endpoint_url} cannot be reached ({reason.lower()}): start it, or give another "
            "--endpoint-url (TABLEGRAPH_ENDPOINT_URL)"
        ) from None


def _require_free_port(host: str, port: int) -> None:
    """Fail before any engine starts or table is touched, as uvicorn would fail after: it binds the same way."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            reason = (error.strerror or str(error)).lower()
            raise PortInUse(
                f"cannot listen on {host}:{port} ({reason}): stop what holds it or choose another --port "
                "(TABLEGRAPH_PORT); nothing was started or written"
            ) from None


def _where(settings: Settings) -> str:
    return settings.endpoint_url or f"AWS DynamoDB in {settings.region}"


def _endpoint_options(settings: Settings) -> str:
    return f"--endpoint-url {settings.endpoint_url}" if settings.endpoint_url else f"--aws --region {settings.region}"


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

    from gateway.server.app import create_app
    from gateway.server.auth import Authenticator
    from gateway.server.serving import websocket_options

    if settings.demo and not (settings.jwt_issuer or settings.jwt_secret or settings.api_keys):
        # The demo path opens the gateway explicitly; nothing else defaults to open.
        settings = replace(settings, auth_open=True)
    try:
        authenticator = Authenticator.from_settings(settings, declaration.tenancy.grant_names)
    except ValueError as error:
        raise GatewayError(str(error)) from None
    _require_free_port(settings.host, settings.port)
    if settings.demo:
        _require_reachable(settings)
    with _engine(settings) as (settings, managed):
        # A table someone else provides is served as it is: only our own engine, or a demo, gets one made.
        asyncio.run(_prepare(settings, declaration, create=settings.demo or managed, demo=settings.demo))
        asyncio.run(_refuse_contradicting_keys(settings, declaration))
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
                    **websocket_options(settings),
                )
            else:
                # Workers are new processes that import the app by name: settings travel in the environment,
                # the generated cursor secret too, so a cursor from one worker is valid on the others.
                os.environ.update(settings.environment())
                uvicorn.run(
                    "gateway.server.app:app_from_env",
                    factory=True,
                    workers=settings.workers,
                    host=settings.host,
                    port=settings.port,
                    log_level=settings.log_level.lower(),
                    **websocket_options(settings),
                )
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


async def _refuse_contradicting_keys(settings: Settings, declaration: Declaration) -> None:
    """Refuse a table whose keys or indexes contradict the declaration: every read would miss, without an error.
    Other mismatches of the description are logged; a missing table is served as unavailable, as before."""
    from gateway.writes.check import check_description

    async with Store.open(settings, declaration.model) as store:
        try:
            description = await store.describe()
        except Unavailable as error:
            if _cause_code(error) == "ResourceNotFoundException":
                return
            raise
    report = Report(store.table, full=False)
    check_description(description, declaration.model, report)
    contradictions = [one for one in report.errors if one.kind in KEY_KINDS]
    for one in report.findings:
        if one not in contradictions:
            log.warning("table %s: %s %s: %s; fix: %s", store.table, one.kind, one.subject, one.problem, one.fix)
    if contradictions:
        said = "; ".join(f"{one.subject} {one.problem} (fix: {one.fix})" for one in contradictions)
        raise KeysContradicted(
            f"table {store.table!r} contradicts the declaration's keys, so every read would miss: {said}; "
            f"`tablegraph check {_endpoint_options(settings)} --table {store.table}` lists every mismatch"
        )


def _ignore_signal(signum: int, frame: FrameType | None) -> None:
    log.debug("signal %d after shutdown", signum)


async def _prepare(settings: Settings, declaration: Declaration, *, create: bool, demo: bool) -> None:
    from gateway.writes.building import with_counters

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


def _cause_code(error: GatewayError) -> str:
    """The DynamoDB error code behind ``error``, read off the SDK error the store chained to it."""
    response = getattr(error.__cause__, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def _key(declaration: Declaration, item: Item) -> dict[str, str]:
    return declaration.model.key_of(*declaration.model.item_key(item))


def _export_schema(
    declaration: Declaration, settings: Settings, output: Path | None, possible_types: Path | None
) -> None:
    from gateway.surface.graph import build, fragment_matcher

    schema = build(declaration, settings.default_page_size).schema
    text = schema.as_str() + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
    if possible_types is not None:
        possible_types.write_text(fragment_matcher(schema))


async def _recount(settings: Settings, declaration: Declaration) -> int:
    from gateway.writes.recount import recount

    async with Store.open(settings, declaration.model) as store:
        try:
            report = await recount(store, declaration.writes, _ProgressBar(sys.stderr))
        except Unavailable as error:
            if _cause_code(error) != "ResourceNotFoundException":
                raise
            raise _table_missing(settings, store.table) from None
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


def _check(settings: Settings, declaration: Declaration, args: dict[str, Any]) -> int:
    """``check``: the report on stdout (text or JSON), progress on stderr, and exit 1 when anything disagrees."""
    from gateway.dynamo.sampling import sample_table
    from gateway.writes.check import check_sample, check_table

    if args["sample"] < 1 or args["examples"] < 0:
        raise UsageError("--sample takes a number of items, at least 1; --examples 0 or more")
    table = settings.table or declaration.model.table
    bar = _ProgressBar(sys.stderr)
    try:
        if args["full"]:

            async def full() -> Report:
                async with Store.open(settings, declaration.model) as store:
                    return await check_table(store, declaration.writes, bar, args["examples"])

            report = asyncio.run(full())
        else:

            def progress(done: int, total: int) -> None:
                bar("sampling", done, total)

            sample = asyncio.run(sample_table(settings, table, args["sample"], progress))
            report = check_sample(
                sample.description, sample.items, declaration.writes, table, sample.complete, args["examples"]
            )
    except Unavailable as error:
        if _cause_code(error) != "ResourceNotFoundException":
            raise
        raise _table_missing(settings, table) from None
    if args["json"]:
        sys.stdout.write(json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_report_text(report))
    return EXIT_FAILED if report.errors else 0


def _report_text(report: Report) -> str:
    """A check's report for people: what was read, then each finding with its fix and example keys."""
    if report.full:
        read = f"every item ({report.scanned}) read"
    elif report.complete:
        read = f"a sample of {report.scanned} items read, which is every item"
    else:
        read = (
            f"a sample of {report.scanned} items read, of about {report.described}: `check --full` reads every item "
            "and recounts the counters"
        )
    lines = [f"table {report.table}: {read}"]
    errors = report.errors
    lines.append(
        "no mismatch with the declaration"
        if not errors
        else f"{len(errors)} findings of mismatch with the declaration, {sum(one.count for one in errors)} items or "
        "table settings in all"
    )
    for finding in report.findings:
        lines += ["", f"{finding.severity} {finding.kind}: {finding.subject}: {finding.problem} ({finding.count})"]
        lines.append(f"  fix: {finding.fix}")
        for example in finding.examples:
            key = " ".join(f"{name}={value!r}" for name, value in example["key"].items())
            detail = f"  ({example['detail']})" if "detail" in example else ""
            lines.append(f"  e.g. {key}{detail}")
    return "\n".join(lines) + "\n"


def _table_missing(settings: Settings, table: str) -> TableMissing:
    return TableMissing(
        f"table {table!r} does not exist at {_where(settings)}: create it with `tablegraph create-table "
        f"{_endpoint_options(settings)} --table {table}`, or name another with --table"
    )


def _draft(command: str, settings: Settings, args: dict[str, Any], output: Path | None) -> int:
    """``import`` and ``init``: a YAML declaration drafted from examples, and what was and was not inferred."""
    from gateway.server import drafts

    if command == "import":
        try:
            document = json.loads(args["path"].read_text(encoding="utf-8"))
        except OSError as error:
            raise UsageError(f"cannot read {args['path']}: {error.strerror}") from None
        except ValueError as error:
            raise UsageError(f"{args['path']} is not JSON: {error}") from None
        try:
            draft, _ = drafts.from_workbench(document)
        except ValueError as error:
            raise UsageError(f"{args['path']}: {error}") from None
    else:
        from gateway.dynamo.sampling import sample_table

        if args["sample"] < 1:
            raise UsageError("--sample takes a number of items, at least 1")
        _require_endpoint(settings, command)
        _require_reachable(settings)
        bar = _ProgressBar(sys.stderr)
        table = args["from_table"]
        sample = asyncio.run(
            sample_table(settings, table, args["sample"], lambda done, total: bar("sampling", done, total))
        )
        draft = drafts.draft(drafts.groups_of(sample.items, sample.keys), sample.keys, table)
    if output is None:
        sys.stdout.write(draft.text)
    else:
        output.write_text(draft.text, encoding="utf-8")
    report = ["inferred:", *(f"  {line}" for line in draft.inferred), "not inferred:"]
    report += [f"  {line}" for line in draft.missed]
    print("\n".join(report), file=sys.stderr)
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
