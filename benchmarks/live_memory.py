"""``python -m benchmarks.live_memory``: where the memory of an idle subscriber goes, by traceback.

The gateway runs in this process (uvicorn in a thread, as the tests serve it) so that ``tracemalloc`` sees its
allocations; the clients run in a child process, so that none of theirs are counted. ``N`` idle connections are
opened, then ``N`` more: the difference between the two snapshots, divided by ``N``, is what one more costs, with
what the process held before (imports, the first connection's caches) left out. It is measured twice: connections
that only said ``connection_init``, and connections each holding one subscription (all with the same selection, so
sharing one run; with ``--distinct``, each of a workspace of its own, so a run each). The resident set's growth is
printed besides: it includes what ``tracemalloc`` cannot see (zlib's buffers, freed memory the allocator keeps).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import pstats
import subprocess
import sys
import threading
import time
import tracemalloc
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import boto3
import psutil
import uvicorn
from websockets.asyncio.client import ClientConnection, connect

from benchmarks.live import SUBSCRIPTION
from gateway.config import Settings
from gateway.dynamo.store import table_definition
from gateway.live.fanout import Feed
from gateway.server.app import create_app
from gateway.server.local import DynamoDBLocal
from gateway.server.serving import websocket_options
from schema.model import MODEL

_FRAMES = 6
"""Frames of each allocation's traceback kept: enough to tell which of our functions made it."""
_CONNECTING = 100
_PROTOCOLS = ("gateway", "websockets-sansio", "websockets", "wsproto")
"""The WebSocket protocols that can be measured: the gateway's, and uvicorn's (wsproto only where installed)."""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.live_memory", description=__doc__)
    parser.add_argument("--subscribers", type=int, default=1000, help="idle connections added per step")
    parser.add_argument("--compression", action="store_true", help="negotiate permessage-deflate")
    parser.add_argument(
        "--ws",
        choices=_PROTOCOLS,
        default="gateway",
        help="the WebSocket protocol uvicorn serves with: the gateway's own (the default), or one of uvicorn's",
    )
    parser.add_argument("--top", type=int, default=12, help="tracebacks printed per measure")
    parser.add_argument(
        "--distinct", action="store_true", help="each subscription of a workspace of its own: a run each, not shared"
    )
    parser.add_argument(
        "--profile",
        type=int,
        metavar="CHANGES",
        help="instead: profile the gateway's event loop (cProfile) while CHANGES writes reach the subscribers",
    )
    parser.add_argument("--clients", help=argparse.SUPPRESS)  # the child process: the URL to connect to
    args = parser.parse_args(argv)
    if args.clients:
        asyncio.run(_clients(args.clients))
        return
    if args.profile:
        _profile(args.subscribers, args.compression, args.profile, args.top, args.ws)
        return
    _measure(args.subscribers, args.compression, args.top, args.ws, args.distinct)


def _measure(count: int, compression: bool, top: int, ws: str, distinct: bool = False) -> None:
    with ExitStack() as stack:
        _, _, settings = _engine(stack, compression)
        app, url, _ = stack.enter_context(_served(settings, ws))
        feed: Feed = app.state.feed
        mode = "on" if compression else "off"
        print(f"## Memory per idle subscriber ({count:,} then {2 * count:,}; compression {mode}; protocol {ws})")
        for subscribe in (False, True):
            clients = stack.enter_context(_children(url))
            what = "subscription" if subscribe else "connection"
            first = _step(clients, count, subscribe, feed, distinct=distinct)
            second = _step(clients, count, subscribe, feed, distinct=distinct)
            _report(what, count, first, second, top)
            _command(clients, "close")


def _engine(stack: ExitStack, compression: bool) -> tuple[Any, str, Settings]:
    """A DynamoDB Local for the run (stopped with ``stack``), a fresh demo table on it, and the gateway's settings."""
    engine = stack.enter_context(DynamoDBLocal())
    table = f"live-{uuid.uuid4().hex[:8]}"
    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=engine.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    dynamodb.create_table(TableName=table, **table_definition(MODEL))
    settings = Settings(
        endpoint_url=engine.endpoint_url, table=table, auth_open=True, ws_compression=compression, log_level="ERROR"
    )
    return dynamodb, table, settings


def _profile(count: int, compression: bool, changes: int, top: int, ws: str) -> None:
    """Where the gateway's time goes while ``changes`` writes reach ``count`` subscribers of one selection."""
    with ExitStack() as stack:
        dynamodb, table, settings = _engine(stack, compression)
        app, url, server = stack.enter_context(_served(settings, ws, traced=False))
        feed: Feed = app.state.feed
        clients = stack.enter_context(_children(url))
        _step(clients, count, True, feed, snapshot=False)
        item = {"PK": {"S": "WS#ws-memory"}, "SK": {"S": "PROJ#warm"}, "title": {"S": "warm"}}
        dynamodb.put_item(TableName=table, Item=item)
        _command(clients, "receive 1")
        profiler = cProfile.Profile()
        _in_gateway(server, profiler.enable)
        for n in range(changes):
            item = {"PK": {"S": "WS#ws-memory"}, "SK": {"S": f"PROJ#p-{n}"}, "title": {"S": str(n)}}
            dynamodb.put_item(TableName=table, Item=item)
            _command(clients, "receive 1")
        _in_gateway(server, profiler.disable)
        print(f"## The gateway's event loop, {changes} changes to {count:,} subscribers of one selection")
        print()
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(top)


