"""A giant workspace's first page of projects, read from eight shards and from one partition: p50 of each."""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import httpx
import uvicorn

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.design.model import Model
from gateway.dynamo.store import table_definition
from gateway.server.app import ACCOUNTING_HEADER, create_app
from gateway.server.local import DynamoDBLocal
from schema.giant import SHARDS, design

QUERY = 'query($first: Int) { workspace(workspaceId: "giant") { projects(first: $first) { nodes { projectId } } } }'


@dataclass(frozen=True)
class Measured:
    name: str
    p50_ms: float
    calls: int
    rounds: int
    first_page: list[str]


def _fill(dynamodb: Any, model: Model, projects: int) -> str:
    """The same workspace and projects, in ``model``'s key design, on a table of its own."""
    table = f"giant-bench-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=table, **table_definition(model))
    workspace, project = model.entities
    items = [model.item(workspace, {"workspaceId": "giant"}, {"displayName": "Giant", "projectCount": projects})]
    items += [
        model.item(project, {"workspaceId": "giant", "projectId": f"p{n:06d}"}, {"title": f"Project {n}"})
        for n in range(projects)
    ]
    resource = boto3.resource(
        "dynamodb",
        endpoint_url=dynamodb.meta.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
    )
    with resource.Table(table).batch_writer() as batch:
        for item in items:
            batch.put_item(Item=item)
    return table


@contextmanager
def _served(endpoint: str, table: str, model: Model) -> Iterator[str]:
    """The gateway on 127.0.0.1, in a thread, until the block ends."""
    settings = Settings(endpoint_url=endpoint, table=table, cursor_secret="bench", auth_open=True)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, declaration=Declaration(model)), host="127.0.0.1", port=0, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the gateway did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def compare(endpoint: str, projects: int, requests: int, first: int) -> list[Measured]:
    """Read the first page ``requests`` times from each design, in alternating turns so drift hits both alike."""
    dynamodb = boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="b", aws_secret_access_key="b"
    )
    designs = {f"sharded over {SHARDS}": design(SHARDS), "one partition": design(1)}
    tables = {name: _fill(dynamodb, model, projects) for name, model in designs.items()}
    try:
        with (
            _served(endpoint, tables[f"sharded over {SHARDS}"], designs[f"sharded over {SHARDS}"]) as sharded,
            _served(endpoint, tables["one partition"], designs["one partition"]) as single,
            httpx.Client(timeout=30) as client,
        ):
            urls = {f"sharded over {SHARDS}": sharded, "one partition": single}
            timings: dict[str, list[float]] = {name: [] for name in urls}
            answers: dict[str, dict[str, Any]] = {}
            for _ in range(requests):
                for name, url in urls.items():
                    started = time.perf_counter()
                    response = client.post(
                        f"{url}/graphql",
                        json={"query": QUERY, "variables": {"first": first}},
                        headers={ACCOUNTING_HEADER: "1"},
                    )
                    timings[name].append((time.perf_counter() - started) * 1e3)
                    answers[name] = response.json()
    finally:
        for table in tables.values():
            dynamodb.delete_table(TableName=table)
    return [
        Measured(
            name,
            statistics.median(timings[name]),
            answers[name]["extensions"]["dynamodb"]["calls"],
            answers[name]["extensions"]["dynamodb"]["rounds"],
            [node["projectId"] for node in answers[name]["data"]["workspace"]["projects"]["nodes"]],
        )
        for name in urls
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", help="a running DynamoDB (default: a DynamoDB Local of its own)")
    parser.add_argument("--projects", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--first", type=int, default=20)
    arguments = parser.parse_args()
    sizes = arguments.projects, arguments.requests, arguments.first
    if arguments.endpoint is not None:
        results = compare(arguments.endpoint, *sizes)
    else:
        with DynamoDBLocal() as local:
            results = compare(local.endpoint_url, *sizes)
    print(f"first: {arguments.first} of {arguments.projects} projects, {arguments.requests} requests each\n")
    print("| read | p50 ms | DynamoDB calls | rounds |")
    print("|---|---:|---:|---:|")
    for one in results:
        print(f"| {one.name} | {one.p50_ms:.2f} | {one.calls} | {one.rounds} |")
    sharded, single = results
    print(f"\nsharded ÷ one partition (p50): {sharded.p50_ms / single.p50_ms:.2f}x")


# From the repository root: python -m benchmarks.sharding [--endpoint URL] [--projects N] [--requests N]
if __name__ == "__main__":
    main()
