"""The per-request reader: batched point reads, memoised pages, and look-ahead that starts requests early.

One Reader lives for one GraphQL request, so its caches never serve one caller's data to another.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Protocol

from aiodataloader import DataLoader
from graphql import GraphQLResolveInfo

from gateway.config import Settings
from gateway.design.keys import Ids
from gateway.design.model import Collection, Entity, Item, Lookup, Model
from gateway.dynamo import accounting, wire
from gateway.dynamo.accounting import Ledger, current_round, next_round, reached
from gateway.dynamo.store import BatchResult, Key, QueryRequest, QueryResult
from gateway.errors import DataMismatch
from gateway.execution import queries
from gateway.execution.cursors import CursorCodec
from gateway.execution.guard import Guard
from gateway.execution.selection import Field, Scope, Selections, children
from gateway.execution.walk import TooLarge, Walk, beside

log = logging.getLogger(__name__)

_FOLLOW_UP = 100

_ItemKey = tuple[str, str]
_PageKey = tuple[str, queries.Window]
_Recognised = tuple[Entity, dict[str, str]] | None
"""The entity and ids an item was recognised as; None for an unknown shape."""
_Read = tuple[Item, _Recognised]
"""An item as read, with what it was recognised as."""


@dataclass(eq=False)
class Member:
    """A page's member: its ids, its item and its position for a cursor. Not frozen: a page of a hundred makes a
    hundred, and a frozen dataclass's ``__init__`` costs three times as much (one ``object.__setattr__`` a field)."""

    ids: dict[str, str]
    item: Item
    _codec: CursorCodec
    _binding: str
    _position: dict[str, str]
    entity: Entity | None = None
    """The entity the item was recognised as: one of a union's kinds (None where reading stopped)."""

    @cached_property
    def cursor(self) -> str:
        """Signed when asked for: most queries read a page's nodes and at most its end cursor."""
        return self._codec.encode(self._binding, self._position)


@dataclass(frozen=True)
class Page:
    members: list[Member]
    """In the order asked for, whichever way the page was read."""
    has_next: bool
    has_previous: bool
    round: int
    """The round of the Query that answered; what is read for these members comes after it."""
    stopped: Member | None = None
    """A filtered page that spent its read budget before it filled: where reading stopped, a position past the
    last member (before the first, read backwards), from which the next page reads on."""
    backward: bool = False
    mismatch: DataMismatch | None = None
    """An item among the page's that has a member's key but reads as no entity (``Model.mismatch``): the page
    contradicts the table, and its field reports this rather than serve it short."""

    @property
    def start_cursor(self) -> str | None:
        if self.stopped is not None and self.backward:
            return self.stopped.cursor
        return self.members[0].cursor if self.members else None

    @property
    def end_cursor(self) -> str | None:
        if self.stopped is not None and not self.backward:
            return self.stopped.cursor
        return self.members[-1].cursor if self.members else None


class Reads(Protocol):
    """What a reader reads through: the store, or the reads one stream change shares among its subscribers."""

    model: Model

    async def batch_get(self, keys: Sequence[Key], ledger: Ledger, round_: int | None = None) -> BatchResult: ...

    async def query(self, request: QueryRequest, ledger: Ledger) -> QueryResult: ...

    async def query_once(self, request: QueryRequest, ledger: Ledger) -> QueryResult: ...


