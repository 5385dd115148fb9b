"""``tablegraph check --full --json`` on a design's filled table: the findings that are not warnings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.server.cli import main


def check_errors(endpoint: str, table: str, declaration: Path, capsys: pytest.CaptureFixture[str]) -> list[Any]:
    """Every item of ``table`` held against the YAML ``declaration``: each finding of severity other than warning,
    as (kind, subject, problem, examples), and the exit code agreeing with them."""
    capsys.readouterr()
    code = main(
        ["check", "--endpoint-url", endpoint, "--table", table, "--model", str(declaration), "--full", "--json"]
    )
    out, err = capsys.readouterr()
    assert out, err  # a declaration check can't load is said on stderr alone
    report = json.loads(out)
    assert report["mode"] == "full" and report["complete"]
    errors = [
        (one["kind"], one["subject"], one["problem"], one["examples"])
        for one in report["findings"]
        if one["severity"] != "warning"
    ]
    assert code == (1 if errors else 0)
    return errors
