"""``python -m benchmarks.live``: how fast a write reaches its subscribers, and what one change costs at scale.

The gateway runs in a process of its own (``tablegraph serve``, one worker) on DynamoDB Local; the subscribers are
WebSocket clients in this process (offering permessage-deflate, as browsers do: the gateway accepts it only with
``--compression``, ``TABLEGRAPH_WS_COMPRESSION``), and the writes are plain boto3 calls, as another writer of the
table would make them.

- latency: from the moment a PutItem is sent to the moment its event reaches one subscriber, one write at a time;
- fan-out, for each number of subscribers: N subscribers of one collection, each selecting the item and a related
  one, all with the same selection (``shared``: they share one resolution per change); then each with a document
  of its own (``own document``: an alias each, so a run and a kept document each); then all with the same document,
  each watching a workspace of its own (``own workspace``: variables of its own, so a run each, as when every user
  watches their own data). The gateway's resident memory before they subscribe, once they have (idle), and once
  each has been served a change (served: what the process kept of serving them); its CPU time per change
  delivered, less what it spends idle (polling the stream) over as long; and the time from each PutItem to each
  subscriber's receipt of its event. Writes come one at a time, at a random moment of the reader's polling cycle;
  with a workspace each, a round writes one item to each workspace (BatchWriteItem), and each subscriber's latency
  is taken from the call that wrote its item.
- bandwidth: the bytes of one subscriber's events as text frames, and as permessage-deflate sends them when it is
  negotiated (uvicorn's settings: a 12-bit window, memLevel 5, the context kept from one message to the next).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
import uuid
import zlib
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import psutil
from websockets.asyncio.client import ClientConnection, connect

from benchmarks.report import machine
from benchmarks.servers import Server, free_port, gateway_command, serve
from gateway.dynamo.store import table_definition
from gateway.server.local import DynamoDBLocal
from schema.model import MODEL

SUBSCRIPTION = """subscription($ws: ID!) {
  workspaceProjectsChanged(workspaceId: $ws) { kind position node { title workspace { displayName } } }
}"""
POLL = 0.25
"""How often the gateway's reader polls a shard when idle (gateway/live/relay.py)."""
_CONNECTING = 100
"""Subscribers connecting at once."""
CPU_TARGET_US = 100.0
MEMORY_TARGET_KIB = 20.0
SHARED, OWN_DOCUMENT, OWN_WORKSPACE = "shared", "own document", "own workspace"
"""How the subscribers of a fan-out select: one selection; a document each; the same document, a workspace each."""


@dataclass(frozen=True)
class FanOut:
    subscribers: int
    selections: str
    """SHARED, OWN_DOCUMENT or OWN_WORKSPACE."""
    events: int
    memory_per_subscriber_kib: float
    """Resident memory per subscriber once all are subscribed, before any change: what an idle one holds."""
    memory_total_mib: float
    cpu_ms_per_event: float
    cpu_us_per_event_per_subscriber: float
    p50_ms: float
    p99_ms: float
    text_bytes: int = 0
    """One subscriber's events as text frames."""
    deflated_bytes: int = 0
    """The same events as permessage-deflate would send them."""
    served_memory_per_subscriber_kib: float = 0.0
    """Resident memory per subscriber once each has been served a change: with what the process kept of serving
    them (for runs of their own, a burst of a resolution each at once)."""


def _selection(n: int | None) -> str:
    """The shared selection, or (given ``n``) one that only subscriber ``n`` has: an alias of its own."""
    return SUBSCRIPTION if n is None else SUBSCRIPTION.replace("kind position", f"kind position at{n}: position")


async def _subscriber(url: str, workspace: str, query: str = SUBSCRIPTION) -> ClientConnection:
    connection = await connect(url, subprotocols=["graphql-transport-ws"], max_queue=None, open_timeout=120)  # type: ignore[list-item]
    await connection.send(json.dumps({"type": "connection_init"}))
    await connection.recv()
    payload = {"query": query, "variables": {"ws": workspace}}
    await connection.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))
    return connection