def _in_gateway(server: uvicorn.Server, call: Callable[[], Any]) -> None:
    """Run ``call`` in the gateway's event loop thread (a profiler profiles the thread that enables it)."""
    done = threading.Event()

    def run() -> None:
        call()
        done.set()

    next(iter(server.server_state.connections)).loop.call_soon_threadsafe(run)
    done.wait(10)


def _held(feed: Feed) -> int:
    """The subscriptions the gateway holds, counted from this thread while its loop runs in another: a count
    taken while a subscription comes or goes (its dictionaries changing size) is taken again."""
    while True:
        try:
            return feed.subscribers()
        except RuntimeError:
            time.sleep(0.01)


def _step(
    clients: subprocess.Popen[str],
    count: int,
    subscribe: bool,
    feed: Feed,
    snapshot: bool = True,
    distinct: bool = False,
) -> tuple[Any, int]:
    """Open ``count`` more connections, wait until the gateway holds them, and take a snapshot."""
    expected = _held(feed) + count if subscribe else None
    _command(clients, f"open {count} {int(subscribe)} {int(distinct)}")
    deadline = time.monotonic() + 120
    while expected is not None and _held(feed) < expected:
        if time.monotonic() > deadline:
            raise RuntimeError("the gateway never held the subscriptions")
        time.sleep(0.05)
    time.sleep(1)  # what the connections started is done
    gc.collect()
    return (tracemalloc.take_snapshot() if snapshot else None), psutil.Process().memory_info().rss


def _report(what: str, count: int, first: tuple[Any, int], second: tuple[Any, int], top: int) -> None:
    stats = second[0].compare_to(first[0], "traceback")
    traced = sum(one.size_diff for one in stats)
    print()
    print(
        f"### Per {what}: traced {traced / count / 1024:.1f} KiB, resident set "
        f"{(second[1] - first[1]) / count / 1024:.1f} KiB (tracemalloc's own records included)"
    )
    print()
    owners: Counter[str] = Counter()
    blocks: Counter[str] = Counter()
    for one in stats:
        owner = _owner(one.traceback)
        owners[owner] += one.size_diff
        blocks[owner] += one.count_diff
    for owner, size in owners.most_common(top):
        print(f"- {size / count:6.0f} B in {blocks[owner] / count:5.1f} blocks: {owner}")


def _owner(traceback: tracemalloc.Traceback) -> str:
    """Where an allocation was made, named by the innermost line outside the standard library (which allocates for
    whoever calls it), with the standard library's line after it."""
    frames = list(traceback)
    inner = f"{_short(frames[-1].filename)}:{frames[-1].lineno}"
    for frame in reversed(frames):
        if "site-packages/" in frame.filename or "/lib/python3" not in frame.filename:
            owner = f"{_short(frame.filename)}:{frame.lineno}"
            return owner if owner == inner else f"{owner} ({inner})"
    return inner


def _short(filename: str) -> str:
    for marker in ("site-packages/", "/lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename.split("/work/", 1)[-1].split("/", 1)[-1]


@contextmanager
def _served(settings: Settings, ws: str, traced: bool = True) -> Iterator[tuple[Any, str, uvicorn.Server]]:
    app = create_app(settings)
    options = websocket_options(settings)
    if ws != "gateway":
        options["ws"] = ws  # uvicorn's own: what the gateway's protocol saves is measured against it
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="on", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    if traced:
        tracemalloc.start(_FRAMES)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield app, f"ws://127.0.0.1:{port}/graphql", server
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        tracemalloc.stop()


@contextmanager
def _children(url: str) -> Iterator[subprocess.Popen[str]]:
    command = [sys.executable, "-m", "benchmarks.live_memory", "--clients", url]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def _command(child: subprocess.Popen[str], line: str) -> None:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(line + "\n")
    child.stdin.flush()
    answer = child.stdout.readline().strip()
    if answer != "ok":
        raise RuntimeError(f"the clients answered {answer!r} to {line!r}")


async def _clients(url: str) -> None:
    """The child: opens connections as told on stdin, answers ``ok`` on stdout once they are acknowledged."""
    connections: list[ClientConnection] = []
    loop = asyncio.get_running_loop()
    while line := (await loop.run_in_executor(None, sys.stdin.readline)).split():
        if line[0] == "open":
            count, subscribe, distinct = int(line[1]), bool(int(line[2])), bool(int(line[3]))
            for first in range(0, count, _CONNECTING):
                batch = min(count, first + _CONNECTING) - first
                opened = await asyncio.gather(*(_client(url, subscribe, distinct) for _ in range(batch)))
                connections += opened
        elif line[0] == "receive":
            await asyncio.gather(*(_receive(one, int(line[1])) for one in connections))
        elif line[0] == "close":
            await asyncio.gather(*(one.close() for one in connections))
            connections.clear()
        print("ok", flush=True)


async def _receive(connection: ClientConnection, count: int) -> None:
    for _ in range(count):
        await connection.recv()


async def _client(url: str, subscribe: bool, distinct: bool) -> ClientConnection:
    """A client offering permessage-deflate, as browsers do: the gateway's setting decides. Its subscription
    shares its run with the others', or, ``distinct``, watches a workspace of its own: a run of its own."""
    connection = await connect(url, subprotocols=["graphql-transport-ws"], open_timeout=120)  # type: ignore[list-item]
    await connection.send(json.dumps({"type": "connection_init"}))
    await connection.recv()
    if subscribe:
        workspace = f"ws-{uuid.uuid4().hex[:12]}" if distinct else "ws-memory"
        payload = {"query": SUBSCRIPTION, "variables": {"ws": workspace}}
        await connection.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))
    return connection


if __name__ == "__main__":
    main()
