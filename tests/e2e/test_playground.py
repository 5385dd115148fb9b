"""GraphiQL in a real browser: Debian's headless Chromium, driven by playwright-core, against a live gateway."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from schema import DEMO
from tests.support.browser import LAUNCH
from tests.support.gateway import Gateway
from tests.support.paths import ROOT

QUERY = """{
  organization(orgName: "acme") {
    id
    name
    users(first: 3) {
      nodes {
        id
        username
      }
    }
  }
}"""
# Set to a path (docs/playground.png: the getting-started page's) to keep the screenshot the test takes, of the
# demo's data: `TABLEGRAPH_PLAYGROUND_SCREENSHOT=docs/playground.png scripts/test -k graphiql_runs`.
SCREENSHOT_ENV = "TABLEGRAPH_PLAYGROUND_SCREENSHOT"

# Opens the page with the query in its URL, runs it with the toolbar's button, and prints what happened as JSON.
_DRIVER = (
    """
const { chromium } = require("playwright-core");
const [url, screenshot] = process.argv.slice(1);
(async () => {"""
    + LAUNCH
    + """  const seen = { requests: [], problems: [], answers: [] };
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    page.on("request", (request) => seen.requests.push(request.url()));
    page.on("requestfailed", (request) => seen.problems.push("failed: " + request.url()));
    page.on("pageerror", (error) => seen.problems.push("page error: " + error.message));
    page.on("console", (message) => {
      if (message.type() === "error") seen.problems.push("console: " + message.text());
    });
    page.on("response", async (response) => {
      if (response.request().method() === "POST") seen.answers.push(await response.text());
    });
    await page.goto(url, { waitUntil: "load" });
    await page.locator(".graphiql-execute-button").click();
    const result = page.locator(".result-window");
    await result.getByText('"username"').first().waitFor();
    seen.shown = await result.innerText();
    await page.screenshot({ path: screenshot });
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(seen));
})();
"""
)


def _needed(found: object, what: str, *, skippable: bool) -> None:
    if found:
        return
    if skippable and not os.environ.get("CI"):
        pytest.skip(f"{what} is not installed (on Debian: apt-get install chromium)")
    pytest.fail(f"{what} is not installed (.ci/run installs Chromium, scripts/setup dev installs playwright-core)")


@pytest.fixture
def browse() -> Callable[[str, Path], dict[str, Any]]:
    chromium = shutil.which("chromium")
    _needed(chromium, "Chromium", skippable=True)
    node = shutil.which("node")
    _needed(node, "Node.js", skippable=False)
    _needed((ROOT / "node_modules" / "playwright-core").is_dir(), "playwright-core", skippable=False)

    def run(url: str, screenshot: Path) -> dict[str, Any]:
        done = subprocess.run(
            [str(node), "-e", _DRIVER, url, str(screenshot)],
            cwd=ROOT,
            env={**os.environ, "CHROMIUM": str(chromium)},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        seen: dict[str, Any] = json.loads(done.stdout)
        return seen

    return run


@pytest.fixture(scope="module")
def demo(served: Callable[..., Gateway]) -> Gateway:
    return served(DEMO, seeded=True)


def test_graphiql_runs_a_query_in_chromium_with_nothing_fetched_from_elsewhere(
    demo: Gateway,
    browse: Callable[[str, Path], dict[str, Any]],
    tmp_path: Path,
) -> None:
    screenshot = Path(os.environ.get(SCREENSHOT_ENV) or tmp_path / "playground.png")
    gateway = demo
    expected = gateway.query(QUERY)["data"]
    seen = browse(f"{gateway.url}/graphql?{urlencode({'q': QUERY})}", screenshot)
    assert {urlsplit(url).hostname for url in seen["requests"]} == {"127.0.0.1"}, seen["requests"]
    assert seen["problems"] == []
    answered = [json.loads(answer)["data"] for answer in seen["answers"]]
    assert [data for data in answered if "__schema" not in data] == [expected]  # besides GraphiQL's introspection
    usernames = [user["username"] for user in expected["organization"]["users"]["nodes"]]
    assert usernames
    for shown in (expected["organization"]["name"], *usernames):
        assert f'"{shown}"' in seen["shown"]
    assert screenshot.read_bytes().startswith(b"\x89PNG")


def test_graphiql_files_are_served_with_their_types_for_a_year(gateway: Gateway) -> None:
    page = gateway.http.get("/graphql", headers={"Accept": "text/html"})
    policy = page.headers["content-security-policy"]
    assert "https:" not in policy and "unsafe" not in policy
    local = re.findall(r'<(?:script|link)\b[^>]*(?:src|href)="static/graphiql/[^>]*>', page.text)
    assert len(local) == 6
    assert all('integrity="sha384-' in tag for tag in local)
    for name, media in (("graphiql.min.js", "text/javascript"), ("graphiql.min.css", "text/css")):
        asset = gateway.http.get(f"/static/graphiql/{name}")
        assert asset.status_code == 200
        assert asset.headers["content-type"].startswith(media)
        assert "max-age=31536000" in asset.headers["cache-control"]
    assert gateway.http.get("/static/graphiql/nosuch.js").status_code == 404


def test_a_link_with_query_opens_the_playground_with_it_and_a_client_gets_it_run(
    demo: Gateway, browse: Callable[[str, Path], dict[str, Any]], tmp_path: Path
) -> None:
    link = f"/graphql?{urlencode({'query': QUERY})}"
    page = demo.http.get(link, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.headers["content-type"].startswith("text/html")
    expected = demo.http.get(link, headers={"Accept": "application/json"}).json()["data"]
    seen = browse(f"{demo.url}{link}", tmp_path / "playground.png")
    assert seen["problems"] == []
    assert [json.loads(answer)["data"] for answer in seen["answers"] if "__schema" not in answer] == [expected]