def _project(workspace: str, project: str, title: str) -> dict[str, Any]:
    return {"PK": {"S": f"WS#{workspace}"}, "SK": {"S": f"PROJ#{project}"}, "title": {"S": title}}


def _put(dynamodb: Any, table: str, workspace: str, project: str, title: str) -> None:
    dynamodb.put_item(TableName=table, Item=_project(workspace, project, title))


async def _warm(dynamodb: Any, table: str, workspaces: Sequence[str], connections: Sequence[ClientConnection]) -> None:
    """Write (an item to each workspace) until every subscriber has an event (the gateway reads the stream and holds
    every subscription), then once more, read by all: what is written next is the next thing each receives."""
    first = [asyncio.ensure_future(one.recv()) for one in connections]
    # Long enough for one change to reach them all, or writes pile up faster than they are delivered (10,000
    # selections of their own take seconds a change).
    patience = 2.0 + len(connections) / 500
    for n in range(200):
        _write(dynamodb, table, [_project(one, f"warm-{n}", "warm") for one in workspaces])
        _, waiting = await asyncio.wait(first, timeout=patience)
        if not waiting:
            break
    else:
        raise RuntimeError("the subscribers never received an event")
    await _round(dynamodb, table, workspaces, connections, "warm-last")


async def _latency(url: str, dynamodb: Any, table: str, events: int) -> list[float]:
    connection = await _subscriber(url, "ws-latency")
    try:
        await _warm(dynamodb, table, ["ws-latency"], [connection])
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


@dataclass(frozen=True)
class Pauses:
    """How long a fan-out waits for the gateway to settle (after writing its workspaces, after the last
    subscription, after warming), and how long each window is that measures its idle CPU."""

    settle: float = 1.0
    idle: float = 3.0


QUICK = Pauses(settle=0.25, idle=0.5)
"""``--quick``: the same measures over shorter waits, with noisier figures (a smoke test of the benchmark)."""


async def _fan_out(
    url: str,
    server: Server,
    dynamodb: Any,
    table: str,
    subscribers: int,
    events: int,
    selections: str,
    pauses: Pauses,
) -> FanOut:
    base = f"ws-fan-{uuid.uuid4().hex[:6]}"
    workspaces = [f"{base}-{n}" for n in range(subscribers)] if selections == OWN_WORKSPACE else [base]
    _write(dynamodb, table, [{"PK": {"S": f"WS#{one}"}, "SK": {"S": "META"}} for one in workspaces])
    await asyncio.sleep(pauses.settle)
    before = _rss(server)
    connections: list[ClientConnection] = []
    try:
        for first in range(0, subscribers, _CONNECTING):
            batch = range(first, min(subscribers, first + _CONNECTING))
            own = selections == OWN_DOCUMENT
            subscribing = [
                _subscriber(url, workspaces[n % len(workspaces)], _selection(n if own else None)) for n in batch
            ]
            connections += await asyncio.gather(*subscribing)
        await asyncio.sleep(2 * pauses.settle + subscribers / 1000)  # the last subscriptions set up
        idle = _rss(server)
        await _warm(dynamodb, table, workspaces, connections)
        await asyncio.sleep(pauses.settle)
        held = _rss(server)
        idle_before = _idle_cpu(server, pauses.idle)
        cpu, started = server.cpu_seconds(), time.perf_counter()
        seconds: list[float] = []
        texts: list[str] = []
        for n in range(events):
            await asyncio.sleep(random.uniform(0, 2 * POLL))
            if selections == OWN_WORKSPACE:
                received = await _round(dynamodb, table, workspaces, connections, str(n))
            else:
                sent = time.perf_counter()
                _put(dynamodb, table, base, f"p-{n}", str(n))
                received = await asyncio.gather(*(_received(one, sent) for one in connections))
            seconds += [after for after, _ in received]
            texts.append(received[0][1])
        spent, took = server.cpu_seconds() - cpu, time.perf_counter() - started
        # The lower of two idle rates: one window can hold a full garbage collection of every connection's objects
        # (taken for idle, it made a change's cost come out negative at 10,000 subscribers); the lower one
        # overstates what a change costs rather than understate it.
        spent -= min(idle_before, _idle_cpu(server, pauses.idle)) * took
    finally:
        await asyncio.gather(*(one.close() for one in connections))
    # With a workspace each, a round is a change for every subscriber: one change per subscriber resolved.
    changes = events * (subscribers if selections == OWN_WORKSPACE else 1)
    return FanOut(
        subscribers,
        selections,
        events,
        memory_per_subscriber_kib=(idle - before) / subscribers / 1024,
        memory_total_mib=(idle - before) / 2**20,
        cpu_ms_per_event=spent / changes * 1000,
        cpu_us_per_event_per_subscriber=spent / events / subscribers * 1e6,
        p50_ms=_percentile(seconds, 50) * 1000,
        p99_ms=_percentile(seconds, 99) * 1000,
        text_bytes=sum(len(text.encode()) for text in texts),
        deflated_bytes=_deflated(texts),
        served_memory_per_subscriber_kib=(held - before) / subscribers / 1024,
    )


