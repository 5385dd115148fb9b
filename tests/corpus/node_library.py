"""A design's own model library, run with Node on its own npm package: the reference a corpus design is held to."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gateway.server.cli import main
from gateway.server.declaration_file import load_file
from tests.support.gateway import Gateway, answered, explained

ROOT = Path(__file__).resolve().parents[2]


def node(script: Path, endpoint: str, table: str, command: str, *arguments: Any) -> Any:
    """Run ``script`` with ``command`` on ``table``; its standard output read as JSON (None when it prints nothing)."""
    done = subprocess.run(
        ["node", "--no-warnings", str(script), endpoint, table, command, *(json.dumps(a) for a in arguments)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{script.name} {command} failed:\n{done.stderr}"
    return json.loads(done.stdout) if done.stdout.strip() else None


def present(value: Any) -> Any:
    """``value`` without its null fields, as a library answers an item that lacks them."""
    if isinstance(value, dict):
        return {key: present(field) for key, field in value.items() if field is not None}
    if isinstance(value, list):
        return [present(element) for element in value]
    return value


class Design:
    """A table the library wrote, the library's answers on it, and the gateway serving it from a declaration."""

    def __init__(self, script: Path, endpoint: str, table: str, gateway: Gateway) -> None:
        self.script, self.endpoint, self.table, self.gateway = script, endpoint, table, gateway

    def library(self, pattern: str, arguments: dict[str, Any]) -> tuple[Any, int]:
        """The library's answer to ``pattern`` (``{"error": code}`` when it throws) and the requests it sent."""
        [asked] = node(self.script, self.endpoint, self.table, "ask", [[pattern, arguments]])
        answer = {"error": asked["error"]} if "error" in asked else asked["data"]
        return answer, sum(asked["sent"].values())

    def check_finds_no_mismatch(self, declaration: Path, capture: Callable[[], str]) -> None:
        """``tablegraph check --full --json`` of ``declaration`` against the whole table reports no error and exits 0
        (``capture`` returns what the command printed)."""
        capture()
        code = main(
            [
                "check",
                "--endpoint-url",
                self.endpoint,
                "--table",
                self.table,
                "--model",
                str(declaration),
                "--full",
                "--json",
            ]
        )
        report = json.loads(capture())
        assert [finding for finding in report["findings"] if finding["severity"] == "error"] == []
        assert (code, report["complete"]) == (0, True)

    def compare(
        self,
        pattern: str,
        arguments: dict[str, Any],
        query: str,
        pick: Callable[[Any], Any],
        servable: Callable[[Any], Any] = lambda answer: answer,
    ) -> None:
        """The gateway answers ``query`` as the library answers ``pattern`` (what ``servable`` keeps of it), in no
        more calls and rounds than the library sent requests one after another, as its explain plans."""
        expected, requests = self.library(pattern, arguments)
        data, (calls, rounds) = answered(self.gateway, query)
        assert present(pick(data)) == servable(expected)
        assert calls <= requests and rounds <= requests
        assert explained(self.gateway, query) == (calls, rounds)


@contextmanager
def served(
    dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway], script: Path, declaration: Path
) -> Iterator[Design]:
    """A table created and filled by ``script``'s ``create``, served from ``declaration``; deleted at the end."""
    table = f"{script.stem}-{uuid.uuid4().hex[:8]}"
    node(script, endpoint, table, "create")
    try:
        with gateway_factory(table, declaration=load_file(declaration)) as gateway:
            yield Design(script, endpoint, table, gateway)
    finally:
        dynamodb.delete_table(TableName=table)
