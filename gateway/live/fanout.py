"""Changes delivered to this process's subscriptions: records recognised as entities, matched to topics, batched.

A record of the stream becomes one :class:`Change`: the entity and ids its image has, the image (the old one for a
delete) and its position. It is delivered to every watch of a topic it belongs to: the item itself
(``("node", <entity>, <pk>, <sk>)``) and each collection it is a member of (``("collection", <name>, <parent
ids>...)``). Every subscriber of a change resolves its selection through :class:`SharedReads`, so the related items
they need go out together as one BatchGetItem, whatever the number of subscribers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence, Sized
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from gateway.config import Settings
from gateway.design.model import Entity, Item, Model
from gateway.design.segments import Case, fold
from gateway.dynamo import streams, wire
from gateway.dynamo.accounting import Ledger, next_round
from gateway.dynamo.store import BatchResult, Key, QueryRequest, QueryResult, Store
from gateway.errors import FeedInterrupted, FellBehind, GatewayError, Unavailable
from gateway.live import relay
from gateway.live.broker import Broker
from gateway.live.supervise import OnCrash, Supervised

log = logging.getLogger(__name__)

Topic = tuple[str, ...]
Held = TypeVar("Held")

KINDS = {"INSERT": "CREATED", "MODIFY": "UPDATED", "REMOVE": "DELETED"}
WATCH_LIMIT = 1000
"""Changes a subscriber may leave unread before it is told it fell behind (it resumes from its last position)."""
_BATCH_WAIT = 0.005
RESUME = "subscribe again with after set to the last position received"


@dataclass(frozen=True)
class Change:
    kind: str
    """CREATED, UPDATED or DELETED."""
    entity: Entity
    ids: dict[str, str]
    item: Item
    """The item as written; for a delete, as it was."""
    position: str
    reads: SharedReads
    published: float = field(default_factory=time.monotonic)
    """When this process received it."""
    restarted: float | None = None
    """For a record read again from a checkpoint: when the reader that read it again started."""

    def reaches(self, began: float) -> bool:
        """Whether a subscriber without a position that began at ``began`` receives it: only what happened after."""
        return self.published >= began and (self.restarted is None or began < self.restarted)


def item_topic(model: Model, entity: Entity, ids: dict[str, str]) -> Topic:
    return ("node", entity.name, *model.key(entity, ids).values())


def collection_topic(name: str, parent: Entity, ids: dict[str, str]) -> Topic:
    """The topic of a parent's collection, by the parent's ids as its keys hold them: a subscriber who typed
    ``Portland HQ`` and a change recognised as ``portland hq`` meet where the parent's key folds the id."""
    folded = parent.folded_ids
    return ("collection", name, *(_as_keyed(ids[field], folded.get(field)) for field in parent.id_fields))


def _as_keyed(value: str, case: Case | None) -> str:
    return value if case is None else fold(value, case)


class Mailbox(Generic[Held]):
    """What arrived for one reader, in the order it arrived, until it is closed; a reader that leaves
    ``WATCH_LIMIT`` unread is told it fell behind once it has read them."""

    __slots__ = ("_arrived", "_closed", "_failure", "_items", "_overflowed")

    def __init__(self) -> None:
        # A list and a future made only while the reader waits, not a deque and an event: an empty deque holds a
        # block of 64 slots (760 bytes) all its life, and an event a deque of waiters; every subscriber and every
        # run has a mailbox, idle most of its life. The list is bounded by WATCH_LIMIT.
        self._items: list[Held] = []
        self._arrived: asyncio.Future[None] | None = None
        self._closed = False
        self._overflowed = False
        self._failure: Exception | None = None

    def put(self, item: Held) -> None:
        if len(self._items) >= WATCH_LIMIT:
            self._overflowed = True
        else:
            self._items.append(item)
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._wake()

    def fail(self, error: Exception) -> None:
        """End with ``error`` once what it holds is read."""
        self._failure = error
        self._wake()

    def _wake(self) -> None:
        arrived = self._arrived
        if arrived is not None and not arrived.done():
            arrived.set_result(None)

    def take(self) -> Held | None:
        """The next item, or None while none waits; once what it holds is read, the failure it ends with, raised."""
        if self._items:
            return self._items.pop(0)
        if self._overflowed:
            raise FellBehind("the subscription fell behind the changes: subscribe again after the last position")
        if self._failure is not None:
            raise self._failure
        return None

    @property
    def closed(self) -> bool:
        """Nothing more will arrive."""
        return self._closed

    async def __aiter__(self) -> AsyncIterator[Held]:
        while True:
            while (item := self.take()) is not None:
                yield item
            if self._closed:
                return
            self._arrived = asyncio.get_running_loop().create_future()
            try:
                await self._arrived
            finally:
                self._arrived = None


