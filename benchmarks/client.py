"""The load generator's HTTP client: HTTP/1.1 over kept-alive connections, and nothing else.

The driver shares the machine with the servers it measures, so what it spends per request is taken from them. A
general-purpose client costs several milliseconds of CPU per request in Python (measured: httpx 3.7 ms, aiohttp
0.9 ms, this one 0.3 ms for the same small answer), which on two cores showed up as gateway latency. It speaks
only what the servers under test answer: a status line, headers and a ``Content-Length`` body.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from urllib.parse import urlsplit


class HttpError(Exception):
    """The server answered something this client does not read, or closed the connection."""


class _Stale(Exception):
    """The connection was closed before any answer: the request was not read, and may be sent again."""


class Client:
    """POSTs to one server; each connection carries one request at a time and is reused after its answer."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None or parts.port is None:
            raise ValueError(f"an http://host:port URL is needed, not {url!r}")
        self._host, self._port = parts.hostname, parts.port
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> tuple[int, bytes]:
        """The status code and the body of the answer."""
        lines = [f"POST {path} HTTP/1.1", f"Host: {self._host}:{self._port}", f"Content-Length: {len(body)}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        while self._idle:
            reader, writer = self._idle.pop()
            try:
                return await self._exchange(reader, writer, request)
            except _Stale:
                # The server closed the idle connection (its keep-alive timeout) before reading the request.
                continue
        reader, writer = await asyncio.open_connection(self._host, self._port)
        try:
            return await self._exchange(reader, writer, request)
        except _Stale as stale:
            raise HttpError(f"{self._host}:{self._port} closed the connection without answering") from stale

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> tuple[int, bytes]:
        try:
            writer.write(request)
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as error:
                if error.partial:
                    raise
                raise _Stale from error
            status, length, close = _head(head)
            answer = await reader.readexactly(length)
        except (ConnectionResetError, BrokenPipeError) as error:
            writer.close()
            raise _Stale from error
        except _Stale:
            writer.close()
            raise
        except HttpError:
            writer.close()
            raise
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
            writer.close()
            raise HttpError(f"the connection to {self._host}:{self._port} failed: {error!r}") from error
        if close:
            writer.close()
        else:
            self._idle.append((reader, writer))
        return status, answer

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()
        for _, writer in idle:
            with contextlib.suppress(OSError):
                await writer.wait_closed()


def _head(raw: bytes) -> tuple[int, int, bool]:
    """Status, body length, and whether the server closes the connection, from a response head."""
    status_line, *fields = raw.decode("latin-1").split("\r\n")
    version, _, rest = status_line.partition(" ")
    if not version.startswith("HTTP/1.") or not rest[:3].isdigit():
        raise HttpError(f"not an HTTP/1.x status line: {status_line!r}")
    headers = {}
    for field in fields:
        name, _, value = field.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length", "")
    if not length.isdigit():
        raise HttpError(f"an answer without Content-Length (headers: {sorted(headers)})")
    return int(rest[:3]), int(length), headers.get("connection", "").lower() == "close"
