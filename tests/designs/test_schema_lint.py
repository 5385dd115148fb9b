"""The SDL passes graphql-eslint's schema-recommended and schema-relay rules (eslint.config.mjs) with zero findings:
the committed schema/schema.graphql and the other designs' (schema.orders:ORDERS, schema.library:LIBRARY,
schema.giant:GIANT, schema.business:BUSINESS, schema.online_shop:SHOP), as `.ci/run` lints them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

ESLINT = ROOT / "node_modules" / ".bin" / "eslint"


def _eslint(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> list[str]:
    """Run the repository's eslint with its config and return every finding as `path:line:col rule message`."""
    if not ESLINT.exists():
        if not os.environ.get("CI"):
            pytest.skip("eslint is not installed (scripts/setup dev installs the devDependencies)")
        pytest.fail("eslint is not in node_modules: CI must run scripts/setup dev")
    done = subprocess.run(
        [str(ESLINT), "--max-warnings", "0", "--format", "json", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )
    assert done.stdout.strip(), f"eslint printed no report (exit {done.returncode}): {done.stderr}"
    findings = [
        f"{result['filePath']}:{m.get('line')}:{m.get('column')} {m.get('ruleId')}: {m['message']}"
        for result in json.loads(done.stdout)
        for m in result["messages"]
    ]
    assert done.returncode == (1 if findings else 0), done.stderr
    return findings


def test_committed_schema_has_no_lint_findings() -> None:
    assert _eslint("schema/schema.graphql") == []


@pytest.mark.parametrize(
    "design", ["orders:ORDERS", "library:LIBRARY", "giant:GIANT", "business:BUSINESS", "online_shop:SHOP"]
)
def test_other_designs_schemas_have_no_lint_findings(tmp_path: Path, design: str) -> None:
    name = design.partition(":")[0]
    sdl = tmp_path / f"{name}.graphql"
    subprocess.run(
        [sys.executable, "-m", "gateway", "export-schema", "--model", f"schema.{design}", "--output", str(sdl)],
        cwd=ROOT,
        check=True,
        timeout=60,
    )
    environment = {"TABLEGRAPH_LINT_SCHEMA": str(sdl)}
    findings = _eslint("--stdin", "--stdin-filename", f"{name}.graphql", stdin=sdl.read_text(), env=environment)
    assert findings == []


def test_the_lint_reports_findings(tmp_path: Path) -> None:
    """A schema that breaks the rules fails, so a zero above is the lint's verdict, not a lint that saw nothing."""
    sdl = tmp_path / "bad.graphql"
    sdl.write_text((ROOT / "schema" / "schema.graphql").read_text() + "\ntype Orphan_type {\n  x: Int\n}\n")
    findings = _eslint(
        "--stdin", "--stdin-filename", "bad.graphql", stdin=sdl.read_text(), env={"TABLEGRAPH_LINT_SCHEMA": str(sdl)}
    )
    assert any("no-unreachable-types" in finding for finding in findings), findings
    assert any("naming-convention" in finding for finding in findings), findings