def _write(dynamodb: Any, table: str, items: Sequence[dict[str, Any]]) -> list[float]:
    """Write ``items`` 25 to a BatchWriteItem call; when each call was sent, per item."""
    sent: list[float] = []
    for first in range(0, len(items), 25):
        chunk = items[first : first + 25]
        at = time.perf_counter()
        requests: Any = [{"PutRequest": {"Item": item}} for item in chunk]
        while requests:  # DynamoDB Local leaves none unprocessed, but the contract allows it
            answer = dynamodb.batch_write_item(RequestItems={table: requests})
            requests = answer.get("UnprocessedItems", {}).get(table, [])
        sent += [at] * len(chunk)
    return sent


async def _round(
    dynamodb: Any, table: str, workspaces: Sequence[str], connections: Sequence[ClientConnection], title: str
) -> list[tuple[float, str]]:
    """One item written to each workspace, then each subscriber's event: its latency from the call that wrote its
    item, and its text."""
    items = [_project(one, title, title) for one in workspaces]
    receiving = [asyncio.ensure_future(_until_text(one, title)) for one in connections]
    sent = _write(dynamodb, table, items)
    received = await asyncio.gather(*receiving)
    # Subscriber n watches workspace n, or all watch the one workspace.
    return [(at - sent[n % len(sent)], text) for n, (at, text) in enumerate(received)]


async def _until_text(connection: ClientConnection, title: str) -> tuple[float, str]:
    """When the event of the item titled ``title`` arrived, and its text (the subscriber's own: one per round)."""
    while True:
        text = str(await connection.recv())
        at = time.perf_counter()
        if json.loads(text)["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"] == title:
            return at, text


def _deflated(texts: Sequence[str]) -> int:
    """The bytes of ``texts`` as permessage-deflate sends them, one message after another on one connection."""
    compressor = zlib.compressobj(wbits=-12, memLevel=5)
    total = 0
    for text in texts:
        # Each message ends with a sync flush, whose trailing 00 00 ff ff is not sent (RFC 7692).
        total += len(compressor.compress(text.encode()) + compressor.flush(zlib.Z_SYNC_FLUSH)) - 4
    return total


def _idle_cpu(server: Server, seconds: float) -> float:
    """The gateway's CPU seconds per second while no change arrives: its reader polling the stream."""
    cpu = server.cpu_seconds()
    time.sleep(seconds)
    return (server.cpu_seconds() - cpu) / seconds


async def _received(connection: ClientConnection, sent: float) -> tuple[float, str]:
    text = await connection.recv()
    return time.perf_counter() - sent, str(text)


def _percentile(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percent / 100 * (len(ordered) - 1)))]


