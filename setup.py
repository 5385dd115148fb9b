"""The build's two needs that pyproject.toml cannot say: the package list with the example designs under our own
name, and GraphiQL's files, fetched from the npm packages package-lock.json pins when a wheel or sdist is built
without them (a clean clone has none: scripts/setup copies them for a checkout)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.errors import SetupError

ROOT = Path(__file__).resolve().parent
GRAPHIQL = ROOT / "gateway" / "server" / "static" / "graphiql"
# Keep in step with scripts/graphiql-assets and gateway/server/playground.py.
GRAPHIQL_FILES = (
    "react.production.min.js",
    "react-dom.production.min.js",
    "graphiql.min.js",
    "graphiql.min.css",
    "plugin-explorer.umd.js",
    "plugin-explorer.css",
)


def _fetch_graphiql() -> None:
    if all((GRAPHIQL / name).is_file() for name in GRAPHIQL_FILES):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SetupError(
            "GraphiQL's files are not in gateway/server/static/graphiql and npm was not found to fetch them: "
            "install Node.js and npm (on Debian or Ubuntu: `apt-get install nodejs npm`) and build again, "
            "or run scripts/setup first."
        )
    print("fetching GraphiQL's files with `npm ci --omit=dev` (the versions package-lock.json pins)", flush=True)
    with tempfile.TemporaryDirectory(prefix="tablegraph-graphiql-") as scratch:
        for name in ("package.json", "package-lock.json"):
            shutil.copy(ROOT / name, scratch)
        subprocess.run(
            [npm, "ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=scratch,
            check=True,
            stdin=subprocess.DEVNULL,
        )
        subprocess.run(
            ["bash", str(ROOT / "scripts" / "graphiql-assets"), str(Path(scratch) / "node_modules")], check=True
        )


class BuildPy(build_py):
    def run(self) -> None:
        # An editable install serves the checkout's files, which scripts/setup copies.
        if not self.editable_mode:
            _fetch_graphiql()
        super().run()


class Sdist(sdist):
    def run(self) -> None:
        _fetch_graphiql()
        super().run()


setup(
    # The example designs are the folder schema/ in the repository; installed, a top-level `schema` would clash
    # with PyPI's library of that name, so they install as tablegraph_designs (gateway.design.declaration.load
    # takes `schema.<design>` for either).
    packages=[*find_packages(include=["gateway", "gateway.*"]), "tablegraph_designs"],
    package_dir={"tablegraph_designs": "schema"},
    cmdclass={"build_py": BuildPy, "sdist": Sdist},
)
