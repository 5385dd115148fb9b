"""``serve --workers N``: several processes on one port that behave as one server."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import psutil

from benchmarks import servers
from gateway.config import Settings


def test_settings_reach_worker_processes_unchanged() -> None:
    settings = Settings(
        port=8123, endpoint_url="http://127.0.0.1:9", table="t", data_dir=Path("/tmp/x"), workers=3, fast_decode=False
    )
    assert Settings.from_env(settings.environment()) == settings
    # The generated cursor secret travels too: a cursor signed by one worker is valid on the others.
    assert Settings.from_env(Settings().environment()).cursor_secret != ""


def test_serve_with_two_workers_pages_through_a_collection_on_any_of_them(endpoint: str, contract_table: str) -> None:
    port = servers.free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEGRAPH_")}
    command = servers.gateway_command(endpoint, contract_table, port, workers=2)
    with servers.serve(command, port, {**env, "TABLEGRAPH_AUTH_OPEN": "1"}) as server:
        server.wait_until_ready()
        children = psutil.Process(server.process.pid).children()
        assert sum("spawn_main" in " ".join(child.cmdline()) for child in children) == 2
        seen, after = [], None
        while True:
            # A new connection per page, so pages are served by whichever worker accepts it.
            body = httpx.post(
                f"{server.url}/graphql",
                json={
                    "query": 'query($after: String) { organization(orgName: "o1") { users(first: 1, after: $after) '
                    "{ nodes { username } pageInfo { hasNextPage endCursor } } } }",
                    "variables": {"after": after},
                },
                timeout=10,
            ).json()
            assert "errors" not in body, body
            users = body["data"]["organization"]["users"]
            seen += [node["username"] for node in users["nodes"]]
            if not users["pageInfo"]["hasNextPage"]:
                break
            after = users["pageInfo"]["endCursor"]
    assert seen == [f"user-{n:02d}" for n in range(1, 13)]
