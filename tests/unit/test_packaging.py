"""What the package says about itself: one version, from pyproject.toml, wherever it is read."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import version

from tests.support.paths import ROOT


def _declared() -> str:
    declared: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return declared


def test_the_installed_metadata_and_the_command_report_the_declared_version() -> None:
    declared = _declared()
    assert version("tablegraph") == declared
    shown = subprocess.run(
        [sys.executable, "-m", "gateway", "--version"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert shown.strip() == f"tablegraph {declared}"


def test_the_readme_announces_the_declared_version() -> None:
    announced = re.findall(r"\*\*(\d+\.\d+) breaks the API of", (ROOT / "README.md").read_text())
    assert announced, "the README announces no version"
    major_minor = ".".join(_declared().split(".")[:2])
    assert announced == [major_minor]
