"""A model of AWS's network for DynamoDB Local: an HTTP proxy that holds each DynamoDB request a fixed time.

DynamoDB Local answers a small request in about a millisecond on this machine; DynamoDB in a region answers in
several, most of it the network. Between a system and the engine, the proxy adds that time to every request, so
what a system pays per sequential round shows, as it would in AWS. It forwards DynamoDB's JSON protocol
(HTTP/1.1, keep-alive), one upstream connection per client connection, and counts requests by operation.

``python -m benchmarks.latency --upstream URL --delay-ms 5 --port N`` serves until stopped; tests use
``with LatencyProxy(upstream, delay) as proxy:`` and read ``proxy.requests``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import threading
from collections import Counter
from urllib.parse import urlsplit

_Message = tuple[bytes, dict[str, str], bytes]


class LatencyProxy:
    """Forwards to ``upstream`` after ``delay`` seconds per request; serves on ``url`` once started."""

    def __init__(self, upstream: str, delay: float) -> None:
        parts = urlsplit(upstream)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.delay = delay
        self.requests: Counter[str] = Counter()
        """Requests forwarded so far, by DynamoDB operation (the ``X-Amz-Target`` action)."""
        self.url = ""
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    async def start(self, port: int = 0) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        """Stop serving; every connection, to its client and upstream, is closed before this returns."""
        if self._server is not None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await self._server.wait_closed()

    def __enter__(self) -> LatencyProxy:
        """Serve from a thread of its own, for code that is not on an event loop."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="latency-proxy", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.start(), self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._thread is not None
        asyncio.run_coroutine_threadsafe(self.stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def count(self) -> int:
        with self._lock:
            return sum(self.requests.values())

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while (request := await read_message(reader)) is not None:
                head, headers, body = request
                with self._lock:
                    self.requests[headers.get("x-amz-target", "").rpartition(".")[2]] += 1
                await _hold(self.delay)
                if upstream is None:
                    upstream = await asyncio.open_connection(*self._upstream)
                upstream[1].write(head + body)
                answer = await read_message(upstream[0])
                if answer is None:
                    return
                writer.write(answer[0] + answer[2])
                await writer.drain()
                if answer[1].get("connection", "").lower() == "close":
                    upstream[1].close()
                    upstream = None
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._connections.discard(task)
            await _closed(writer)
            if upstream is not None:
                await _closed(upstream[1])


async def _closed(writer: asyncio.StreamWriter) -> None:
    """Close ``writer`` and wait until its socket is released, so none is left for the collector to find."""
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def _hold(delay: float) -> None:
    await asyncio.sleep(delay)


async def read_message(reader: asyncio.StreamReader) -> _Message | None:
    """One HTTP/1.1 message: its head as received, its headers by lower-case name, its body; None at a clean end.

    A chunked body comes back de-chunked, with a head that carries its Content-Length instead.
    """
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        if error.partial:
            raise
        return None
    lines = raw.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() != "chunked":
        return raw, headers, await reader.readexactly(int(headers.get("content-length", "0")))
    body = b""
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        body += (await reader.readexactly(size + 2))[:-2]
    await reader.readuntil(b"\r\n")
    kept = [line for line in lines if line and not line.lower().startswith("transfer-encoding")]
    head = ("\r\n".join([*kept, f"Content-Length: {len(body)}"]) + "\r\n\r\n").encode("latin-1")
    return head, headers, body


async def _serve_forever(upstream: str, delay: float, port: int) -> None:
    proxy = LatencyProxy(upstream, delay)
    await proxy.start(port)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="Forward DynamoDB requests to an engine, each after a delay.")
    parser.add_argument("--upstream", required=True, help="the engine's endpoint URL")
    parser.add_argument("--delay-ms", type=float, default=5.0, help="milliseconds added to each request (5)")
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        asyncio.run(_serve_forever(arguments.upstream, arguments.delay_ms / 1e3, arguments.port))
        return
    uvloop.run(_serve_forever(arguments.upstream, arguments.delay_ms / 1e3, arguments.port))


if __name__ == "__main__":
    main()
