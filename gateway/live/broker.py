"""The stream's records through Redis or Valkey: one channel per table, heard by every gateway process of a fleet."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import redis.asyncio as redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from gateway.errors import FeedInterrupted, Unavailable


class Broker:
    """Publishes the lease holder's records and hands every process the records published.

    Redis's publish/subscribe keeps nothing for a subscriber that was away: a dropped connection is never
    reconnected quietly here, it ends the subscription with :class:`FeedInterrupted` (the relay is then restarted,
    and each subscriber resumes from its last position through the stream itself).
    """

    def __init__(self, url: str, table: str) -> None:
        self.url = url
        self.channel = f"tablegraph:stream:{table}"
        self._client: redis.Redis | None = None

    def _connection(self) -> redis.Redis:
        if self._client is None:
            # No retries: a reconnection would resubscribe without a word about the records it missed.
            self._client = redis.Redis.from_url(self.url, retry=Retry(NoBackoff(), 0), socket_connect_timeout=5)
        return self._client

    async def publish(self, line: bytes) -> None:
        try:
            await self._connection().publish(self.channel, line)
        except (RedisError, OSError) as error:
            raise Unavailable(f"the fan-out broker refused a record: {error}") from error

    @asynccontextmanager
    async def subscription(self) -> AsyncIterator[AsyncIterator[bytes]]:
        """Subscribed to the table's channel: what is published from now on, in order."""
        pubsub = self._connection().pubsub()
        try:
            try:
                await pubsub.subscribe(self.channel)
            except (RedisError, OSError) as error:
                raise Unavailable(f"the fan-out broker cannot be reached: {error}") from error
            yield self._lines(pubsub)
        finally:
            with suppress(RedisError, OSError):  # already gone with the broker
                await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _lines(self, pubsub: redis.client.PubSub) -> AsyncIterator[bytes]:
        confirmed = 0
        try:
            async for message in pubsub.listen():
                if message["type"] == "subscribe":
                    confirmed += 1
                    if confirmed > 1:  # subscribed again after a reconnection: what was published meanwhile is lost
                        raise FeedInterrupted("the connection to the fan-out broker was renewed")
                elif message["type"] == "message":
                    yield message["data"]
        except (RedisError, OSError) as error:
            raise FeedInterrupted(f"the connection to the fan-out broker dropped: {error}") from error
        raise FeedInterrupted("the fan-out broker ended the subscription")

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with suppress(RedisError, OSError):
                await client.aclose()
