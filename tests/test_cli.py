"""The command line a new user types: serve on a managed engine, create-table, seed, export-schema."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.cli import main

ROOT = Path(__file__).parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_health(process: subprocess.Popen[str], port: int, accept: set[int]) -> int:
    deadline = time.monotonic() + 90
    while True:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        assert time.monotonic() < deadline, "the gateway did not answer its health check"
        try:
            status = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code
            if status in accept:
                return status
        except httpx.TransportError:
            pass
        time.sleep(0.3)


def test_serve_demo_runs_on_a_managed_engine_and_stops_it_on_exit() -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEGRAPH_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway", "serve", "--demo", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for_health(process, port, accept={200})
        body = httpx.post(
            f"http://127.0.0.1:{port}/graphql",
            json={"query": '{ organization(orgName: "acme") { orgName users(first: 2) { nodes { username } } } }'},
            timeout=10,
        ).json()
        assert body["data"]["organization"]["users"]["nodes"] == [
            {"username": "acme-user1"},
            {"username": "acme-user2"},
        ]
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
        status = _wait_for_health(process, port, accept={200, 503})
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert status == 503, output
    assert table not in dynamodb.list_tables()["TableNames"]


def test_commands_that_need_a_table_say_where_to_find_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["create-table"]) == 1
    assert "--endpoint-url" in capsys.readouterr().err


def test_bad_settings_from_the_environment_are_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TABLEGRAPH_PORT", "eighty")
    assert main(["export-schema"]) == 2
    assert "TABLEGRAPH_PORT" in capsys.readouterr().err