class Watch(Mailbox[Change]):
    """The changes of some topics, in the order they arrived, until the feed closes."""

    __slots__ = ("began", "from_now", "listener", "serves", "topics")

    def __init__(self, topics: Sequence[Topic], from_now: bool = False) -> None:
        super().__init__()
        self.topics = tuple(topics)
        self.from_now = from_now
        """Only changes made after it began (a subscription without a position): none read again from a
        checkpoint by a reader that started after it."""
        self.began = time.monotonic()
        self.serves: Sized = (self,)
        """The subscribers it serves: itself, or the members of the shared run it reads for."""
        self.listener: Callable[[], None] | None = None
        """Called whenever something arrives (or it closes, or fails): a reader that holds no task while idle."""

    def _wake(self) -> None:
        super()._wake()
        if self.listener is not None:
            self.listener()


class Feed:
    """This process's subscriptions and the changes that reach them."""

    def __init__(
        self,
        store: Store,
        client: streams.StreamClient | None = None,
        arn: str | None = None,
        on_crash: OnCrash | None = None,
        fanout_url: str = "",
    ) -> None:
        self.store = store
        self.on_crash = on_crash
        self.broker = Broker(fanout_url, store.table) if fanout_url else None
        """Where the records come from when set: a fleet's broker, rather than the lease holder's loopback socket."""
        self.holder_elsewhere = False
        """Seen at start-up, without a broker: the lease is held on another machine."""
        self.supervised: Supervised | None = None
        """The relay, restarted after a crash: None until the first subscription."""
        self.model = store.model
        self.client = client
        self.arn = arn
        self.relay: relay.Relay | None = None
        self._watches: dict[Topic, set[Watch]] = {}
        self._closed = False
        self._replaying = asyncio.Semaphore(1)
        self._relaying: asyncio.Task[None] | None = None
        self._together: SharedReads | None = None

    @classmethod
    @asynccontextmanager
    async def open(cls, settings: Settings, store: Store, on_crash: OnCrash | None = None) -> AsyncIterator[Feed]:
        """The feed of the table's stream, read through the lease; without a stream, subscriptions are refused."""
        async with streams.StreamClient.open(settings, store.model) as client:
            try:
                arn = await client.stream_arn()
            except GatewayError as error:
                log.warning("subscriptions are off: %s", error.message)
                arn = None
            if arn is None:
                log.warning("table %s has no stream with images: subscriptions are refused", store.table)
            feed = cls(store, client, arn, on_crash, settings.fanout_url)
            if arn is not None and feed.broker is None:
                await feed._look_for_the_holder()
            try:
                yield feed
            finally:
                feed.close()
                await relay.cancelled(feed._relaying)
                if feed.broker is not None:
                    await feed.broker.close()

    async def _look_for_the_holder(self) -> None:
        """Say at start-up when the stream's reader is on another machine and no broker carries its records."""
        assert self.client is not None
        try:
            lease = await self.client.lease()
        except GatewayError:
            return  # the relay says more once it runs
        if lease is not None and lease.live and lease.machine and lease.machine != relay.MACHINE:
            self.holder_elsewhere = True
            log.error(
                "the stream's reader of %s is on %s and no fan-out broker is configured: subscribers here would hear "
                "nothing (%s)",
                self.store.table,
                lease.machine,
                relay.UNREACHABLE,
            )

    @property
    def unreachable(self) -> str | None:
        """Why subscriptions here cannot be served (the holder is out of reach), or None."""
        if self.relay is not None:
            return self.relay.unreachable
        return relay.UNREACHABLE if self.holder_elsewhere else None

    @property
    def down(self) -> bool:
        """Whether the relay crashed and has not yet run steadily again: changes wait until it has."""
        return self.supervised is not None and self.supervised.down

    def subscribers(self) -> int:
        """The subscriptions this process serves, a shared run counting each of its members."""
        watches = {id(watch): watch for held in self._watches.values() for watch in held}
        return sum(len(watch.serves) for watch in watches.values())

    def close(self) -> None:
        """End every subscription (shutting down); none starts from now on."""
        self._closed = True
        for watches in self._watches.values():
            for watch in watches:
                watch.close()

    def watch(self, topics: Sequence[Topic], from_now: bool = False) -> Watch:
        """A watch of ``topics``, held until :meth:`unwatch`; Unavailable when subscriptions cannot be served."""
        if self.arn is None:
            raise Unavailable("subscriptions need the table's stream (NEW_AND_OLD_IMAGES): see create-table")
        if self._closed:
            raise Unavailable("the gateway is shutting down; subscribe again in a moment")
        if self.unreachable is not None:
            raise Unavailable(f"subscriptions here would hear nothing: {self.unreachable}")
        if self.broker is not None and self.down and self.relay is not None and not self.relay.connected.is_set():
            # Records published before this process is subscribed again would pass it by.
            raise Unavailable("the fan-out broker is out of reach: subscribe again in a moment")
        if self._relaying is None and self.client is not None:
            # A process reads (or follows) the stream from its first subscription on: one that serves none
            # sends DynamoDB Streams nothing.
            self.relay = relay.Relay(self.client, self.arn, self.publish, broker=self.broker, alarm=self._unreachable)
            self.supervised = Supervised("stream-relay", self.relay.run, self._crashed)
            self._relaying = self.supervised.start()
        watch = Watch(topics, from_now)
        for topic in topics:
            self._watches.setdefault(topic, set()).add(watch)
        return watch

    def unwatch(self, watch: Watch) -> None:
        """Let go of ``watch``: nothing more reaches it."""
        for topic in watch.topics:
            held = self._watches.get(topic)
            if held is not None:
                held.discard(watch)
                if not held:
                    del self._watches[topic]

    def _crashed(self, task: str, crash: str) -> None:
        if self.on_crash is not None:
            self.on_crash(task, crash)
        if self.broker is not None:
            # The broker keeps nothing for a process that was away: each subscriber resumes through the stream.
            self._fail_all(FeedInterrupted(f"the fan-out broker was interrupted (crash {crash}): {RESUME}"))

    def _unreachable(self) -> None:
        self._fail_all(Unavailable(f"subscriptions here hear nothing: {relay.UNREACHABLE}"))

    def _fail_all(self, error: GatewayError) -> None:
        for watches in self._watches.values():
            for watch in watches:
                watch.fail(error)

    def publish(self, record: streams.Record) -> None:
        """Deliver one record of the stream to the watches of its topics."""
        found = self._recognise(record)
        if found is None:
            return
        entity, ids, item = found
        # Read again from a checkpoint: it happened before the reader started, so before any watch that began since.
        started = self.relay.started if record.get("replayed") and self.relay is not None else None
        change = Change(
            KINDS[record["event"]], entity, ids, item, record["position"], self._arriving(), restarted=started
        )
        watches: dict[int, Watch] = {}
        for topic in self._topics(entity, ids):
            for watch in self._watches.get(topic, ()):
                if not watch.from_now or change.reaches(watch.began):
                    watches[id(watch)] = watch
        if not watches:
            return
        change.reads.expect(len(watches))
        for watch in watches.values():
            watch.put(change)

    def _arriving(self) -> SharedReads:
        """The reads of the changes arriving together (a page of the stream, what the broker passed on at once):
        one BatchGetItem for the items all their subscribers need, not one per change."""
        if self._together is None:
            self._together = SharedReads(self.store)
            asyncio.get_running_loop().call_soon(self._arrived)
        return self._together

    def _arrived(self) -> None:
        self._together = None

    async def replay(self, after: str, topics: Sequence[Topic]) -> AsyncIterator[Change]:
        """The changes of ``topics`` after the position ``after``, up to the present."""
        if self.client is None or self.arn is None:
            raise Unavailable("subscriptions need the table's stream (NEW_AND_OLD_IMAGES): see create-table")
        wanted = set(topics)
        found: list[tuple[str, tuple[Entity, dict[str, str], Item], str]] = []
        # A replay reads the stream besides the lease holder: one at a time per process, so that clients
        # reconnecting together (after a deploy) stay within the stream's readers per shard.
        async with self._replaying:
            async for record in relay.replay(self.client, self.arn, after):
                one = self._recognise(record)
                if one is not None and wanted & set(self._topics(one[0], one[1])):
                    found.append((KINDS[record["event"]], one, record["position"]))
        for kind, (entity, ids, item), position in found:
            reads = SharedReads(self.store)
            reads.expect(1)
            yield Change(kind, entity, ids, item, position, reads)

    def _recognise(self, record: streams.Record) -> tuple[Entity, dict[str, str], Item] | None:
        raw = record.get("old" if record["event"] == "REMOVE" else "new")
        if raw is None:
            return None  # a stream without images: nothing to serve
        item = wire.tolerant_decode_item(raw)
        found = self.model.recognise(item)
        if found is None or found[0].internal:
            return None
        return found[0], found[1], item

    def _topics(self, entity: Entity, ids: dict[str, str]) -> list[Topic]:
        topics = [item_topic(self.model, entity, ids)]
        for collection in self.model.collections:
            if collection.member is entity and collection.knows_parent(ids):
                topics.append(collection_topic(collection.name, collection.parent, collection.parent_key(ids)))
        return topics