class Reader:
    """Every read of one request; the guard sees each key before the store is asked for it."""

    def __init__(
        self,
        store: Reads,
        settings: Settings,
        codec: CursorCodec,
        ledger: Ledger,
        guard: Guard,
        request_id: str = "",
    ) -> None:
        self.store = store
        self.model: Model = store.model
        self.ledger = ledger
        self.guard = guard
        self._settings = settings
        self._codec = codec
        self._request_id = request_id
        # The fast decoder marks the items it could not read faithfully; botocore's stock parser does not.
        self._check_items = not settings.fast_decode
        self._key_attributes = frozenset(name for index in self.model.indexes for name in index.attributes)
        self._items: DataLoader[_ItemKey, Item | None] = DataLoader(_weakly(self._load_items))
        # The round each key was first asked for in, and the round of the answer that holds it.
        self._asked: dict[_ItemKey, int] = {}
        self._answered: dict[_ItemKey, int] = {}
        # Items that came with a Query (members, parents): served to point reads without a future each.
        self._known: dict[_ItemKey, Item | None] = {}
        self._pages: dict[_PageKey, asyncio.Future[Page]] = {}
        # What each item this request holds was recognised as, by the item's identity (the item is kept beside it,
        # so its identity is not reused): the page, the walk and the objects built ask about the same items.
        self._recognised: dict[int, tuple[Item, _Recognised]] = {}
        self._walk: asyncio.Future[None] | None = None
        self._shared: Selections | None = None
        self._selections: Selections = {}

    def share(self, selections: Selections) -> None:
        """Read the operation's selections from ``selections``, kept across the requests that send the same
        document with the same variables, whose values the selections depend on."""
        self._shared = selections

    def selections(self, info: GraphQLResolveInfo[Any]) -> Selections:
        """Where this request keeps the selections it reads (``Scope.selections``): the document's, shared with its
        requests of the same variables (``Prepared.selections_of``), else its own, since the walk and the resolvers
        ask again for each object."""
        return self._shared if self._shared is not None else self._selections

    def forget(self) -> None:
        """Drop what this request has read so far: a write is about to change it."""
        self._items.clear_all()
        self._asked.clear()
        self._answered.clear()
        self._known.clear()
        self._pages.clear()
        self._recognised.clear()

    async def settle(self) -> None:
        """Wait for reads started ahead that nobody awaited (their parent was null): a request leaves nothing
        running behind it, and its accounting counts every call it made."""
        started: list[asyncio.Future[Any]] = [*self._pages.values(), *([self._walk] if self._walk is not None else [])]
        running: list[asyncio.Future[Any]] = []
        for one in started:
            if not one.done():
                running.append(one)
            elif not one.cancelled():
                one.exception()  # seen, as gathering it would have seen it
        if running:  # most requests have read all they started: no gathering to wait for
            await asyncio.gather(*running, return_exceptions=True)

    # --- point reads ----------------------------------------------------------------------------------------

    async def get(self, entity: Entity, ids: Ids) -> Item | None:
        """One item by its ids; reads asked for in the same tick go out together as BatchGetItem.

        Forbidden when the key names a tenant the caller was not granted; None when the item turns out to
        belong to such a tenant (its tenant was not in the key), as if it did not exist.
        """
        self.guard.check_item(entity, ids)
        if entity.partition:
            return self._visible(entity, dict(self.model.key(entity, ids)))
        key = self._item_key(entity, ids)
        item = self._known[key] if key in self._known else await self._load(key)
        reached(self._answered.get(key, 0))
        return self._visible(entity, item)

    async def get_many(self, entity: Entity, ids: Sequence[Ids]) -> list[Item | None]:
        """Items by their ids, in order; Forbidden, with nothing read, when any key is not the caller's."""
        for one in ids:
            self.guard.check_item(entity, one)
        if entity.partition:
            return [self._visible(entity, dict(self.model.key(entity, one))) for one in ids]
        keys = [self._item_key(entity, one) for one in ids]
        known = self._known
        missing = [key for key in keys if key not in known]
        loaded = dict(zip(missing, await asyncio.gather(*(self._load(key) for key in missing)), strict=True))
        items = [known[key] if key in known else loaded[key] for key in keys]
        reached(max((self._answered.get(key, 0) for key in keys), default=0))
        return [self._visible(entity, item) for item in items]

    def screen(self, item: Item) -> Item:
        """``item``, or a ``wire.Unreadable`` copy (logged) when it holds what a response cannot carry."""
        checked = wire.checked(item)
        if isinstance(checked, wire.Unreadable):
            self._report(checked)
        return checked

    def _screened(self, items: list[Item]) -> list[Item]:
        if self._check_items:
            return [self.screen(item) for item in items]
        for item in items:
            if isinstance(item, wire.Unreadable):
                self._report(item)
        return items

    def _report(self, item: wire.Unreadable) -> None:
        # %r: a lone surrogate in a key would break a log handler that writes UTF-8.
        table = self.model.index(None)
        log.warning(
            "request %s: %r holds attributes that are not valid Unicode or cannot be decoded (%s); "
            "they are answered with UNREADABLE_ITEM errors",
            self._request_id,
            {name: item.get(name) for name in table.attributes},
            ", ".join(sorted(repr(name) for name in item.invalid)),
        )

    def _visible(self, entity: Entity, item: Item | None) -> Item | None:
        return item if item is None or self.guard.visible(entity, item) else None

    def _item_key(self, entity: Entity, ids: Ids) -> _ItemKey:
        return self.model.item_key(self.model.key(entity, ids))

    def _prime(self, key: _ItemKey, item: Item | None, round_: int) -> None:
        if key not in self._answered:
            self._answered[key] = round_
            self._known[key] = item

    def _load(self, key: _ItemKey) -> asyncio.Future[Item | None]:
        self._asked.setdefault(key, next_round())
        return self._items.load(key)

    async def _load_items(self, keys: list[_ItemKey]) -> list[Item | None]:
        model = self.model
        asked = max(self._asked[key] for key in keys)
        result = await self.store.batch_get([model.key_of(*key) for key in keys], self.ledger, asked)
        self._answered.update(dict.fromkeys(keys, result.round))
        found = {model.item_key(item): item for item in self._screened(result.items)}
        return [found.get(key) for key in keys]

    # --- pages ----------------------------------------------------------------------------------------------

    def window(self, args: Mapping[str, Any], first_given: bool, collection: Collection) -> queries.Window:
        """The page a connection's arguments ask for, with this gateway's page sizes."""
        settings = self._settings
        numeric = queries.sorts_by_number(self.model, collection)
        return queries.window(
            args, first_given, settings.default_page_size, settings.max_page_size, collection, numeric
        )

    async def page(self, collection: Collection, parent_ids: Ids, window: queries.Window) -> Page:
        """A page of ``collection``; the same page asked for twice in one request is read once."""
        self.guard.check_query(collection, parent_ids)
        key = self._page_key(collection, parent_ids, window)
        if key not in self._pages:
            self._pages[key] = _detach(asyncio.ensure_future(self._read_page(collection, parent_ids, window)))
        page = await self._pages[key]
        reached(page.round)
        return page

    async def _read_page(self, collection: Collection, parent_ids: Ids, window: queries.Window) -> Page:
        cursor = window.cursor
        start_key = self._decode_cursor(collection, parent_ids, cursor, window.argument) if cursor is not None else None
        if collection.shards > 1:
            return await self._read_shards(collection, parent_ids, window, start_key)
        request = queries.members_query(self.model, collection, parent_ids, window.size, start_key, window)
        if window.filter is None:
            read, _ = await self._query_members(collection, request, window.size)
            return self._make_page(collection, parent_ids, read, window, current_round())
        read, stopped = await self._query_filtered(collection, request, window.size)
        return self._make_page(collection, parent_ids, read, window, current_round(), stopped)

    async def _read_shards(
        self, collection: Collection, parent_ids: Ids, window: queries.Window, start_key: Key | None
    ) -> Page:
        """A page of a sharded collection: one Query per shard, all sent at once, each for the whole page; their
        members merged by sort key, the way the page reads."""
        requests = [
            queries.members_query(self.model, collection, parent_ids, window.size, start_key, window, shard)
            for shard in range(collection.shards)
        ]
        filtered = window.filter is not None
        read = self._query_filtered if filtered else self._query_members
        answers = await accounting.gather(*(read(collection, request, window.size) for request in requests))
        sort_key = self.model.index(collection.index).sk
        assert sort_key is not None  # a shard is picked by an id of the sort key (the model's validation)
        descending = not window.ascending(collection)
        merged = list(heapq.merge(*(one for one, _ in answers), key=lambda one: one[0][sort_key], reverse=descending))
        # A filtered shard that spent its budget has read up to where it stopped and no further: the page holds
        # what sorts up to the earliest such stop, and resumes there when that is less than a page.
        stops = [stopped for _, stopped in answers if stopped is not None] if filtered else []
        stopped_at = None
        if stops:
            stopped_at = (max if descending else min)(stops, key=lambda key: key[sort_key])
            limit = stopped_at[sort_key]
            merged = [one for one in merged if (one[0][sort_key] >= limit if descending else one[0][sort_key] <= limit)]
            if _count(collection.members, merged) > window.size:
                stopped_at = None
        return self._make_page(collection, parent_ids, merged, window, current_round(), stopped_at)

    async def _query_filtered(
        self, collection: Collection, request: QueryRequest, size: int
    ) -> tuple[list[_Read], Key | None]:
        """Members a filter keeps, up to ``size + 1``, read on within the budget; and, when the budget ran out
        first, the key where reading stopped."""
        read: list[_Read] = []
        start_key = request.start_key
        for limit in queries.filter_limits(size, self._settings.filter_read_calls):
            result = await self.store.query_once(replace(request, limit=limit, start_key=start_key), self.ledger)
            read += self._recognise(self._screened(result.items))
            start_key = result.last_key
            if start_key is None or _count(collection.members, read) > size:
                return read, None
        return read, start_key

    async def _query_members(
        self, collection: Collection, request: QueryRequest, size: int
    ) -> tuple[list[_Read], Key | None]:
        """Members up to ``size + 1``, each item recognised once; an item of unknown shape in the range is skipped
        and more are read."""
        result = await self.store.query(request, self.ledger)
        read = self._recognise(self._screened(result.items))
        while result.last_key is not None and _count(collection.members, read) <= size:
            # Items of other shapes sat among the members: read on in large steps, not one item at a time.
            missing = size + 1 - _count(collection.members, read)
            more = replace(request, limit=max(missing, _FOLLOW_UP), start_key=result.last_key)
            result = await self.store.query(more, self.ledger)
            read = read + self._recognise(self._screened(result.items))
        return read, result.last_key

    def _recognise(self, items: list[Item]) -> list[_Read]:
        recognised, unreadable = self.recognised, wire.Unreadable
        # ``_named`` written out: this runs for every item read.
        return [
            (item, recognised(item) if type(item) is not unreadable or self._identified(item) else None)
            for item in items
        ]

    def recognised(self, item: Item) -> _Recognised:
        """``Model.recognise`` of ``item``, once per request: parsing an item's keys is most of what recognising
        costs, and a page's member is asked about again by the walk and by the object built from it."""
        held = self._recognised.get(id(item))
        if held is not None and held[0] is item:
            return held[1]
        found = self.model.recognise(item)
        self._recognised[id(item)] = (item, found)
        return found

    def _named(self, item: Item) -> bool:
        """Whether the item's key is valid text, as any item's is but an unreadable one's may not be."""
        return type(item) is not wire.Unreadable or self._identified(item)

    def _identified(self, item: wire.Unreadable) -> bool:
        """Whether the item's key is valid text: one that is not names no object a client could ask for, so the
        item is of unknown shape."""
        return item.invalid.isdisjoint(self._key_attributes)

    def _make_page(
        self,
        collection: Collection,
        parent_ids: Ids,
        read: list[_Read],
        window: queries.Window,
        round_: int,
        stopped_at: Key | None = None,
    ) -> Page:
        binding = queries.binding(collection, parent_ids)
        fields = self.model.position_fields(collection)
        item_key = self.model.item_key
        members: list[Member] = []
        # Positions are text: a number or binary key's value is turned into it (text keys are as read).
        text = self.model.id_text if self.model.key_types else None
        mismatch = None
        for item, found in read:
            entity, ids = _member_of(self.model, collection, item, found)
            if ids is None:
                # Only what sorts inside the page: the item read past its end to tell whether more follow is not.
                # An item whose key is not valid text names nothing: of unknown shape, never a mismatch.
                if mismatch is None and len(members) < window.size and self._named(item):
                    mismatch = _mismatch(self.model, collection, item, found)
                continue
            if text is None:
                position = {name: item[name] for name in fields}
            else:
                position = {name: text(name, item[name]) for name in fields}
            members.append(Member(ids, item, self._codec, binding, position, entity))
            # A member read here is served again from the cache if a link points back at it. Its key is the
            # one it was recognised by, so it is taken from the item rather than formatted again.
            self._prime(item_key(item), item, round_)
        stopped = None
        if stopped_at is not None:
            position = {name: stopped_at[name] for name in fields}
            stopped = Member({}, {}, self._codec, binding, position)
        more = len(members) > window.size or stopped is not None
        cursor_given = window.cursor is not None
        if window.backward:  # read from the end: the members nearest the cursor came first
            page, has_next, has_previous = members[window.size - 1 :: -1], cursor_given, more
        else:
            page, has_next, has_previous = members[: window.size], more, cursor_given
        return Page(page, has_next, has_previous, round_, stopped, backward=window.backward, mismatch=mismatch)

    def _decode_cursor(self, collection: Collection, parent_ids: Ids, cursor: str, argument: str) -> Key:
        binding = queries.binding(collection, parent_ids)
        return self._codec.decode(binding, cursor, self.model.position_fields(collection), argument)

    def _page_key(self, collection: Collection, parent_ids: Ids, window: queries.Window) -> _PageKey:
        return queries.binding(collection, parent_ids), window

    # --- the walk ----------------------------------------------------------------------------------------------

    async def walked(self, info: GraphQLResolveInfo[Any]) -> None:
        """Before a query's root fields resolve: read what the whole operation needs, round by round, once."""
        if self._walk is None:
            scope = Scope.of(info, self.selections(info))
            walk = self._walker(scope, current_round() + 1)
            walk.roots(info.parent_type, [info.operation.selection_set])
            self._walk = _detach(asyncio.ensure_future(walk.run()))
        try:
            await asyncio.shield(self._walk)
        except TooLarge:
            log.warning(
                "the look-ahead walk stopped at %d objects; the fields read on their own", self._settings.max_objects
            )
        except Exception:
            # The resolvers read what the walk could not, and report errors at their own paths.
            log.exception("the look-ahead walk failed; the fields read on their own")

    async def lookup(self, lookup: Lookup, ids: Ids, info: GraphQLResolveInfo[Any]) -> Item | None:
        """The entity ``lookup`` finds by ``ids`` (those of its index key): one Query on the index; then what the
        selection reads under it, as a query would. A first page of a collection that sorts next to the entity in
        that index comes from the same Query. None when no item, or more than one, has those keys (logged)."""
        entity = lookup.entity
        scope = Scope.of(info)
        field = Field(str(info.path.key), tuple(info.field_nodes), info.parent_type.fields[info.field_name], {})
        settings = self._settings
        selected = children(scope, field, entity.name)
        along = beside(self.model, lookup, selected, settings.default_page_size, settings.max_page_size)
        if along is None:
            result = await self.store.query(queries.lookup_query(self.model, lookup, ids), self.ledger)
            read = self._recognise(self._screened(result.items))
            found = [one for one in read if _is(entity, one)]
        else:
            collection, window = along
            request = queries.parent_and_members_query(self.model, collection, ids, window)
            read, _ = await self._query_members(collection, request, window.size)
            found = read[:1] if read and _is(entity, read[0]) else []
        if len(found) != 1:
            if found:
                log.warning(
                    "%s: %d items of %s have the keys %r; none is served", lookup.name, len(found), entity.name, ids
                )
                return None
            return self._mismatched(entity, read if along is None else read[:1])
        item, recognised = found[0]
        assert recognised is not None
        full = recognised[1]
        self.guard.check_item(entity, full)
        round_ = current_round()
        self._prime(self._item_key(entity, full), item, round_)
        page = None
        if along is not None:
            collection, window = along
            members = self._make_page(collection, full, read[1:], window, round_)
            future: asyncio.Future[Page] = _detach(asyncio.get_running_loop().create_future())
            future.set_result(members)
            page = self._page_key(collection, full, window), members
            self._pages[page[0]] = future
        if self._visible(entity, item) is None:
            return None
        await self.expand_field(entity, item, scope, field, str(info.path.key), page)
        return item

    async def expand(self, entity: Entity, item: Item, info: GraphQLResolveInfo[Any]) -> None:
        """After a mutation wrote ``item``: read what its result selects, as a query would."""
        field = Field(str(info.path.key), tuple(info.field_nodes), info.parent_type.fields[info.field_name], {})
        await self.expand_field(entity, item, Scope.of(info), field, str(info.path.key))

    async def expand_field(
        self,
        entity: Entity,
        item: Item,
        scope: Scope,
        field: Field,
        path: str,
        page: tuple[_PageKey, Page] | None = None,
    ) -> None:
        """With ``item`` in hand (written, changed on the stream, or found by a lookup with ``page``, the first page
        of a collection, beside it): read what ``field``, selecting it, reads."""
        ids = self.ids_of(entity, item)
        if ids is None:
            return
        self._prime(self._item_key(entity, ids), item, current_round())
        walk = self._walker(scope, current_round() + 1)
        if page is not None:
            walk.page_read(*page)
        walk.known(entity, ids, field, path)
        await walk.run()

    def _walker(self, scope: Scope, first_round: int) -> Walk:
        settings = self._settings
        return Walk(
            self,
            scope,
            default_page_size=settings.default_page_size,
            max_page_size=settings.max_page_size,
            filter_read_calls=settings.filter_read_calls,
            max_objects=settings.max_objects,
            first_round=first_round,
            plan=False,
        )

    # The walk's source: what it reads lands in this request's caches, where the resolvers find it.

    def cached(self, key: _ItemKey) -> tuple[bool, Item | None]:
        return key in self._known, self._known.get(key)

    def permits_item(self, entity: Entity, ids: Ids) -> bool:
        return self.guard.permits_item(entity, ids)

    def permits_query(self, collection: Collection, ids: Ids) -> bool:
        return self.guard.permits_query(collection, ids)

    def visible(self, entity: Entity, item: Item) -> bool:
        return self.guard.visible(entity, item)

    def mismatch(self, entity: Entity, item: Item) -> DataMismatch | None:
        """``Model.mismatch`` of an item read at ``entity``'s key, recognised once per request."""
        return self.model.mismatch(entity, item, self.recognised(item))

    def _mismatched(self, entity: Entity, read: list[_Read]) -> Item | None:
        """The first item of ``read`` (found by a lookup) that has ``entity``'s table key and reads as no entity,
        where the caller may see it: its key and error are served in place of the entity."""
        for item, found in read:
            ids = self.model.key_ids(entity, item)
            if ids is not None and found is None and self.guard.permits_item(entity, ids):
                return self._visible(entity, item)
        return None

    def ids_of(self, entity: Entity, item: Item) -> dict[str, str] | None:
        """``Model.ids_of``, with the item recognised once per request (``recognised``)."""
        if entity.partition:
            return self.model.ids_of(entity, item)
        return self.model.expected_ids(entity, item, self.recognised(item))

    async def read(self, keys: list[tuple[_ItemKey, Entity, Ids]]) -> None:
        wanted = list(dict.fromkeys(key for key, entity, _ in keys if not entity.partition))
        if not wanted:
            return
        model = self.model
        result = await self.store.batch_get([model.key_of(*key) for key in wanted], self.ledger)
        found = {model.item_key(item): item for item in self._screened(result.items)}
        for key in wanted:
            self._prime(key, found.get(key), result.round)

    async def parent_and_page(self, entity: Entity, ids: Ids, collection: Collection, window: queries.Window) -> Page:
        await self._parent_with_page(entity, ids, collection, window)
        return await self._pages[self._page_key(collection, ids, window)]

    async def gather(self, work: list[Coroutine[Any, Any, None]]) -> None:
        await accounting.gather(*work)

    async def _parent_with_page(
        self, entity: Entity, ids: Ids, collection: Collection, window: queries.Window
    ) -> Item | None:
        self.guard.check_query(collection, ids)
        request = queries.parent_and_members_query(self.model, collection, ids, window)
        loop = asyncio.get_running_loop()
        page: asyncio.Future[Page] = _detach(loop.create_future())
        self._pages[self._page_key(collection, ids, window)] = page
        try:
            read, _ = await self._query_members(collection, request, window.size)
        except BaseException as error:
            page.set_exception(error)
            raise
        key = self._item_key(entity, ids)
        # The item at the parent's key, whatever it reads as: one that reads as no entity is the parent's field's
        # DATA_MISMATCH (``Builder.object_of``), not a missing parent.
        first = read[0][0] if read and self.model.item_key(read[0][0]) == key else None
        parent = first if first is not None and _is(entity, read[0]) else None
        members = read[1:] if first is not None else read
        page.set_result(self._make_page(collection, ids, members, window, current_round()))
        if first is None and collection.index is not None and read:
            # Any item may be absent from a secondary index (it lacks a key attribute there, DynamoDB's rule): a
            # parent the Query did not meet, ahead of members it did, is read by its key, a round later, before it
            # is taken for missing. A partition with no item at all names no parent (``check`` finds a parent kept
            # out of an index its declaration puts it in).
            return self._visible(entity, await self._load(key))
        self._prime(key, first, current_round())
        return self._visible(entity, parent)