async def _main(
    endpoint: str | None,
    subscribers: Sequence[int],
    events: int,
    distinct_events: int,
    compression: bool,
    pauses: Pauses,
) -> None:
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
        dynamodb.put_item(TableName=table, Item={"PK": {"S": "WS#ws-latency"}, "SK": {"S": "META"}})
        with _gateway(url_, table, compression) as (server, ws):
            latency = await _latency(ws, dynamodb, table, events)
        measures = [(count, SHARED, events) for count in subscribers]
        if distinct_events:
            own = (OWN_DOCUMENT, OWN_WORKSPACE)
            measures += [(count, one, distinct_events) for count in subscribers for one in own]
        runs = []
        for count, selections, writes in sorted(measures, key=lambda measure: measure[0]):
            # A gateway of its own each: memory freed by an earlier fan-out, which the process keeps, would be
            # reused by the next one and hide what it costs.
            with _gateway(url_, table, compression) as (server, ws):
                runs.append(await _fan_out(ws, server, dynamodb, table, count, writes, selections, pauses))
        dynamodb.delete_table(TableName=table)
    print(report(latency, runs, compression))


@contextmanager
def _gateway(endpoint: str, table: str, compression: bool) -> Iterator[tuple[Server, str]]:
    """A gateway (one worker) over ``table``, and its WebSocket URL."""
    env = {"TABLEGRAPH_WS_COMPRESSION": "1" if compression else "0"}
    port = free_port()
    with serve([*gateway_command(endpoint, table, port, 1), "--auth-open"], port, env) as server:
        server.wait_until_ready()
        yield server, server.url.replace("http://", "ws://") + "/graphql"


