"""One reader of the table's stream per table: it follows every shard, holds the lease, and relays each record.

DynamoDB Streams serves about two concurrent readers per shard, so whatever the number of worker processes, one
of them reads: it holds a lease item in the table (taken with a conditional write, renewed, taken over when it
lapses) that names a socket on 127.0.0.1 where it passes every record on to the other processes. The lease also
keeps the holder's checkpoint, the last sequence number read per shard, so the process that takes it over reads on
from there rather than from the latest record, and subscribers connected anywhere lose nothing at a takeover.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import uuid
from collections.abc import AsyncIterator, Awaitable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.dynamo.streams import Position, Publish, Record, Shard, StreamClient, parse_position, position
from gateway.errors import GatewayError, PositionExpired

log = logging.getLogger(__name__)

# --- reading ------------------------------------------------------------------------------------------------------


@dataclass
class StreamReader:
    """Follows every shard of a stream, in order: a child shard starts once its parent is read to its end."""

    client: StreamClient
    arn: str
    publish: Publish
    checkpoint: dict[str, str] = field(default_factory=dict)
    """The last sequence number read per shard: where a process that takes the lease over reads on from."""
    poll: float = 0.25
    discover: float = 2.0
    reading: set[str] = field(default_factory=set)
    """The shards being read now: a change written from here on is delivered."""

    async def run(self) -> None:
        following: dict[str, asyncio.Task[None]] = {}
        done: set[str] = set()
        resumed = dict(self.checkpoint)
        first = True
        try:
            while True:
                shards = await self.client.shards(self.arn)
                known = {shard.id for shard in shards}
                for shard_id, task in list(following.items()):
                    if task.done():
                        task.result()  # a shard that failed fails the reader
                        done.add(shard_id)
                        del following[shard_id]
                for shard in shards:
                    if shard.id in following or shard.id in done:
                        continue
                    if shard.parent in known and shard.parent not in done:
                        continue  # its parent's records come first
                    if shard.id in resumed:
                        start: tuple[str, str | None] = ("AFTER_SEQUENCE_NUMBER", resumed[shard.id])
                    elif first and not resumed:
                        if shard.closed:
                            done.add(shard.id)  # history from before this gateway started
                            continue
                        start = ("LATEST", None)
                    else:
                        start = ("TRIM_HORIZON", None)
                    following[shard.id] = asyncio.create_task(self._follow(shard.id, shard.parent, *start))
                first = False
                await asyncio.sleep(self.discover)
        finally:
            for task in following.values():
                task.cancel()
            await asyncio.gather(*following.values(), return_exceptions=True)

    async def _follow(self, shard: str, parent: str | None, kind: str, sequence: str | None) -> None:
        try:
            iterator: str | None = await self.client.iterator(self.arn, shard, kind, sequence)
        except PositionExpired:
            # The checkpoint is older than the stream's retention (every reader was down that long).
            log.warning("the stream no longer holds shard %s from its checkpoint: reading what it keeps", shard)
            iterator = await self.client.iterator(self.arn, shard, "TRIM_HORIZON")
        self.reading.add(shard)
        try:
            while iterator is not None:
                records, iterator = await self.client.records(iterator)
                for record in records:
                    self.checkpoint[shard] = record.pop("sequence")
                    if parent is not None:
                        # Read to its end before this shard started: its child's place stands for it.
                        self.checkpoint.pop(parent, None)
                    record["position"] = position(self.checkpoint, record.pop("time"))
                    self.publish(record)
                if not records and iterator is not None:
                    await asyncio.sleep(self.poll)
        finally:
            self.reading.discard(shard)


async def replay(client: StreamClient, arn: str, after: str) -> AsyncIterator[Record]:
    """The records after the position ``after``, up to the stream's present, each shard in order and a child after
    its parent. PositionExpired when the stream no longer holds that position."""
    at = parse_position(after)
    shards = await client.shards(arn)
    if not set(at.shards) <= {one.id for one in shards}:
        raise PositionExpired("the stream no longer holds this position: read again, then subscribe without one")
    places = dict(at.shards)
    for shard, (kind, sequence) in replay_starts(shards, at).items():
        iterator: str | None = await client.iterator(arn, shard, kind, sequence)
        while iterator is not None:
            records, iterator = await client.records(iterator)
            for record in records:
                places[shard] = record.pop("sequence")
                created = record.pop("time")
                if kind == "TRIM_HORIZON" and shard not in at.shards and created < at.time - REPLAY_SLACK:
                    continue  # from before the position, on a shard it had not read yet
                record["position"] = position(places, created)
                yield record
            if not records:
                break  # caught up with the present


REPLAY_SLACK = 60
"""Seconds before a position's change from which a replay reads a shard the position holds no place in: a shard
opened after the change, or one the reader had not yet read from (it polls every shard several times a second)."""


def replay_starts(shards: list[Shard], at: Position) -> dict[str, tuple[str, str | None]]:
    """Where a replay from ``at`` reads each shard, in an order that puts every parent before its children: after
    its place for a shard the position holds; from its start for a shard that descends from one, or that is open
    and unrelated to any (nothing of it was read). A shard read to its end before the position (an ancestor of one
    it holds) or closed before it (history) is not read."""
    by_id = {one.id: one for one in shards}
    children: dict[str, list[str]] = {}
    for one in shards:
        if one.parent in by_id:
            children.setdefault(one.parent, []).append(one.id)

    def descendants(shard: str) -> set[str]:
        found = set(children.get(shard, []))
        for child in list(found):
            found |= descendants(child)
        return found

    def ancestors(shard: str) -> list[str]:
        out = []
        parent = by_id[shard].parent
        while parent in by_id:
            out.append(parent)
            parent = by_id[parent].parent
        return out

    def depth(shard: str) -> int:
        return len(ancestors(shard))

    starts: dict[str, tuple[str, str | None]] = {}
    for one in sorted(shards, key=lambda shard: (depth(shard.id), shard.id)):
        if one.id in at.shards:
            starts[one.id] = ("AFTER_SEQUENCE_NUMBER", at.shards[one.id])
        elif any(ancestor in at.shards for ancestor in ancestors(one.id)):
            starts[one.id] = ("TRIM_HORIZON", None)
        elif descendants(one.id) & at.shards.keys() or one.closed:
            continue
        else:
            starts[one.id] = ("TRIM_HORIZON", None)
    return starts


# --- one reader per table: the lease and the fan-out -------------------------------------------------------------


class Relay:
    """This process's share of the stream: read by itself while it holds the lease, else received from the holder.

    ``publish`` is called with every record, in stream order per shard, whichever process read it.
    """

    def __init__(
        self,
        client: StreamClient,
        arn: str,
        publish: Publish,
        *,
        lease_seconds: float = 10.0,
        retry: float = 0.5,
        poll: float = 0.25,
        discover: float = 2.0,
    ) -> None:
        self.client = client
        self.arn = arn
        self._publish = publish
        self.holder = uuid.uuid4().hex
        self._secret = secrets.token_hex(16)
        self.lease_seconds = lease_seconds
        self._retry = retry
        self._poll = poll
        self._discover = discover
        self._followers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.address = ""
        self.reader: StreamReader | None = None
        """The stream's reader while this process holds the lease."""
        self.connected = asyncio.Event()
        """Set while this process receives the holder's records."""

    async def run(self) -> None:
        self._server = await asyncio.start_server(self._follower, "127.0.0.1", 0)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.address = f"{host}:{port}"
        try:
            while True:
                try:
                    lease = await self.client.lease()
                except GatewayError as error:
                    log.warning("the stream lease cannot be read, trying again: %s", error.message)
                    await asyncio.sleep(self._retry)
                    continue
                if lease is None or not lease.live or lease.holder == self.holder:
                    checkpoint = lease.checkpoint if lease is not None else {}
                    if await self._take(checkpoint):
                        await self._hold(checkpoint)
                        continue
                    lease = await self.client.lease()
                if lease is not None and lease.live and lease.holder != self.holder:
                    await self._receive(lease.address, lease.secret)
                await asyncio.sleep(self._retry)
        finally:
            self._server.close()
            for writer in self._followers:
                writer.close()
            await self.client.release(self.holder)

    async def _hold(self, checkpoint: dict[str, str]) -> None:
        log.info("process %s reads the stream of %s", self.holder, self.client.table)
        reader = self.reader = StreamReader(
            self.client, self.arn, self._fan_out, dict(checkpoint), self._poll, self._discover
        )
        reading = asyncio.create_task(reader.run())
        try:
            while not reading.done():
                await asyncio.wait({reading}, timeout=self.lease_seconds / 3)
                if reading.done():
                    break
                if not await self._take(dict(reader.checkpoint)):
                    log.warning("process %s lost the stream lease", self.holder)
                    break
            if reading.done():
                reading.result()
        except GatewayError as error:
            log.warning("reading the stream failed, trying again: %s", error)
        finally:
            self.reader = None
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)

    async def _take(self, checkpoint: dict[str, str]) -> bool:
        try:
            return await self.client.take_lease(self.holder, self.address, self._secret, self.lease_seconds, checkpoint)
        except GatewayError as error:
            log.warning("the stream lease cannot be written: %s", error.message)
            return False

    def _fan_out(self, record: Record) -> None:
        _deliver(self._publish, record)
        line = orjson.dumps(record) + b"\n"
        for writer in list(self._followers):
            if writer.is_closing():
                self._followers.discard(writer)
                continue
            writer.write(line)

    async def _follower(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with suppress(ConnectionError, TimeoutError):
            shown = await asyncio.wait_for(reader.readline(), 5)
            if hmac.compare_digest(shown, self._secret.encode() + b"\n"):
                self._followers.add(writer)
                await reader.read()  # followers send nothing more: this returns when they go
        self._followers.discard(writer)
        writer.close()

    async def _receive(self, address: str, secret: str) -> None:
        host, _, port = address.rpartition(":")
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
        except OSError:
            return  # the holder is gone; its lease lapses soon
        writer.write(secret.encode() + b"\n")
        self.connected.set()
        try:
            while line := await reader.readline():
                _deliver(self._publish, orjson.loads(line))
        except (ConnectionError, orjson.JSONDecodeError):
            pass
        finally:
            self.connected.clear()
            writer.close()


def _deliver(publish: Publish, record: Record) -> None:
    try:
        publish(record)
    except Exception:  # one record this process cannot deliver must not stop the others
        log.exception("a stream record could not be delivered: %s", record.get("position"))


async def cancelled(task: Awaitable[Any] | None) -> None:
    """Cancel ``task`` and wait for it to end."""
    if isinstance(task, asyncio.Task):
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
