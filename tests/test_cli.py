"""The command line a new user types: its commands, its settings and help, and the errors it names."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.config import describe
from gateway.server.cli import EXIT_NO_TABLE, EXIT_PORT_IN_USE, EXIT_UNREACHABLE, EXIT_USAGE, main

ROOT = Path(__file__).parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_health(process: subprocess.Popen[str], port: int, accept: set[int], path: str = "/healthz") -> int:
    deadline = time.monotonic() + 90
    while True:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        assert time.monotonic() < deadline, "the gateway did not answer its health check"
        try:
            status = httpx.get(f"http://127.0.0.1:{port}{path}", timeout=2).status_code
            if status in accept:
                return status
        except httpx.TransportError:
            pass
        time.sleep(0.3)


DEMO_QUERIES = {
    "the demo": (
        [],
        '{ organization(orgName: "acme") { orgName users(first: 2) { nodes { username } } } }',
        {
            "organization": {
                "orgName": "acme",
                "users": {"nodes": [{"username": "acme-user1"}, {"username": "acme-user2"}]},
            }
        },
    ),
    "the orders": (
        ["--model", "schema.orders:ORDERS"],
        '{ order(orderId: "xyz-789") { status items(first: 2) { totalCount nodes { itemId productId } } } }',
        {
            "order": {
                "status": "pending",
                "items": {
                    "totalCount": 2,
                    "nodes": [
                        {"itemId": "item-002", "productId": "prod-789"},
                        {"itemId": "item-001", "productId": "prod-456"},
                    ],
                },
            }
        },
    ),
    "the library": (
        ["--model", "schema.library:LIBRARY"],
        '{ country(countryCode: "US") { branches(state: "CA", city: "San Francisco") { nodes { branchId '
        'address { street } } } } book(bookId: "carrie") { authorName } }',
        {
            "country": {
                "branches": {
                    "nodes": [
                        {"branchId": "sf-main", "address": {"street": "100 Larkin St"}},
                        {"branchId": "sf-mission", "address": {"street": "300 Bartlett St"}},
                    ]
                }
            },
            "book": {"authorName": "Stephen King"},
        },
    ),
    "the business partners": (
        ["--model", "schema.business:BUSINESS"],
        '{ customer(customerId: "c-ann") { firstName stores(first: 5) { nodes { storeId storeName } } } }',
        {
            "customer": {
                "firstName": "Ann",
                "stores": {
                    "nodes": [
                        {"storeId": "s-bondi", "storeName": "Coffee Bondi"},
                        {"storeId": "s-cbd", "storeName": "Coffee CBD"},
                    ]
                },
            }
        },
    ),
    "the giant workspace": (
        ["--model", "schema.giant:GIANT"],
        '{ workspace(workspaceId: "acme") { projects(first: 3) { totalCount nodes { projectId } } } }',
        {"workspace": {"projects": {"totalCount": 100, "nodes": [{"projectId": f"p{n:03d}"} for n in range(3)]}}},
    ),
}


@pytest.mark.parametrize("design", DEMO_QUERIES)
def test_serve_demo_runs_on_a_managed_engine_and_stops_it_on_exit(design: str) -> None:
    arguments, query, expected = DEMO_QUERIES[design]
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEGRAPH_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway", "serve", "--demo", "--port", str(port), *arguments],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for_health(process, port, accept={200})
        body = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query}, timeout=10).json()
        assert body["data"] == expected
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "demo mode" in output
    assert "Traceback" not in output
    with pytest.raises(ProcessLookupError):  # DynamoDB Local went with it
        for _ in range(50):
            os.killpg(process.pid, 0)
            time.sleep(0.1)


def test_create_table_and_seed_on_an_endpoint(endpoint: str, dynamodb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    table = f"cli-{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("TABLEGRAPH_TABLE", table)
    assert main(["create-table", "--endpoint-url", endpoint]) == 0
    assert main(["create-table", "--endpoint-url", endpoint]) == 0
    assert main(["seed", "--demo", "--endpoint-url", endpoint]) == 0
    acme = dynamodb.query(
        TableName=table, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": "ORG#acme"}}
    )
    # Seeding again must not undo what writes changed since.
    workspace = {"PK": {"S": "WS#ws-1"}, "SK": {"S": "META"}}
    dynamodb.update_item(
        TableName=table,
        Key=workspace,
        UpdateExpression="SET projectCount = :n",
        ExpressionAttributeValues={":n": {"N": "99"}},
    )
    assert main(["seed", "--demo", "--endpoint-url", endpoint]) == 0
    count = dynamodb.get_item(TableName=table, Key=workspace)["Item"]["projectCount"]
    dynamodb.delete_table(TableName=table)
    assert acme["Items"][0]["SK"] == {"S": "METADATA#acme"}
    assert acme["Count"] == 7
    assert count == {"N": "99"}


def test_serve_on_an_endpoint_leaves_a_missing_table_missing(endpoint: str, dynamodb: Any) -> None:
    table = f"absent-{uuid.uuid4().hex[:6]}"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEGRAPH_")} | {"TABLEGRAPH_AUTH_OPEN": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway", "serve", "--endpoint-url", endpoint, "--table", table, "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        status = _wait_for_health(process, port, accept={200, 503}, path="/readyz")
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert status == 503, output
    assert table not in dynamodb.list_tables()["TableNames"]


def test_commands_that_need_a_table_say_where_to_find_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["create-table"]) == EXIT_USAGE
    assert "--endpoint-url" in _one_line_error(capsys.readouterr().err)


def test_bad_settings_from_the_environment_are_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TABLEGRAPH_PORT", "eighty")
    assert main(["export-schema"]) == 2
    assert "TABLEGRAPH_PORT" in capsys.readouterr().err


def _shown(default: object) -> str:
    if default is None or default == "":
        return "none"
    if isinstance(default, bool):
        return "on" if default else "off"
    return str(default)


def _help(command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """``tablegraph COMMAND --help`` as the text under each flag, on a terminal wide enough to wrap nothing."""
    monkeypatch.setenv("COLUMNS", "1000")
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    flags: dict[str, str] = {}
    flag = ""
    for line in capsys.readouterr().out.splitlines():
        if line.strip().startswith("--"):
            flag = line.split()[0].rstrip(",")
            flags[flag] = line.strip()
        elif flag and line.strip():
            flags[flag] += " " + line.strip()
        else:
            flag = ""
    return flags


def test_version_names_the_installed_release(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"tablegraph {version('tablegraph')}"


def test_serve_help_lists_every_setting_with_its_variable_default_and_meaning(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = _help("serve", capsys, monkeypatch)
    for setting in describe():
        line = flags["--" + setting.name.replace("_", "-")]
        assert f"[TABLEGRAPH_{setting.name.upper()}; default: {_shown(setting.default)}]" in line
        assert setting.doc.replace("``", "") in line
    assert "--no-graphiql" in flags["--graphiql"]


def test_table_commands_list_the_settings_that_reach_a_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for command in ("create-table", "seed", "recount"):
        flags = _help(command, capsys, monkeypatch)
        assert {"--endpoint-url", "--aws", "--table", "--model", "--region"} <= set(flags)
        assert "--port" not in flags
        assert "[TABLEGRAPH_REGION; default: us-east-1]" in flags["--region"]


def test_a_flag_wins_over_its_environment_variable(
    endpoint: str, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_env, from_flag = f"env-{uuid.uuid4().hex[:6]}", f"flag-{uuid.uuid4().hex[:6]}"
    monkeypatch.setenv("TABLEGRAPH_TABLE", from_env)
    assert main(["create-table", "--endpoint-url", endpoint, "--table", from_flag]) == 0
    tables = dynamodb.list_tables()["TableNames"]
    dynamodb.delete_table(TableName=from_flag)
    assert from_flag in tables
    assert from_env not in tables


def _one_line_error(err: str) -> str:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("tablegraph:")]
    assert len(lines) == 1, err
    return lines[0]


def test_serve_on_a_busy_port_is_refused_before_the_table_is_made(
    endpoint: str, dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    table = f"busy-{uuid.uuid4().hex[:6]}"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code = main(["serve", "--demo", "--endpoint-url", endpoint, "--table", table, "--port", str(port)])
    assert code == EXIT_PORT_IN_USE
    assert f"127.0.0.1:{port}" in _one_line_error(capsys.readouterr().err)
    assert table not in dynamodb.list_tables()["TableNames"]


def test_recount_of_a_missing_table_names_it_where_it_looked_and_how_to_make_it(endpoint: str) -> None:
    table = f"nosuch-{uuid.uuid4().hex[:6]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEGRAPH_")}
    result = subprocess.run(
        [sys.executable, "-m", "gateway", "recount", "--endpoint-url", endpoint, "--table", table],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == EXIT_NO_TABLE, result.stderr
    line = _one_line_error(result.stderr)
    assert f"table '{table}' does not exist at {endpoint}" in line
    assert f"tablegraph create-table --endpoint-url {endpoint} --table {table}" in line


def test_aws_and_an_endpoint_together_are_refused(endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["create-table", "--aws", "--endpoint-url", endpoint]) == EXIT_USAGE
    assert "--aws, --endpoint-url" in _one_line_error(capsys.readouterr().err)


def test_an_endpoint_where_nothing_listens_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    nowhere = f"http://127.0.0.1:{_free_port()}"
    for command in (["create-table"], ["seed"], ["recount"], ["serve", "--demo", "--port", str(_free_port())]):
        assert main([*command, "--endpoint-url", nowhere]) == EXIT_UNREACHABLE
        line = _one_line_error(capsys.readouterr().err)
        assert f"DynamoDB at {nowhere} cannot be reached (connection refused)" in line


def test_export_schema_writes_the_possible_types_and_the_served_page_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TABLEGRAPH_DEFAULT_PAGE_SIZE", "7")
    matcher = tmp_path / "possible-types.json"
    assert main(["export-schema", "--possible-types", str(matcher)]) == 0
    sdl = capsys.readouterr().out
    assert "projects(" in sdl and "first: Int = 7" in sdl
    possible = json.loads(matcher.read_text())["possibleTypes"]
    assert "Workspace" in possible["Node"] and "Enrollment" in possible["Node"]
    assert set(possible["MutationError"]) == {"NotFoundError", "ConflictError", "ValidationFailedError"}
