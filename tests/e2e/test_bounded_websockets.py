"""A WebSocket holds what its operations in flight need and no more: finished ones let go, the rest is bounded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode

from gateway.server.serving import CLOSE_TIMEOUT
from tests.support.gateway import Gateway
from tests.support.live import PROJECTS, put_workspace

BIG = "x" * 390_000
BIG_QUERY = '{ workspace(workspaceId: "big") { displayName } }'


@pytest.fixture(scope="module")
def table(dynamodb: Any) -> Iterator[str]:
    from tests.support.contract import create_table

    name = "bounded-websockets"
    create_table(dynamodb, name)
    put_workspace(dynamodb, name, "ws-1")
    item = {"PK": {"S": "WS#big"}, "SK": {"S": "META"}, "displayName": {"S": BIG}}
    dynamodb.put_item(TableName=name, Item=item)
    yield name
    dynamodb.delete_table(TableName=name)


BOUNDED: dict[str, Any] = {"ws_max_operations": 3, "ws_max_queued": 5, "ws_send_timeout": 5.0}
CUT_OFF = 2 * BOUNDED["ws_send_timeout"] + CLOSE_TIMEOUT
"""How long a reader that fell behind can hold its connection: a send stalls for the send timeout, what is queued and
the close frame get one more, and the server drops a connection its application has finished within its close
timeout."""
UNREAD: dict[str, Any] = {**BOUNDED, "ws_max_operations": 200}
"""For the clients that do not read: every request is let in at once, so the answers outgrow every buffer however
slowly the machine makes them, and the client certainly falls behind."""
ASKED = 150
"""Answers such a client asks for: 58 MB, far past what socket buffers hold."""
SLACK = 60.0
"""Room for a loaded machine: the tests assert that the connection ends, not how fast."""


@pytest.fixture(scope="module")
def bounded(gateway_factory: Callable[..., Gateway], table: str) -> Iterator[Gateway]:
    with gateway_factory(table, **BOUNDED) as gateway:
        yield gateway


async def _connected(gateway: Gateway, **options: Any) -> ClientConnection:
    url = gateway.url.replace("http://", "ws://") + "/graphql"
    ws = await connect(url, subprotocols=["graphql-transport-ws"], max_size=None, **options)  # type: ignore[list-item]
    await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
    assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "connection_ack"}
    return ws


def _subscribe(op_id: str, query: str, **variables: Any) -> str:
    return json.dumps({"id": op_id, "type": "subscribe", "payload": {"query": query, "variables": variables}})


async def test_memory_stays_flat_over_thirty_thousand_operations_on_one_socket(
    gateway_factory: Callable[..., Gateway], table: str
) -> None:
    process = psutil.Process()
    # No limit on operations in flight: what is measured is what a finished operation leaves behind.
    with gateway_factory(table, ws_max_operations=1_000_000) as gateway:
        ws = await _connected(gateway)
        try:

            async def run(first: int, count: int) -> None:
                for start in range(first, first + count, 50):
                    for n in range(start, start + 50):
                        await ws.send(_subscribe(str(n), "{ __typename }"))
                    completes = 0
                    while completes < 50:
                        message = json.loads(await asyncio.wait_for(ws.recv(), 20))
                        assert message["type"] in ("next", "complete"), message
                        completes += message["type"] == "complete"

            await run(0, 3_000)  # warm: caches, allocator arenas
            before = process.memory_info().rss
            await run(3_000, 30_000)
            after = process.memory_info().rss
        finally:
            await ws.close()
    grown = (after - before) / 2**20
    # Before finished operations were let go, 30,000 of them held about 25 MB until the socket closed.
    assert grown < 12, f"RSS grew {grown:.1f} MiB over 30,000 operations"


async def test_operations_in_flight_are_bounded_per_connection(bounded: Gateway) -> None:
    ws = await _connected(bounded)
    try:
        for n in range(3):
            await ws.send(_subscribe(f"s{n}", PROJECTS, ws="ws-1"))
        await ws.send(_subscribe("s3", PROJECTS, ws="ws-1"))
        refused = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert refused["id"] == "s3"
        assert refused["type"] == "error"
        assert refused["payload"][0]["extensions"]["code"] == "TOO_MANY_OPERATIONS"
        # Completing one makes room for another; a query that finishes frees its place by itself.
        await ws.send(json.dumps({"id": "s0", "type": "complete"}))
        await ws.send(_subscribe("q", '{ workspace(workspaceId: "ws-1") { displayName } }'))
        answered = [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in range(2)]
        assert [m["type"] for m in answered] == ["next", "complete"]
        await ws.send(_subscribe("q2", '{ workspace(workspaceId: "ws-1") { displayName } }'))
        answered = [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in range(2)]
        assert [m["type"] for m in answered] == ["next", "complete"]
    finally:
        await ws.close()


async def test_a_reader_that_stops_reading_is_cut_off_and_told_why_if_the_close_frame_gets_through(
    gateway_factory: Callable[..., Gateway], table: str
) -> None:
    with gateway_factory(table, **UNREAD) as gateway:
        # A client that stops reading: its library buffers one message, then the kernel's buffers fill.
        ws = await _connected(gateway, max_queue=1, ping_interval=None)
        messages: list[dict[str, Any]] = []
        try:
            await _ask_for_big_answers(ws)
            # Not reading until the server is done with the connection: then it has certainly cut the client off.
            await _until_idle(gateway)
            async with asyncio.timeout(CLOSE_TIMEOUT + SLACK):
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        messages.append(json.loads(await ws.recv()))
        finally:
            ws.transport.abort()
    # The close frame travels behind what the buffers hold; when the server cannot get it through in time it drops
    # the connection instead. A frame that arrives says why: the client fell behind, or (on a machine slow enough
    # that the server's keepalive ping, unanswered by a client that reads nothing, times out first) it stopped
    # answering pings. Either way the server cut it off.
    frame = closed.value.rcvd
    if frame is not None:
        assert (frame.code, frame.reason.split(":")[0]) in {(1008, "FELL_BEHIND"), (1011, "keepalive ping timeout")}
    assert sum(m["type"] == "complete" for m in messages) < ASKED


async def test_a_client_that_never_reads_is_dropped_by_the_server(
    gateway_factory: Callable[..., Gateway], table: str
) -> None:
    with gateway_factory(table, **UNREAD) as gateway:
        # No keepalive pings from the client: it must be the server that ends the connection.
        ws = await _connected(gateway, max_queue=1, ping_interval=None)
        try:
            assert gateway.websockets() == 1
            await _ask_for_big_answers(ws)
            for _ in range(int((CUT_OFF + SLACK) / 0.2)):
                if not gateway.websockets():
                    break
                await asyncio.sleep(0.2)
            assert gateway.websockets() == 0, "the server still holds the connection of a client that never reads"
        finally:
            ws.transport.abort()


async def test_messages_past_the_queue_limit_end_each_operation_with_fell_behind_then_close_the_socket(
    gateway_factory: Callable[..., Gateway], table: str
) -> None:
    with gateway_factory(table, ws_max_queued=1) as gateway:
        ws = await _connected(gateway)
        try:
            await ws.send(_subscribe("s1", PROJECTS, ws="ws-1"))  # read before the pings, so running when they come
            # Three pings in one write reach the server together: it reads them in one go, so its writer has not
            # sent the first pong when the second is queued, past the limit of one.
            pings = [Frame(Opcode.TEXT, b'{"type":"ping"}').serialize(mask=True) for _ in range(3)]
            ws.transport.write(b"".join(pings))
            received = []
            with pytest.raises(ConnectionClosed) as closed:
                async with asyncio.timeout(30):
                    while True:
                        received.append(json.loads(await ws.recv()))
        finally:
            ws.transport.abort()
    assert received[0] == {"type": "pong"}
    assert [(m["id"], m["type"], m["payload"][0]["extensions"]["code"]) for m in received[1:]] == [
        ("s1", "error", "FELL_BEHIND")
    ]
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason.split(":")[0]) == (1008, "FELL_BEHIND")


async def _ask_for_big_answers(ws: ClientConnection) -> None:
    for n in range(ASKED):
        await ws.send(_subscribe(str(n), BIG_QUERY))


async def _until_idle(gateway: Gateway) -> None:
    for _ in range(int((CUT_OFF + SLACK) / 0.2)):
        if not gateway.running():
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the server is still serving a client that fell behind")
