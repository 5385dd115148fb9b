"""The pool's connections never outlive it: closing it closes those answering too, and nothing connects after; an
answer that takes too long fails its request and closes its connection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from gateway.dynamo.pool import Pool, ReadTimeout, Unreachable

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"

_Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def _pool_to(serve: _Serve, read_timeout: float) -> AsyncIterator[Pool]:
    """A pool to a server on 127.0.0.1 that answers with ``serve``; both closed on leaving."""
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = Pool(f"http://127.0.0.1:{port}", limit=4, connect_timeout=5, read_timeout=read_timeout)
    try:
        yield pool
    finally:
        pool.close()
        server.close()
        await server.wait_closed()


async def test_closing_the_pool_closes_a_connection_waiting_for_its_answer_and_refuses_later_sends() -> None:
    connections = 0
    held = asyncio.Event()  # the second request arrived and is left unanswered
    closed = asyncio.Event()  # the client closed the connection it was on

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(ANSWER)
            await writer.drain()
            await reader.readuntil(b"\r\n\r\n")
            held.set()
            if await reader.read() == b"":
                closed.set()
        finally:
            writer.close()

    async with _pool_to(serve, read_timeout=30) as pool:
        assert (await pool.send(REQUEST)).status == 200
        waiting = asyncio.ensure_future(pool.send(REQUEST))  # on the same, kept-alive connection
        await asyncio.wait_for(held.wait(), 5)
        pool.close()
        with pytest.raises(OSError):
            await waiting
        await asyncio.wait_for(closed.wait(), 5)
        with pytest.raises(Unreachable, match="shutting down"):
            await pool.send(REQUEST)
        assert connections == 1  # nothing connected after the close


async def test_an_answer_that_takes_too_long_fails_with_a_read_timeout_and_its_connection_is_closed() -> None:
    connections = 0
    closed = asyncio.Event()  # the client closed the connection whose answer it stopped waiting for

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            await reader.readuntil(b"\r\n\r\n")
            if connections == 1:  # the first connection does not answer
                if await reader.read() == b"":
                    closed.set()
                return
            while True:  # the next one answers each request at once
                writer.write(ANSWER)
                await writer.drain()
                if not await reader.readuntil(b"\r\n\r\n"):
                    return
        except asyncio.IncompleteReadError:
            pass  # the client closed the connection
        finally:
            writer.close()

    async with _pool_to(serve, read_timeout=0.2) as pool:
        with pytest.raises(ReadTimeout, match=r"no answer within 0\.2 s"):
            await pool.send(REQUEST)
        await asyncio.wait_for(closed.wait(), 5)
        # Answers on time are not cut short by the timer of the request before them.
        for _ in range(2):
            assert (await pool.send(REQUEST)).status == 200
            await asyncio.sleep(0.3)
        assert connections == 2