def report(latency: list[float], runs: Sequence[FanOut], compression: bool = False) -> str:
    """The figures as markdown, with the targets each meets."""
    p50, p99 = _percentile(latency, 50) * 1000, _percentile(latency, 99) * 1000
    lines = [
        "## Subscriptions: stream to client",
        "",
        f"Machine: {machine()}.",
        "",
        f"permessage-deflate: {'negotiated' if compression else 'off (offered by the clients, declined)'}.",
        "",
        f"- one subscriber, {len(latency)} writes one at a time (PutItem sent → event received): p50 {p50:.0f} ms, "
        f"p99 {p99:.0f} ms, mean {statistics.fmean(latency) * 1000:.0f} ms; the reader polls each shard every "
        f"{POLL * 1000:.0f} ms when idle: a write waits {POLL * 500:.0f} ms for it on average "
        f"({_share(p50, POLL / 2)} of p50) and up to {POLL * 1000:.0f} ms (at most {_share(p99, POLL)} of p99)",
        "",
        "| subscribers | selections | changes | memory per subscriber, idle / served | CPU per change "
        "| CPU per change per subscriber | stream to client p50 | p99 | polling's share of p50 / p99 |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        changes = run.events * (run.subscribers if run.selections == OWN_WORKSPACE else 1)
        lines.append(
            f"| {run.subscribers:,} | {run.selections} | {changes:,} "
            f"| {run.memory_per_subscriber_kib:.1f} / {run.served_memory_per_subscriber_kib:.1f} KiB "
            f"| {run.cpu_ms_per_event:.0f} ms "
            f"| {run.cpu_us_per_event_per_subscriber:.0f} µs | {run.p50_ms:.0f} ms | {run.p99_ms:.0f} ms "
            f"| {_share(run.p50_ms, POLL / 2)} / ≤ {_share(run.p99_ms, POLL)} |"
        )
    lines += ["", *_targets(runs)]
    return "\n".join(lines)


def _share(latency_ms: float, waiting: float) -> str:
    """The part of ``latency_ms`` that ``waiting`` seconds for the reader's next poll can be."""
    return f"{min(1.0, waiting * 1000 / latency_ms):.0%}"


def _targets(runs: Sequence[FanOut]) -> list[str]:
    shared = [run for run in runs if run.selections == SHARED]
    # A document of its own per subscriber is a document kept per subscriber (parsed, validated, planned): what it
    # costs is measured, and must grow linearly, but is not what an idle subscriber of a known operation costs.
    held = [run for run in runs if run.selections != OWN_DOCUMENT]
    cpu = max(run.cpu_us_per_event_per_subscriber for run in shared)
    memory = max(run.memory_per_subscriber_kib for run in held)
    served = max(run.served_memory_per_subscriber_kib for run in held)
    lines = [
        f"- target CPU ≤ {CPU_TARGET_US:.0f} µs per change per subscriber, shared selections: "
        f"{'met' if cpu <= CPU_TARGET_US else 'missed'} (at most {cpu:.0f} µs)",
        f"- target memory ≤ {MEMORY_TARGET_KIB:.0f} KiB per idle subscriber, shared documents "
        f"({SHARED}, {OWN_WORKSPACE}): {'met' if memory <= MEMORY_TARGET_KIB else 'missed'} (at most {memory:.1f} KiB; "
        f"once each has been served a change, at most {served:.1f} KiB)",
        "- measured over target (≤ 1 meets it):",
    ]
    for run in runs:
        cpu_ratio = f"CPU {run.cpu_us_per_event_per_subscriber / CPU_TARGET_US:.2f}, " if run in shared else ""
        aside = " (a document each: measured, not held to the target)" if run.selections == OWN_DOCUMENT else ""
        lines.append(
            f"  - {run.subscribers:,} {run.selections}: {cpu_ratio}"
            f"memory {run.memory_per_subscriber_kib / MEMORY_TARGET_KIB:.2f}{aside}"
        )
    lines += _linearity(runs)
    sample = next((run for run in shared if run.text_bytes), None)
    if sample is not None:
        lines.append(
            f"- bandwidth, one subscriber's {sample.events} events: {sample.text_bytes:,} bytes as text, "
            f"{sample.deflated_bytes:,} bytes with permessage-deflate ({sample.deflated_bytes / sample.text_bytes:.0%})"
        )
    return lines


def _linearity(runs: Sequence[FanOut]) -> list[str]:
    """Whether a run per subscriber scales linearly: its cost per subscriber at the most subscribers measured over
    that at the fewest (1.0: linear; above, worse than linear)."""
    lines = []
    for selections in (OWN_DOCUMENT, OWN_WORKSPACE):
        measured = sorted((run for run in runs if run.selections == selections), key=lambda run: run.subscribers)
        if len(measured) < 2 or measured[0].subscribers == measured[-1].subscribers:
            continue
        fewest, most = measured[0], measured[-1]
        lines.append(
            f"- {selections}, a run each, {most.subscribers:,} ÷ {fewest.subscribers:,} subscribers, per subscriber: "
            f"memory {most.memory_per_subscriber_kib / fewest.memory_per_subscriber_kib:.2f}, CPU per change "
            f"{most.cpu_us_per_event_per_subscriber / fewest.cpu_us_per_event_per_subscriber:.2f} (1.00: linear)"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.live", description=__doc__)
    parser.add_argument("--endpoint-url", help="a DynamoDB Local to use; by default one is started in memory")
    parser.add_argument(
        "--subscribers", default="1000,10000", help="concurrent subscribers, one run each (default: 1000,10000)"
    )
    parser.add_argument("--events", type=int, default=20, help="writes measured, shared selections (default: 20)")
    parser.add_argument(
        "--distinct-events",
        type=int,
        default=3,
        help="writes (rounds, with a workspace each) measured with a run per subscriber; 0 skips them (default: 3)",
    )
    parser.add_argument(
        "--compression", action="store_true", help="the gateway negotiates permessage-deflate (default: off)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="shorter waits for the gateway to settle and shorter idle windows: noisier figures, for a smoke test",
    )
    args = parser.parse_args(argv)
    counts = [int(one) for one in args.subscribers.split(",")]
    pauses = QUICK if args.quick else Pauses()
    asyncio.run(_main(args.endpoint_url, counts, args.events, args.distinct_events, args.compression, pauses))


if __name__ == "__main__":
    main()
