"""How uvicorn serves the gateway: its WebSocket protocol, with a bound on how long a finished connection lingers and
what an idle one holds cut down."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from gateway.config import Settings

CLOSE_TIMEOUT = 10.0
"""Seconds a WebSocket connection may outlive its application: the closing handshake, then what is still unsent."""


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol, except that a connection whose application has finished is gone within
    ``CLOSE_TIMEOUT``, flushed or not.

    uvicorn ends such a connection by closing its transport, and a transport closes only once the peer has read what
    is buffered: a peer that stopped reading would hold the socket, and what it was sent, for ever.

    An idle subscriber is mostly its connection, so what each holds for nothing is cut: uvicorn's queue of received
    messages and its flag of a writable transport are replaced by equivalents that hold no deque of waiters while
    nobody waits (3.8 KiB a connection), and the upgrade request's headers are let go of once the handshake is done.
    """

    _dropping: asyncio.TimerHandle | None = None

    def __init__(self, *arguments: Any, **options: Any) -> None:
        super().__init__(*arguments, **options)
        self.queue = _Inbox()  # type: ignore[assignment]  # what uvicorn uses of asyncio.Queue
        self.writable = _Flag()  # type: ignore[assignment]  # what uvicorn uses of asyncio.Event
        self.writable.set()

    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # The upgrade's request and response serve only the handshake: the application has its scope. The
            # websockets parser keeps the request in its generator's frame for the connection's life, so its headers
            # (parsed twice over, 3 KiB) are emptied rather than only let go of.
            self.request.headers.clear()
            del self.request, self.response

    def on_task_complete(self, task: asyncio.Task[None]) -> None:
        # The application's task has ended (called back, rather than awaited in a coroutine of our own around
        # uvicorn's: a frame each idle connection would keep).
        super().on_task_complete(task)
        if not self.disconnected:
            self._dropping = self.loop.call_later(CLOSE_TIMEOUT, self.transport.abort)

    def connection_lost(self, exc: Exception | None) -> None:
        # A timer left pending would outlive the connection, and keep the server's loop from closing.
        if self._dropping is not None:
            self._dropping.cancel()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        super().shutdown()
        if self._dropping is not None:
            self.transport.abort()  # the server is stopping: nothing left to wait for


class _Inbox:
    """The messages received and not yet read by the application: what uvicorn uses of ``asyncio.Queue``
    (``put_nowait``, ``get``, ``empty``), with one reader, without its three deques and event (3 KiB)."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def empty(self) -> bool:
        return not self._items

    async def get(self) -> Any:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._items.pop(0)


class _Flag:
    """What uvicorn uses of ``asyncio.Event`` (``set``, ``clear``, ``wait``), whose waiters are listed only while
    there are some: an event keeps a deque for them all its life (760 bytes)."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[asyncio.Future[None]] = []

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> bool:
        if not self._set:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        return True


def websocket_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for the gateway's WebSockets: our protocol, and compression only when the settings ask.

    uvicorn negotiates permessage-deflate by default, which keeps a compressor and a decompressor per connection:
    most of what an idle subscriber costs (docs/subscriptions.md).
    """
    return {"ws": WebSocketProtocol, "ws_per_message_deflate": settings.ws_compression}
