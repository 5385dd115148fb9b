"""A small pool of HTTP/1.1 keep-alive connections to one origin, for the data plane's POSTs.

The data plane sends one kind of request to one host: a POST with a body, answered with a body of known length.
aiohttp, built for every kind of HTTP, spends about 0.25 ms of CPU per such request (request and response
objects, header multidicts, stream readers, timers); an asyncio protocol that writes the request in one call and
reads the answer with httptools' C parser (uvicorn's, already installed) spends a fraction of that.

Errors are ``OSError``: ``Unreachable`` and ``ConnectTimeout`` when no connection is made, ``ReadTimeout`` when the
answer takes too long, any other when the connection breaks before the answer is complete.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

import httptools


class Unreachable(OSError):
    """No connection could be made."""


class ConnectTimeout(TimeoutError):
    """No connection within the connect timeout."""


class ReadTimeout(TimeoutError):
    """No complete answer within the read timeout."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    """Lower-case names."""
    body: bytes


class _Connection(asyncio.Protocol):
    """One connection; answers one request at a time, in order, as HTTP/1.1 without pipelining does."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[Answer] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self.open = False
        self.reusable = False

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self._transport = cast(asyncio.Transport, transport)
        self.open = True

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ConnectionError(f"an answer that is not HTTP/1.1: {error}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        self._fail(exc if isinstance(exc, OSError) else ConnectionResetError("the connection closed before answering"))

    # httptools' callbacks

    def on_message_begin(self) -> None:
        self._headers = {}
        self._body = []

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self.reusable = self._parser.should_keep_alive()
        self._stop_timer()
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(Answer(self._parser.get_status_code(), self._headers, b"".join(self._body)))

    # use

    def send(self, request: bytes, timeout: float) -> asyncio.Future[Answer]:
        """The answer to ``request``; ``ReadTimeout`` (and the connection closed) when it is not complete within
        ``timeout`` seconds. A timer on the loop rather than ``asyncio.timeout``, which costs a context manager and a
        rescheduled timer per request."""
        assert self._transport is not None
        self.reusable = False
        self._waiter = waiter = self._loop.create_future()
        self._timer = self._loop.call_later(timeout, self._timed_out, timeout)
        self._transport.write(request)
        return waiter

    def close(self) -> None:
        self.open = False
        if self._transport is not None:
            self._transport.close()

    def _timed_out(self, timeout: float) -> None:
        self._timer = None
        self._fail(ReadTimeout(f"no answer within {timeout} s"))

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fail(self, error: Exception) -> None:
        self._stop_timer()
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)
        self.close()


class Pool:
    """At most ``limit`` connections to the origin of ``url``, reused while the server keeps them open."""

    def __init__(
        self, url: str, *, limit: int, connect_timeout: float, read_timeout: float, cafile: str | None = None
    ) -> None:
        parts = urlsplit(url)
        secure = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if secure else 80)
        self._ssl = ssl.create_default_context(cafile=cafile) if secure else None
        self._slots = asyncio.Semaphore(limit)
        self._idle: list[_Connection] = []
        self._busy: set[_Connection] = set()
        self._closed = False
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout

    async def send(self, request: bytes) -> Answer:
        """The answer to ``request``, a complete HTTP/1.1 request (head and body)."""
        async with self._slots:
            if self._closed:
                raise Unreachable(f"no connection to {self._host}:{self._port}: the gateway is shutting down")
            connection = self._reuse() or await self._connect()
            if self._closed:  # closed while connecting
                connection.close()
                raise Unreachable(f"no connection to {self._host}:{self._port}: the gateway is shutting down")
            self._busy.add(connection)
            try:
                answer = await connection.send(request, self._read_timeout)
            except BaseException:
                connection.close()
                raise
            finally:
                self._busy.discard(connection)
            if connection.reusable and connection.open and not self._closed:
                self._idle.append(connection)
            else:
                connection.close()
            return answer

    def close(self) -> None:
        """Close every connection, those answering too (their requests fail): none outlives the pool, nor its event
        loop. A request sent afterwards is refused without connecting."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()
        for connection in list(self._busy):
            connection.close()

    def _reuse(self) -> _Connection | None:
        while self._idle:
            connection = self._idle.pop()
            if connection.open:
                return connection
        return None

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._connect_timeout):
                _, connection = await loop.create_connection(
                    lambda: _Connection(loop),
                    self._host,
                    self._port,
                    ssl=self._ssl,
                    server_hostname=self._host if self._ssl else None,
                )
        except TimeoutError:
            raise ConnectTimeout(
                f"no connection to {self._host}:{self._port} within {self._connect_timeout} s"
            ) from None
        except OSError as error:
            raise Unreachable(f"no connection to {self._host}:{self._port}: {error}") from error
        return connection
