"""The committed SDL is what the gateway serves, so codegen from the file and from introspection agree."""

from __future__ import annotations

import subprocess
import sys

from schema import SCHEMA
from tests.support.paths import ROOT

SDL = ROOT / "schema" / "schema.graphql"


def test_committed_schema_equals_the_exported_schema() -> None:
    assert SDL.read_text() == SCHEMA.as_str() + "\n", "run `tablegraph export-schema --output schema/schema.graphql`"


def test_export_schema_command_prints_the_schema() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gateway", "export-schema"], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == SDL.read_text()
