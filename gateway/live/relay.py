"""One reader of the table's stream per table: it follows every shard, holds the lease, and relays each record.

DynamoDB Streams serves about two concurrent readers per shard, so whatever the number of worker processes, one
of them reads: it holds a lease item in the table (taken with a conditional write, renewed, taken over when it
lapses) that names a socket on 127.0.0.1 where it passes every record on to the other processes. The lease also
keeps the holder's checkpoint, the last sequence number read per shard, so the process that takes it over reads on
from there rather than from the latest record, and subscribers connected anywhere lose nothing at a takeover.

With a broker (``fanout_url``, :mod:`gateway.live.broker`) the holder publishes each record there instead, and every
process, the holder's too, receives the records from the broker: gateways on several machines share them. The
lease's checkpoint is then what was published, so a holder that crashes mid-record is taken over from a record
every subscriber received. Without a broker, a process that finds the holder on another machine (or cannot reach
it while it keeps renewing the lease) says so: ``unreachable`` is what readiness reports.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import secrets
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.dynamo.streams import (
    Lease,
    Position,
    Publish,
    Record,
    Shard,
    StreamClient,
    parse_position,
    position,
)
from gateway.errors import GatewayError, PositionExpired, Unavailable
from gateway.live.broker import Broker

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
    catching_up: set[str] = field(default_factory=set)
    """The shards resumed from a checkpoint whose present is not reached yet."""

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
        # Resumed from a checkpoint, the first records are from before this reader started: marked, until the
        # shard's present is reached, so that subscriptions that began since are not handed them as new.
        catching_up = kind == "AFTER_SEQUENCE_NUMBER"
        if catching_up:
            self.catching_up.add(shard)
        try:
            while iterator is not None:
                records, iterator = await self.client.records(iterator)
                for record in records:
                    self.checkpoint[shard] = record.pop("sequence")
                    if parent is not None:
                        # Read to its end before this shard started: its child's place stands for it.
                        self.checkpoint.pop(parent, None)
                    record["position"] = position(self.checkpoint, record.pop("time"))
                    if catching_up:
                        record["replayed"] = True
                    self.publish(record)
                if not records:
                    catching_up = False
                    self.catching_up.discard(shard)
                    if iterator is not None:
                        await asyncio.sleep(self.poll)
        finally:
            self.reading.discard(shard)
            self.catching_up.discard(shard)


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

MACHINE = socket.gethostname()
"""This machine as the lease names it: a holder's loopback address is reachable from the same machine only."""
BROKER_ADDRESS = "broker"
"""The lease's address while its holder publishes to a broker: nobody connects to the holder."""
UNREACHABLE = "unreachable holder: configure TABLEGRAPH_FANOUT_URL"
"""What readiness says when the stream's reader is on another machine and no broker carries its records."""


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
        broker: Broker | None = None,
        alarm: Callable[[], None] | None = None,
    ) -> None:
        self.client = client
        self.arn = arn
        self._publish = publish
        self._broker = broker
        self._alarm = alarm
        """Told when the holder turns out to be unreachable."""
        # The process id leads, so that an operator (or a test) can tell which process holds the lease.
        self.holder = f"{os.getpid()}.{uuid.uuid4().hex}"
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
        self.checkpoint: dict[str, str] = {}
        """Where this process's last reader got to: a restart after a crash reads on from here."""
        self.started = time.monotonic()
        """When this process began receiving records as it does now: a subscription older than that is owed the
        records read again from a checkpoint (``replayed``); a newer one is not, they predate it."""
        self._begun = False
        self.unreachable: str | None = None
        """Why this process receives nothing: the holder is on another machine, or does not answer; None when fine."""
        self._outbox: asyncio.Queue[tuple[bytes, str]] = asyncio.Queue()
        self._silent_since: tuple[str, float] | None = None
        self._replaying = False

    async def run(self) -> None:
        if self._broker is not None:
            self.address = BROKER_ADDRESS
            await self._through(self._broker)
            return
        self._server = await asyncio.start_server(self._follower, "127.0.0.1", 0)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.address = f"{host}:{port}"
        try:
            await self._contend()
        except asyncio.CancelledError:
            # Shutting down: another process takes over at once. After a crash the lease keeps its checkpoint.
            await self.client.release(self.holder)
            raise
        finally:
            self._server.close()
            for writer in self._followers:
                writer.close()

    async def _through(self, broker: Broker) -> None:
        """Contends for the lease, publishes while holding it, and delivers what the broker passes on, until one of
        them fails: the relay then ends (and is restarted) whole."""
        self._outbox = asyncio.Queue()
        async with broker.subscription() as lines:
            tasks = {
                asyncio.create_task(self._listen(lines)),
                asyncio.create_task(self._send(broker)),
                asyncio.create_task(self._contend()),
            }
            try:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()
                raise Unavailable("the relay through the fan-out broker stopped")
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                # Whatever ended it, another process may take over from what was published, at once.
                await self.client.release(self.holder)
                await broker.close()  # a restart connects afresh: a pooled connection may be the dead broker's

    async def _listen(self, lines: AsyncIterator[bytes]) -> None:
        self._begin()
        self.connected.set()
        try:
            async for line in lines:
                record = _record_of(line)
                if record is None:
                    continue
                if record.get("replayed"):
                    if not self._replaying:
                        # A reader took over from a checkpoint: subscriptions older than this are owed the records.
                        self.started = time.monotonic()
                    self._replaying = True
                else:
                    self._replaying = False
                _deliver(self._publish, record)
        finally:
            self.connected.clear()

    async def _send(self, broker: Broker) -> None:
        """Publishes the records this process reads, in order; the checkpoint follows what was published."""
        while True:
            line, at = await self._outbox.get()
            await broker.publish(line)
            self.checkpoint = dict(parse_position(at).shards)

    async def _contend(self) -> None:
        while True:
            try:
                lease = await self.client.lease()
            except GatewayError as error:
                log.warning("the stream lease cannot be read, trying again: %s", error.message)
                await asyncio.sleep(self._retry)
                continue
            if lease is None or not lease.live or lease.holder == self.holder:
                checkpoint = lease.checkpoint if lease is not None else {}
                if self.checkpoint and (lease is None or lease.holder == self.holder):
                    checkpoint = self.checkpoint  # ahead of the lease's, renewed only every few seconds
                if await self._take(checkpoint):
                    await self._hold(checkpoint)
                    continue
                lease = await self.client.lease()
            if lease is not None and lease.live and lease.holder != self.holder and self._broker is None:
                await self._follow_holder(lease)
            await asyncio.sleep(self._retry)

    async def _follow_holder(self, lease: Lease) -> None:
        if lease.machine and lease.machine != MACHINE:
            self._cannot_reach(f"the stream's reader is on {lease.machine}")
            return
        if await self._receive(lease.address, lease.secret):
            self._silent_since = None
            return
        # Refused while the lease stays renewed by the same holder: a holder on some other machine (behind an
        # older gateway that named none), not one that just died, whose lease lapses.
        now = time.monotonic()
        if self._silent_since is None or self._silent_since[0] != lease.holder:
            self._silent_since = (lease.holder, now)
        elif now - self._silent_since[1] > self.lease_seconds:
            self._cannot_reach(f"the stream's reader at {lease.address} does not answer")

    def _cannot_reach(self, why: str) -> None:
        if self.unreachable is None:
            log.error("%s and no fan-out broker is configured: subscribers here hear nothing (%s)", why, UNREACHABLE)
            self.unreachable = UNREACHABLE
            if self._alarm is not None:
                self._alarm()

    def _begin(self) -> None:
        """Taking the lease over, or following another holder, after a crash or a takeover: from now."""
        if self._begun:
            self.started = time.monotonic()
        self._begun = True

    async def _hold(self, checkpoint: dict[str, str]) -> None:
        log.info("process %s reads the stream of %s", self.holder, self.client.table)
        self.unreachable = None
        reader = self.reader = StreamReader(
            self.client, self.arn, self._fan_out, dict(checkpoint), self._poll, self._discover
        )
        if self._broker is None:
            self._begin()
            self.checkpoint = reader.checkpoint
        else:
            self.checkpoint = dict(checkpoint)  # then what was published, as ``_send`` goes
        reading = asyncio.create_task(reader.run())
        loop = asyncio.get_running_loop()
        # A lease without a checkpoint would be taken over from the stream's latest record, past what this reader
        # read: its first place is written as soon as it has one, not a renewal later.
        placed, due = bool(checkpoint), loop.time() + self.lease_seconds / 3
        try:
            while not reading.done():
                await asyncio.wait({reading}, timeout=self.lease_seconds / 3 if placed else self._poll)
                if reading.done():
                    break
                if not placed and not self.checkpoint and loop.time() < due:
                    continue
                if not await self._take(dict(self.checkpoint)):
                    log.warning("process %s lost the stream lease", self.holder)
                    break
                placed, due = bool(self.checkpoint), loop.time() + self.lease_seconds / 3
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
            return await self.client.take_lease(
                self.holder, self.address, self._secret, self.lease_seconds, checkpoint, MACHINE
            )
        except GatewayError as error:
            log.warning("the stream lease cannot be written: %s", error.message)
            return False

    def _fan_out(self, record: Record) -> None:
        if self._broker is not None:
            line = _line(record)
            if line is not None:
                self._outbox.put_nowait((line, record["position"]))
            return
        _deliver(self._publish, record)
        line = _line(record)
        if line is None:
            return
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

    async def _receive(self, address: str, secret: str) -> bool:
        """Delivers the holder's records until it goes; False when it could not be reached."""
        host, _, port = address.rpartition(":")
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
        except (OSError, ValueError):
            return False  # the holder is gone (its lease lapses soon), or is not on this machine
        writer.write(secret.encode() + b"\n")
        self.unreachable = None
        self._begin()
        self.connected.set()
        try:
            while line := await reader.readline():
                record = _record_of(line)
                if record is not None:
                    _deliver(self._publish, record)
        except ConnectionError:
            pass
        finally:
            self.connected.clear()
            writer.close()
        return True


def _line(record: Record) -> bytes | None:
    """``record`` as one line for the other processes; None (logged) when it cannot be written at all."""
    try:
        return orjson.dumps(record) + b"\n"
    except orjson.JSONEncodeError:
        pass
    try:
        # DynamoDB stores text that UTF-8 cannot carry (a lone surrogate); an ASCII escape carries it as stored.
        return json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"
    except (TypeError, ValueError):
        log.error("a stream record could not be passed on to the other processes: %s", record.get("position"))
        return None


def _record_of(line: bytes) -> Record | None:
    try:
        found: Record = orjson.loads(line)
        return found
    except orjson.JSONDecodeError:
        pass
    try:
        found = json.loads(line)  # keeps what orjson refuses: a lone surrogate escape
    except ValueError:
        log.error("a line from the stream's reader was not a record; it was skipped")
        return None
    return found if isinstance(found, dict) else None


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