def _is(entity: Entity, read: _Read) -> bool:
    found = read[1]
    return found is not None and found[0] is entity


def _count(entities: tuple[Entity, ...], read: list[_Read]) -> int:
    """How many of the items read are members: what fills a page (an item of another shape does not)."""
    return sum(1 for _, found in read if found is not None and found[0] in entities)


def _member_of(
    model: Model, collection: Collection, item: Item, found: tuple[Entity, dict[str, str]] | None
) -> tuple[Entity, dict[str, str] | None]:
    """The entity and ids of an item of a page; None ids (logged) for an item that is no member, which is skipped:
    a union's item is served as the kind it was recognised as, never as another."""
    if not collection.is_union:
        return collection.entity, model.expected_ids(collection.entity, item, found)
    if found is not None and found[0] in collection.members:
        return found[0], found[1]
    model.skipped(item, f"of none of {collection.name}'s kinds")
    return collection.members[0], None


def _mismatch(model: Model, collection: Collection, item: Item, found: _Recognised) -> DataMismatch | None:
    """``Model.mismatch`` of a page's item that is no member, against each of the collection's kinds."""
    for entity in collection.members:
        mismatch = model.mismatch(entity, item, found)
        if mismatch is not None:
            return mismatch
    return None


def _detach(future: asyncio.Future[Any]) -> Any:
    """Mark a future's error as seen: a prefetch nobody awaits (its parent was null) must not log noise."""
    future.add_done_callback(lambda f: f.cancelled() or f.exception())
    return future


def _weakly(method: Callable[[list[_ItemKey]], Awaitable[list[Item | None]]]) -> Callable[..., Any]:
    """``method`` of a reader, for its own loader, without a reference back to the reader: a reader and its loader
    are freed as soon as the request (or subscription event) lets go of them, with all they read, rather than left
    for the garbage collector's next pass."""
    held = weakref.WeakMethod(method)

    async def load(keys: list[_ItemKey]) -> list[Item | None]:
        bound = held()
        assert bound is not None  # the loader is asked only through its reader
        return await bound(keys)

    return load
