"""``python -m benchmarks.live``: how fast a write reaches a subscriber, and what one change costs at 1,000 of them.

The gateway runs in a process of its own (``tablegraph serve``) on DynamoDB Local; the subscribers are WebSocket
clients in this process, and the writes are plain boto3 calls, as another writer of the table would make them.

- latency: from the moment a PutItem is sent to the moment its event reaches the subscriber, one write at a time;
- fan-out: N subscribers of one collection, each selecting the item and a related one; the gateway's resident
  memory before and after they subscribe, and its CPU time per change delivered to all of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import time
import urllib.request
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

import boto3
import psutil
from websockets.asyncio.client import ClientConnection, connect

from benchmarks.servers import Server, free_port, gateway_command, serve
from gateway.dynamo.store import table_definition
from gateway.server.local import DynamoDBLocal
from schema.model import MODEL

SUBSCRIPTION = """subscription($ws: ID!) {
  workspaceProjectsChanged(workspaceId: $ws) { kind position node { title workspace { displayName } } }
}"""


async def _subscriber(url: str, workspace: str) -> ClientConnection:
    connection = await connect(url, subprotocols=["graphql-transport-ws"], max_queue=None)  # type: ignore[list-item]
    await connection.send(json.dumps({"type": "connection_init"}))
    await connection.recv()
    payload = {"query": SUBSCRIPTION, "variables": {"ws": workspace}}
    await connection.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))
    return connection


def _put(dynamodb: Any, table: str, workspace: str, project: str, title: str) -> None:
    item = {"PK": {"S": f"WS#{workspace}"}, "SK": {"S": f"PROJ#{project}"}, "title": {"S": title}}
    dynamodb.put_item(TableName=table, Item=item)


async def _warm(dynamodb: Any, table: str, workspace: str, connections: Sequence[ClientConnection]) -> None:
    """Write until every subscriber has an event: the gateway reads the stream and holds every subscription."""
    for n in range(200):
        _put(dynamodb, table, workspace, f"warm-{n}", "warm")
        try:
            await asyncio.wait_for(asyncio.gather(*(one.recv() for one in connections)), 1.0)
            return
        except TimeoutError:
            continue
    raise RuntimeError("the subscribers never received an event")


async def _latency(url: str, dynamodb: Any, table: str, events: int) -> list[float]:
    connection = await _subscriber(url, "ws-latency")
    try:
        await _warm(dynamodb, table, "ws-latency", [connection])
        seconds = []
        for n in range(events):
            # Writes come at any moment of the reader's polling cycle, not right after it read the last one.
            await asyncio.sleep(random.uniform(0, 0.5))
            sent = time.perf_counter()
            _put(dynamodb, table, "ws-latency", f"p-{n}", str(n))
            while True:
                message = json.loads(await connection.recv())
                if message["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"] == str(n):
                    break
            seconds.append(time.perf_counter() - sent)
        return seconds
    finally:
        await connection.close()


def _rss(server: Server) -> int:
    process = psutil.Process(server.process.pid)
    return sum(one.memory_info().rss for one in [process, *process.children(recursive=True)])


async def _fan_out(
    url: str, server: Server, dynamodb: Any, table: str, subscribers: int, events: int
) -> dict[str, float]:
    dynamodb.put_item(TableName=table, Item={"PK": {"S": "WS#ws-fan"}, "SK": {"S": "META"}, "displayName": {"S": "F"}})
    await asyncio.sleep(1)
    before = _rss(server)
    connections = list(await asyncio.gather(*(_subscriber(url, "ws-fan") for _ in range(subscribers))))
    try:
        await _warm(dynamodb, table, "ws-fan", connections)
        await asyncio.sleep(1)
        held = _rss(server)
        batches = _batch_gets(server)
        cpu = server.cpu_seconds()
        started = time.perf_counter()
        for n in range(events):
            _put(dynamodb, table, "ws-fan", f"p-{n}", str(n))
        await asyncio.gather(*(_drain(one, events) for one in connections))
        elapsed = time.perf_counter() - started
        spent = server.cpu_seconds() - cpu
        batches = _batch_gets(server) - batches
    finally:
        await asyncio.gather(*(one.close() for one in connections))
    return {
        "subscribers": subscribers,
        "events": events,
        "memory_per_subscriber_kib": (held - before) / subscribers / 1024,
        "memory_total_mib": (held - before) / 2**20,
        "cpu_ms_per_event": spent / events * 1000,
        "cpu_us_per_event_per_subscriber": spent / events / subscribers * 1e6,
        "deliveries_per_second": events * subscribers / elapsed,
        "batch_gets_per_event": batches / events,
    }


def _batch_gets(server: Server) -> float:
    """The BatchGetItem calls the gateway has made, from its metrics."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=10) as response:
        text = response.read().decode()
    found = re.search(r'^tablegraph_dynamodb_calls_total\{operation="BatchGetItem"\} (\S+)$', text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def _drain(connection: ClientConnection, events: int) -> None:
    for _ in range(events):
        await connection.recv()


def _percentile(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percent / 100 * (len(ordered) - 1)))]


async def _main(endpoint: str | None, subscribers: int, events: int) -> None:
    with ExitStack() as stack:
        url_ = endpoint or stack.enter_context(DynamoDBLocal()).endpoint_url
        dynamodb = boto3.client(
            "dynamodb",
            endpoint_url=url_,
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )
        table = f"live-bench-{uuid.uuid4().hex[:8]}"
        dynamodb.create_table(TableName=table, **table_definition(MODEL))
        port = free_port()
        server = stack.enter_context(serve([*gateway_command(url_, table, port, 1), "--auth-open"], port))
        server.wait_until_ready()
        ws = server.url.replace("http://", "ws://") + "/graphql"
        dynamodb.put_item(TableName=table, Item={"PK": {"S": "WS#ws-latency"}, "SK": {"S": "META"}})
        latency = await _latency(ws, dynamodb, table, events)
        fan = await _fan_out(ws, server, dynamodb, table, subscribers, events)
        dynamodb.delete_table(TableName=table)
    print("## Subscriptions: stream to client\n")
    print(f"- latency over {events} writes, one at a time (PutItem sent → event received):")
    print(f"  p50 {_percentile(latency, 50) * 1000:.0f} ms, p99 {_percentile(latency, 99) * 1000:.0f} ms,")
    print(f"  mean {statistics.fmean(latency) * 1000:.0f} ms (the reader polls each shard every 250 ms when idle)")
    print(f"- {fan['subscribers']:.0f} subscribers of one collection in one gateway process, {events} changes:")
    print(f"  memory {fan['memory_total_mib']:.1f} MiB held, {fan['memory_per_subscriber_kib']:.1f} KiB per subscriber")
    print(
        f"  CPU {fan['cpu_ms_per_event']:.0f} ms per change delivered to all, "
        f"{fan['cpu_us_per_event_per_subscriber']:.0f} µs per change per subscriber; "
        f"{fan['deliveries_per_second']:.0f} deliveries/s"
    )
    print(f"  related items read: {fan['batch_gets_per_event']:.2f} BatchGetItem per change, for all subscribers")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.live", description=__doc__)
    parser.add_argument("--endpoint-url", help="a DynamoDB Local to use; by default one is started in memory")
    parser.add_argument("--subscribers", type=int, default=1000, help="concurrent subscribers (default: 1000)")
    parser.add_argument("--events", type=int, default=50, help="writes measured (default: 50)")
    args = parser.parse_args(argv)
    asyncio.run(_main(args.endpoint_url, args.subscribers, args.events))


if __name__ == "__main__":
    main()