class SharedReads:
    """The point reads of changes that arrived together, shared by all their subscribers: what they ask for at the
    same time goes out as one BatchGetItem, and an item read for one is not read again for another.

    A batch goes out once every subscriber is waiting for it or done with its change, or a few milliseconds after
    the last one asked (a run resolves its changes one at a time: its second waits for its first). Each
    subscriber's own reader still applies that subscriber's guard to what it gets.
    """

    def __init__(self, store: Store) -> None:  # a view of ``store``: its client and model, not a client of its own
        self._store = store
        self.model = store.model
        self.table = store.table
        self.ledger = Ledger()
        self._expected = 0
        self._finished = 0
        self._waiting = 0
        self._known: dict[tuple[tuple[str, str], ...], Item | None] = {}
        self._sent: dict[tuple[tuple[str, str], ...], asyncio.Future[None]] = {}
        self._next: dict[tuple[tuple[str, str], ...], Key] = {}
        self._batch: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._reading: set[asyncio.Future[None]] = set()

    def expect(self, subscribers: int) -> None:
        """``subscribers`` more will each read what they need of a change, then say they are done."""
        self._expected += subscribers

    def done(self) -> None:
        """One subscriber has read what it needs of the change."""
        self._finished += 1
        self._maybe_send()

    async def batch_get(self, keys: Sequence[Key], ledger: Ledger, round_: int | None = None) -> BatchResult:
        ids = [_key_id(key) for key in keys]
        waits: set[asyncio.Future[None]] = set()
        for key_id, key in zip(ids, keys, strict=True):
            if key_id in self._known:
                continue
            if key_id in self._sent:
                waits.add(self._sent[key_id])
                continue
            if self._batch is None:
                self._batch = asyncio.get_running_loop().create_future()
            self._next[key_id] = key
            self._sent[key_id] = self._batch
            waits.add(self._batch)
        if waits:
            self._waiting += 1
            self._maybe_send()
            try:
                await asyncio.gather(*waits)
            finally:
                self._waiting -= 1
        items = [item for item in (self._known.get(key_id) for key_id in dict.fromkeys(ids)) if item is not None]
        return BatchResult(items, next_round() if round_ is None else round_)

    async def query(self, request: QueryRequest, ledger: Ledger) -> QueryResult:
        return await self._store.query(request, ledger)

    async def query_once(self, request: QueryRequest, ledger: Ledger) -> QueryResult:
        return await self._store.query_once(request, ledger)

    def _maybe_send(self) -> None:
        if self._batch is None:
            return
        if self._timer is not None:
            self._timer.cancel()
        if self._waiting + self._finished >= self._expected:
            self._flush()
        else:
            self._timer = asyncio.get_running_loop().call_later(_BATCH_WAIT, self._flush)

    def _flush(self) -> None:
        batch, keys = self._batch, self._next
        if batch is None:
            return
        self._batch, self._next, self._timer = None, {}, None
        reading = asyncio.ensure_future(self._read(batch, keys))
        self._reading.add(reading)  # held until it ends: the loop keeps only weak references to tasks
        reading.add_done_callback(self._reading.discard)

    async def _read(self, batch: asyncio.Future[None], keys: dict[tuple[tuple[str, str], ...], Key]) -> None:
        try:
            result = await self._store.batch_get(list(keys.values()), self.ledger)
        except Exception as error:  # each subscriber waiting for the batch reports it
            for key_id in keys:
                del self._sent[key_id]
            batch.set_exception(error)
            batch.add_done_callback(lambda done: done.exception())
            return
        found = {_key_id(self.model.key_of(*self.model.item_key(item))): item for item in result.items}
        for key_id in keys:
            self._known[key_id] = found.get(key_id)
        batch.set_result(None)


def _key_id(key: Key | dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(key.items()))
