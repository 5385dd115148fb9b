"""How uvicorn serves the gateway: its WebSocket protocol, with a bound on how long a finished connection lingers."""

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
    """

    _dropping: asyncio.TimerHandle | None = None

    async def run_asgi(self) -> None:
        await super().run_asgi()
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


def websocket_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for the gateway's WebSockets: our protocol, and compression only when the settings ask.

    uvicorn negotiates permessage-deflate by default, which keeps a compressor and a decompressor per connection:
    most of what an idle subscriber costs (docs/subscriptions.md).
    """
    return {"ws": WebSocketProtocol, "ws_per_message_deflate": settings.ws_compression}
