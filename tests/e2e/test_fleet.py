"""Subscriptions on a fleet: gateways that share only the table and a Redis broker each hear every change once;
a gateway that finds the stream's reader out of reach, with no broker, says so rather than serving silence."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest

from benchmarks import servers
from gateway.live.fanout import Feed
from gateway.live.relay import UNREACHABLE
from tests.support.broker import REDIS_SERVER, RedisServer
from tests.support.gateway import Gateway
from tests.support.live import PROJECTS, Socket, listening, put_project, put_workspace, socket

LEASE = {"PK": {"S": "TABLEGRAPH#STREAM-LEASE"}, "SK": {"S": "LEASE"}}


@pytest.fixture
def redis_broker() -> Iterator[RedisServer]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server); .ci/run installs it")
    broker = RedisServer()
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def foreign_lease(dynamodb: Any, table: str) -> None:
    """The lease as a gateway on another machine holds it, renewed far ahead."""
    until = str(int(time.time() * 1000) + 600_000)
    item = {
        **LEASE,
        "holder": {"S": "1.elsewhere"},
        "address": {"S": "127.0.0.1:9"},
        "secret": {"S": "s"},
        "machine": {"S": "another-machine"},
        "until": {"N": until},
        "checkpoint": {"M": {}},
    }
    dynamodb.put_item(TableName=table, Item=item)


def code(message: dict[str, Any]) -> str:
    """The code of the error a subscription ended with, as graphql-transport-ws sends it."""
    if message["type"] == "error":
        found: str = message["payload"][0]["extensions"]["code"]
        return found
    assert message["type"] == "next" and message["payload"].get("errors"), message
    found = message["payload"]["errors"][0]["extensions"]["code"]
    return found


# --- no broker: an unreachable holder is said out loud ----------------------------------------------------------


def test_a_holder_on_another_machine_without_a_broker_is_reported_at_start_up(
    gateway_factory: Callable[..., Gateway], dynamodb: Any, fresh_table: str, caplog: pytest.LogCaptureFixture
) -> None:
    foreign_lease(dynamodb, fresh_table)

    async def subscribe(gateway: Gateway) -> dict[str, Any]:
        async with socket(gateway) as client:
            await client.subscribe(PROJECTS, ws="ws-1")
            return await client.receive()

    with caplog.at_level("ERROR", logger="gateway.live.fanout"), gateway_factory(fresh_table) as gateway:
        ready = gateway.http.get("/readyz")
        refused = asyncio.run(subscribe(gateway))
    assert ready.status_code == 503
    assert ready.json()["feed"] == UNREACHABLE == "unreachable holder: configure TABLEGRAPH_FANOUT_URL"
    assert any("another-machine" in record.getMessage() for record in caplog.records)
    assert code(refused) == "UNAVAILABLE"
    assert "TABLEGRAPH_FANOUT_URL" in refused["payload"][0]["message"]


async def test_a_lease_taken_from_another_machine_ends_subscriptions_with_a_code(
    gateway_factory: Callable[..., Gateway], dynamodb: Any, fresh_table: str
) -> None:
    put_workspace(dynamodb, fresh_table, "ws-1")
    with gateway_factory(fresh_table) as gateway:
        async with socket(gateway) as client:
            await client.subscribe(PROJECTS, ws="ws-1")
            await listening(gateway)
            assert gateway.http.get("/readyz").status_code == 200
            foreign_lease(dynamodb, fresh_table)  # its renewal fails: the holder is now on another machine
            ended = await client.receive()
        ready = gateway.http.get("/readyz")
    assert code(ended) == "UNAVAILABLE"
    assert ready.status_code == 503 and ready.json()["feed"] == UNREACHABLE


# --- one process and a broker: an outage is supervised, and subscribers resume ---------------------------------


async def test_a_broker_outage_is_supervised_and_subscribers_resume_from_their_position(
    gateway_factory: Callable[..., Gateway], dynamodb: Any, fresh_table: str, redis_broker: RedisServer
) -> None:
    put_workspace(dynamodb, fresh_table, "ws-1")
    with gateway_factory(fresh_table, fanout_url=redis_broker.url) as gateway:
        feed: Feed = gateway.app.state.feed
        async with socket(gateway) as client:
            await client.subscribe(PROJECTS, ws="ws-1")
            await listening(gateway)
            await _until(lambda: feed.relay is not None and feed.relay.connected.is_set())
            put_project(dynamodb, fresh_table, "ws-1", "p-1", "before")
            first = await client.event()
            redis_broker.stop()
            interrupted = await client.receive()
            await _until(lambda: feed.down)
            ready = gateway.http.get("/readyz")
            put_project(dynamodb, fresh_table, "ws-1", "p-2", "while the broker is down")
            redis_broker.start()
            await _until(lambda: feed.relay is not None and feed.relay.connected.is_set())
            await client.subscribe(PROJECTS, op_id="2", ws="ws-1", after=first["position"])
            missed = await client.event()
            await _until(lambda: feed.relay is not None and feed.relay.connected.is_set())
            put_project(dynamodb, fresh_table, "ws-1", "p-3", "after")
            live = await client.event()
        crashes = feed.supervised.crashes if feed.supervised else 0
    assert first["node"]["projectId"] == "p-1"
    assert code(interrupted) == "FEED_INTERRUPTED"
    assert ready.status_code == 503 and ready.json()["feed"] == "restarting"
    assert crashes >= 1
    assert (missed["node"]["projectId"], live["node"]["projectId"]) == ("p-2", "p-3")


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(1500):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("never happened")


# --- a fleet: two gateways, two workers each, sharing only the table and the broker ----------------------------


async def test_a_fleet_hears_every_change_once_and_survives_losing_the_lease_holder(
    endpoint: str, dynamodb: Any, fresh_table: str, redis_broker: RedisServer
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEGRAPH_")}
    env |= {"TABLEGRAPH_AUTH_OPEN": "1", "TABLEGRAPH_FANOUT_URL": redis_broker.url}
    put_workspace(dynamodb, fresh_table, "ws-1")
    ports = [servers.free_port(), servers.free_port()]
    with contextlib.ExitStack() as processes:
        first, second = (
            processes.enter_context(servers.serve(servers.gateway_command(endpoint, fresh_table, port, 2), port, env))
            for port in ports
        )
        for server in (first, second):
            await asyncio.to_thread(server.wait_until_ready)
        async with contextlib.AsyncExitStack() as sockets:
            # The first gateway's first subscriber makes it the lease holder; then subscribers on both.
            holder_side = [await sockets.enter_async_context(socket(_at(first.url)))]
            await holder_side[0].subscribe(PROJECTS, ws="ws-1")
            holder = await _holder(dynamodb, fresh_table)
            assert holder in _processes(first.process.pid)
            for _ in range(3):
                holder_side.append(await sockets.enter_async_context(socket(_at(first.url))))
            others = [await sockets.enter_async_context(socket(_at(second.url))) for _ in range(4)]
            for client in [*holder_side[1:], *others]:
                await client.subscribe(PROJECTS, ws="ws-1")
            everyone = [*holder_side, *others]
            await _all_listening(dynamodb, fresh_table, everyone)

            # Every subscriber, on either gateway and either worker, hears each change once and in order.
            put_project(dynamodb, fresh_table, "ws-1", "p-1", "one")
            put_project(dynamodb, fresh_table, "ws-1", "p-2", "two")
            heard = [[(await c.event())["node"]["projectId"] for _ in range(2)] for c in everyone]
            assert heard == [["p-1", "p-2"]] * len(everyone)

            # The lease holder's process dies, then its whole gateway: the other gateway's subscribers lose nothing.
            os.kill(holder, signal.SIGKILL)
            put_project(dynamodb, fresh_table, "ws-1", "p-3", "holder killed")
            for client in others:
                assert "p-3" in await _until_heard(client, "p-3")
            for one in psutil.Process(first.process.pid).children(recursive=True):
                one.kill()
            first.process.kill()
            put_project(dynamodb, fresh_table, "ws-1", "p-4", "gateway killed")
            for client in others:
                assert "p-4" in await _until_heard(client, "p-4")
            assert await _holder(dynamodb, fresh_table) in _processes(second.process.pid)


def _at(url: str) -> Gateway:
    target = Gateway.__new__(Gateway)
    target.url = url
    return target


def _processes(server: int) -> set[int]:
    return {server, *(child.pid for child in psutil.Process(server).children(recursive=True))}


async def _holder(dynamodb: Any, table: str) -> int:
    """The process holding the lease (its holder id starts with its process id), once one does."""
    for _ in range(1500):
        item = dynamodb.get_item(TableName=table, Key=LEASE, ConsistentRead=True).get("Item")
        if item and int(item["until"]["N"]) > time.time() * 1000:
            return int(item["holder"]["S"].split(".")[0])
        await asyncio.sleep(0.02)
    raise AssertionError("nobody took the lease")


async def _all_listening(dynamodb: Any, table: str, clients: list[Socket]) -> None:
    """Until every subscriber hears changes: warm-up writes until each heard one, then a marker each reads up to."""
    pending = {asyncio.ensure_future(client.event()) for client in clients}
    for n in range(60):
        put_project(dynamodb, table, "ws-1", f"warm-{n:02}", "warm-up")
        _, pending = await asyncio.wait(pending, timeout=1)
        if not pending:
            break
    assert not pending, "some subscribers never heard a change"
    put_project(dynamodb, table, "ws-1", "sync", "marker")
    for client in clients:
        await _until_heard(client, "sync")


async def _until_heard(client: Socket, project: str) -> list[str]:
    """The projects a subscriber hears, up to and with ``project`` (records read again at a takeover included)."""
    heard: list[str] = []
    while project not in heard:
        heard.append((await client.event())["node"]["projectId"])
    return heard
