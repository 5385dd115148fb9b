"""A design's own model library, run with Node on its own npm package: the reference a corpus design is held to."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

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
