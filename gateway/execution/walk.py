"""The walk: every DynamoDB request an operation needs, round by round, each started as soon as its keys are known.

One walker serves execution and the cost estimate: executing, it reads through the request's reader before any
resolver asks, and the resolvers find their answers cached; estimating, it reads from a worst-case stand-in
(every page full, every item present, no two ids alike). What is estimated is what runs.

The rules, at any depth:

- An object is *to read* once its table key is known: from arguments, from a global id, from the ids of the
  object a link starts at, from an edge. In that same round start its selected collections whose partition the
  known ids fix, and (recursively) its selected links whose target ids they hold; a collection whose parent sorts
  at the head of the partition brings the object with its first page in one Query (a first page read forwards:
  one read backwards, from the end, may never reach the parent).
- What needs ids only the object's own item holds (a ticket's user) starts in the round after the read.
- A page's members are known when it answers; their relations, and the targets of a many-to-many page's edges,
  start in the next round.
- The point reads of a round, across the whole operation, go out together: ⌈n/100⌉ BatchGetItem. An item already
  read in this request, by a point read or with a Query, is not read again; nor is a page.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphql import GraphQLObjectType

from gateway.design import global_ids
from gateway.design.keys import Ids, validate_id
from gateway.design.model import Collection, Entity, Item, Link, Lookup, Model, Root, graphql_name
from gateway.dynamo.store import BATCH_GET_LIMIT
from gateway.errors import GatewayError
from gateway.execution import filters, queries
from gateway.execution.selection import Field, Scope, children, fields

ItemKey = tuple[str, str]
PageKey = tuple[str, queries.Window]


_Alive = Callable[[], bool]


def _always() -> bool:
    return True


class TooLarge(Exception):
    """The operation reaches more objects than the walk may visit."""

    def __init__(self, maximum: int) -> None:
        super().__init__(f"the operation reaches more than {maximum} objects")
        self.maximum = maximum


class PageRead(Protocol):
    @property
    def members(self) -> Sequence[Any]:
        """Each with ``ids`` (dict), ``item`` and ``entity`` (the kind a union's member was recognised as)."""
        ...


class Source(Protocol):
    """Where a walk reads: the request's reader, or the estimate's worst-case stand-in."""

    model: Model

    def cached(self, key: ItemKey) -> tuple[bool, Item | None]:
        """Whether the item was read already in this request, and what it was."""
        ...

    def permits_item(self, entity: Entity, ids: Ids) -> bool: ...

    def permits_query(self, collection: Collection, ids: Ids) -> bool: ...

    def visible(self, entity: Entity, item: Item) -> bool: ...

    def ids_of(self, entity: Entity, item: Item) -> Ids | None:
        """The ids a read item gives what it starts (None: it is no ``entity``)."""
        ...

    async def read(self, keys: list[tuple[ItemKey, Entity, Ids]]) -> None:
        """Read these items (by their table key, formatted once by the walk), all at once; ``cached`` knows them
        afterwards (None for those missing)."""
        ...

    async def page(self, collection: Collection, parent_ids: Ids, window: queries.Window) -> PageRead: ...

    async def parent_and_page(
        self, entity: Entity, ids: Ids, collection: Collection, window: queries.Window
    ) -> PageRead:
        """The parent with a page that starts at it, in one Query; ``cached`` knows the parent afterwards."""
        ...

    async def gather(self, work: list[Coroutine[Any, Any, None]]) -> None:
        """Run one round's requests together."""
        ...


@dataclass(frozen=True)
class Planned:
    """Requests of one kind that one field makes in one round: ``calls`` of ``operation``, ``items`` at most."""

    path: str
    operation: str
    calls: int
    round: int
    items: int
    request: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "operation": self.operation,
            "calls": self.calls,
            "round": self.round,
            "items": self.items,
            **self.request,
        }


@dataclass
class _Query:
    collection: Collection
    parent_ids: Ids
    window: queries.Window
    path: str
    parent: Entity | None = None
    """Set when the Query brings the parent too."""
    on_page: list[Callable[[PageRead, _Round], None]] = field(default_factory=list)


@dataclass
class _Round:
    number: int
    reads: dict[ItemKey, tuple[Entity, Ids, str]] = field(default_factory=dict)
    on_read: dict[ItemKey, list[Callable[[_Round], None]]] = field(default_factory=dict)
    queries: dict[PageKey, _Query] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.reads or self.queries)


class Walk:
    """One operation's reads, from its root fields (or from an object a mutation wrote) to its leaves."""

    def __init__(
        self,
        source: Source,
        scope: Scope,
        *,
        default_page_size: int,
        max_page_size: int,
        filter_read_calls: int = 1,
        max_calls: int | None = None,
        max_objects: int | None = None,
        first_round: int = 1,
        refused: Callable[[str], None] | None = None,
        plan: bool = True,
        describe: bool = True,
    ) -> None:
        self._source = source
        self._model = source.model
        self._scope = scope
        self._default = default_page_size
        self._maximum = max_page_size
        self._filter_read_calls = filter_read_calls
        self._max_calls = max_calls
        self._max_objects = max_objects
        # Told the path of each field the source refuses, where execution answers FORBIDDEN: explain shows them.
        self._refused = refused
        # Executing, nothing reads the plan; estimating, only explain reads the requests' descriptions.
        self._planning = plan
        self._describe = describe
        self.objects = 0
        self._pages: dict[PageKey, PageRead | None] = {}
        self._relations: dict[tuple[str, int], tuple[list[Field], list[tuple[Field, Collection | Link]]]] = {}
        self._round = _Round(first_round)
        self._answered: list[Callable[[], None]] = []
        self.planned: list[Planned] = []
        self.calls = 0

    # --- starting points ------------------------------------------------------------------------------------

    def roots(self, root: GraphQLObjectType, selection_sets: Sequence[Any]) -> None:
        """Every root field of an operation's selection."""
        for one in fields(self._scope, root, selection_sets):
            self.root(one, one.key)

    def root(self, field: Field, path: str) -> None:
        """A root query field: the entities its arguments name, or the page of a collection listed from the root."""
        listed = self._model.root_collections.get(field.name)
        if listed is not None:
            self._listed(listed, field, path)
            return
        root = self._model.roots.get(field.name)
        if root is None:
            return
        try:
            found = self._root_objects(field, root)
        except GatewayError:
            return  # the field reports its own bad arguments
        if not all(self._source.permits_item(entity, ids) for entity, ids in found):
            self._refuse(path)
            return  # a list with one forbidden key is refused whole, and reads nothing
        for entity, ids in found:
            self.visit(entity, ids, self._fields_of(field, entity), path, self._round, _always)

    def _listed(self, collection: Collection, field: Field, path: str) -> None:
        """A root connection: its page, from the parent's ids alone; and the parent in the same round only when
        ``totalCount`` is selected and the parent's counter answers it (not for a level or a range)."""
        try:
            ids = {
                name: validate_id(str(field.args[graphql_name(name)]), graphql_name(name))
                for name in collection.parent.id_fields
            }
        except GatewayError:
            return  # the field reports its own bad arguments
        self._page(collection, ids, field, path, self._round, _always)
        if collection.counter is None or queries.narrows(collection, field.args):
            return
        window = self._window(field, collection)
        if window is None or window.range is not None:
            return
        for one in children(self._scope, field):
            if one.name == "totalCount":
                self.visit(collection.parent, ids, [], _join(path, one.key), self._round, _always)
                return

    def page_read(self, key: PageKey, page: PageRead) -> None:
        """A page already read (with its parent, by a lookup): what its members start goes out in the first round."""
        self._pages[key] = page

    def known(self, entity: Entity, ids: Ids, field: Field, path: str) -> None:
        """An object already in hand (what a mutation wrote): its relations start in the next round."""
        self.expand(entity, ids, self._fields_of(field, entity), path, self._round, set(), _always)

    async def run(self) -> None:
        while self._round:
            current, self._round = self._round, _Round(self._round.number + 1)
            if self._planning:
                self._plan(current)
            if self._max_calls is not None and self.calls > self._max_calls:
                return
            await self._source.gather(self._work(current))
            # What the answers start is decided once the whole round has answered: an item another request of
            # the round brings is then known, and is not read again.
            answered, self._answered = self._answered, []
            for then in answered:
                then()

    # --- objects --------------------------------------------------------------------------------------------

    def visit(self, entity: Entity, ids: Ids, selected: list[Field], path: str, round_: _Round, alive: _Alive) -> None:
        """An object whose table key ``ids`` give: read it in ``round_``, and start what its ids allow.

        ``alive`` says whether the objects above it were found: what its answer would start is not started under
        an object found missing.
        """
        self._count(1)
        if not self._source.permits_item(entity, ids):
            self._refuse(path)
            return  # the field reports Forbidden when it resolves
        if entity.partition:  # no item of its own: it is there whenever its ids are, with nothing to read
            self._with_item(entity, self._model.key(entity, ids), selected, path, round_, set(), alive)
            return
        key = self._item_key(entity, ids)
        done, item = self._source.cached(key)
        if not self._related(entity, selected):
            # It starts nothing, now or once read (a page's hundred targets, most often): it is only read.
            if not done and key not in round_.on_read:
                round_.reads[key] = (entity, dict(ids), path)
                round_.on_read[key] = []
            return

        def mine() -> bool:
            return alive() and self._present(entity, key)

        if done:
            self._with_item(entity, item, selected, path, round_, set(), mine)
            return
        started: set[str] = set()
        if key not in round_.on_read and not self._combined(entity, ids, selected, path, round_, started, mine):
            round_.reads[key] = (entity, dict(ids), path)
        started |= self.expand(entity, ids, selected, path, round_, started, mine)

        def then(later: _Round) -> None:
            if alive():
                self._with_item(entity, self._source.cached(key)[1], selected, path, later, started, mine)

        round_.on_read.setdefault(key, []).append(then)

    def _present(self, entity: Entity, key: ItemKey) -> bool:
        done, item = self._source.cached(key)
        return done and item is not None and self._source.visible(entity, item)

    def _with_item(
        self,
        entity: Entity,
        item: Item | None,
        selected: list[Field],
        path: str,
        round_: _Round,
        started: set[str],
        alive: _Alive,
    ) -> None:
        if not self._related(entity, selected):
            return  # nothing it selects starts a read: its item needs no recognising here
        if item is None or not self._source.visible(entity, item):
            return
        ids = self._source.ids_of(entity, item)
        if ids is not None:
            self.expand(entity, ids, selected, path, round_, started, alive)

    def expand(
        self,
        entity: Entity,
        ids: Ids,
        selected: list[Field],
        path: str,
        round_: _Round,
        started: set[str],
        alive: _Alive,
    ) -> set[str]:
        """Start, in ``round_``, the selected relations whose keys ``ids`` hold; the keys of those started.

        ``alive`` says whether this object and those above it were found (or are still being read).
        """
        now: set[str] = set()
        for one, relation in self._related(entity, selected):
            if one.key in started:
                continue
            here = _join(path, one.key)
            if isinstance(relation, Collection):
                if set(relation.member_shape.pk.fields) <= relation.member_ids(ids).keys():
                    self._page(relation, ids, one, here, round_, alive)
                    now.add(one.key)
            elif isinstance(relation, Link) and (target := relation.target_ids(ids)) is not None:
                self.visit(relation.target, target, children(self._scope, one), here, round_, alive)
                now.add(one.key)
        return now

    def _related(self, entity: Entity, selected: list[Field]) -> list[tuple[Field, Collection | Link]]:
        """The fields of ``selected`` that are relations of ``entity``, with them: found once per selection in a
        walk, not once per object of a page (the list is kept with them, so its identity is not reused)."""
        key = (entity.name, id(selected))
        held = self._relations.get(key)
        if held is None or held[0] is not selected:
            relations = self._model.relations
            found = [
                (one, relation)
                for one in selected
                if (relation := relations.get(f"{entity.name}.{one.name}")) is not None
            ]
            held = self._relations[key] = (selected, found)
        return held[1]

    def _combined(
        self,
        entity: Entity,
        ids: Ids,
        selected: list[Field],
        path: str,
        round_: _Round,
        started: set[str],
        alive: _Alive,
    ) -> bool:
        """Read the object with its first selected collection that sorts it at the head, in one Query."""
        for one, relation in self._related(entity, selected):
            if not isinstance(relation, Collection) or relation.parent is not entity:
                continue
            if queries.narrows(relation, one.args):
                continue  # the parent sorts at the head of the whole collection, not of one level
            if not set(relation.member_shape.pk.fields) <= relation.member_ids(ids).keys():
                continue
            window = self._window(one, relation)
            if window is None or not window.with_parent(self._model, relation):
                continue
            if not self._source.permits_query(relation, ids):
                continue
            page_key = (queries.binding(relation, ids), window)
            if page_key in self._pages or page_key in round_.queries:
                continue
            query = _Query(relation, dict(ids), window, path, parent=entity)
            query.on_page.append(self._members(relation, one, _join(path, one.key), alive))
            round_.queries[page_key] = query
            started.add(one.key)
            return True
        return False

    # --- pages ----------------------------------------------------------------------------------------------

    def _page(
        self, collection: Collection, ids: Ids, selected: Field, path: str, round_: _Round, alive: _Alive
    ) -> None:
        try:
            ids = queries.narrowed(collection, ids, selected.args)
        except GatewayError:
            return  # the field reports its own bad arguments
        if not self._source.permits_query(collection, ids):
            self._refuse(path)
            return
        window = self._window(selected, collection)
        if window is None:
            return
        key = (queries.binding(collection, ids), window)
        then = self._members(collection, selected, path, alive)
        if key in self._pages:
            page = self._pages[key]
            if page is not None:
                then(page, round_)
        elif key in round_.queries:
            round_.queries[key].on_page.append(then)
        else:
            query = _Query(collection, dict(ids), window, path)
            query.on_page.append(then)
            round_.queries[key] = query

    def _members(
        self, collection: Collection, selected: Field, path: str, alive: _Alive
    ) -> Callable[[PageRead, _Round], None]:
        """What a page's answer starts: its members' relations, or the targets of its edges; nothing when the
        page's parent was found missing."""
        nodes = self._node_fields(selected)
        kinds = self._kind_fields(selected, collection) if collection.is_union else {}

        def then(page: PageRead, round_: _Round) -> None:
            if nodes is None or not alive():
                return
            node_fields, node_path = nodes
            where = _join(path, node_path)
            if collection.is_union:
                self._count(len(page.members))
                for member in page.members:
                    self.expand(member.entity, member.ids, kinds[member.entity.name], where, round_, set(), alive)
                return
            if collection.target is None:
                self._count(len(page.members))
                for member in page.members:
                    self.expand(collection.entity, member.ids, node_fields, where, round_, set(), alive)
                return
            target = collection.target
            for member in page.members:
                target_ids = collection.target_ids(member.ids)
                self.visit(target, target_ids, node_fields, where, round_, alive)

        return then

    def _node_fields(self, connection: Field) -> tuple[list[Field], str] | None:
        """What a connection selects on its nodes (``nodes`` and ``edges.node`` together); None if neither."""
        merged: list[Field] = []
        path: str | None = None
        for one in children(self._scope, connection):
            if one.name == "nodes":
                merged += self._fields_of(one, None)
                path = path or _join("", one.key)
            elif one.name == "edges":
                for edge_field in children(self._scope, one):
                    if edge_field.name == "node":
                        merged += self._fields_of(edge_field, None)
                        path = path or f"{one.key}.{edge_field.key}"
        if path is None:
            return None
        return merged, path

    def _kind_fields(self, connection: Field, collection: Collection) -> dict[str, list[Field]]:
        """What a union connection selects on the nodes of each of its kinds (its inline fragments and fragment
        spreads on that type), by the kind's name."""
        out: dict[str, list[Field]] = {entity.name: [] for entity in collection.members}
        for one in children(self._scope, connection):
            holders = [one] if one.name == "nodes" else []
            if one.name == "edges":
                holders = [edge for edge in children(self._scope, one) if edge.name == "node"]
            for holder in holders:
                for entity in collection.members:
                    out[entity.name] += self._fields_of(holder, entity)
        return out

    def _refuse(self, path: str) -> None:
        if self._refused is not None:
            self._refused(path)

    def _count(self, objects: int) -> None:
        # Every object of the answer passes here, once per path that reaches it: an operation whose answer would
        # hold too many is stopped before it is walked, whatever its reads cost.
        self.objects += objects
        if self._max_objects is not None and self.objects > self._max_objects:
            raise TooLarge(self._max_objects)

    def _window(self, selected: Field, collection: Collection) -> queries.Window | None:
        return window_of(self._model, selected, collection, self._default, self._maximum)

    # --- one round ------------------------------------------------------------------------------------------

    def _plan(self, round_: _Round) -> None:
        """Account the round's requests as the walk will send them."""
        if round_.reads:
            entities = list(dict.fromkeys(entity for entity, _, _ in round_.reads.values()))
            calls = math.ceil(len(round_.reads) / BATCH_GET_LIMIT)
            first_path = next(iter(round_.reads.values()))[2]
            keys = [self._model.key(entity, placeholders_of(entity)) for entity in entities] if self._describe else []
            self._add(first_path, "BatchGetItem", calls, round_.number, len(round_.reads), {"keys": keys})
        for query in round_.queries.values():
            placeholders = placeholders_of(query.collection.parent)
            placeholders.update(
                (name, "{" + name + "}") for name in query.collection.levels if name in query.parent_ids
            )
            if query.parent is not None:
                request = queries.parent_and_members_query(self._model, query.collection, placeholders, query.window)
            else:
                # A sharded page is one Query per shard, all in the same round.
                shard = "<shard>" if query.collection.shards > 1 else 0
                request = queries.members_query(
                    self._model, query.collection, placeholders, query.window.size, window=query.window, shard=shard
                )
            shards = query.collection.shards
            described = description(request) if self._describe else {}
            if shards > 1 and self._describe:
                described["partitions"] = queries.partitions(query.collection, placeholders)
            if query.window.filter is None:
                self._add(query.path, "Query", shards, round_.number, request.limit * shards, described)
                continue
            # A filtered page reads on until it fills: at worst every Query of its budget, one after another, and
            # what its members start waits for the last.
            limits = queries.filter_limits(query.window.size, self._filter_read_calls)
            for i, limit in enumerate(limits):
                self._add(query.path, "Query", shards, round_.number + i, limit * shards, described | {"limit": limit})
            self._round.number = max(self._round.number, round_.number + len(limits))

    def _add(self, path: str, operation: str, calls: int, round_: int, items: int, request: dict[str, Any]) -> None:
        self.calls += calls
        for i, one in enumerate(self.planned):
            if (one.path, one.operation, one.round) == (path, operation, round_):
                self.planned[i] = Planned(path, operation, one.calls + calls, round_, one.items + items, one.request)
                return
        self.planned.append(Planned(path, operation, calls, round_, items, request))

    def _work(self, round_: _Round) -> list[Coroutine[Any, Any, None]]:
        work: list[Coroutine[Any, Any, None]] = []
        if round_.reads:
            work.append(self._read(round_))
        work += [self._query(key, query, round_) for key, query in round_.queries.items()]
        return work

    async def _read(self, round_: _Round) -> None:
        keys = [(key, entity, ids) for key, (entity, ids, _) in round_.reads.items()]
        try:
            await self._source.read(keys)
        except GatewayError:
            return  # the fields read again and report the error where it belongs
        for key in round_.reads:
            for then in round_.on_read[key]:
                self._answered.append(functools.partial(then, self._round))

    async def _query(self, key: PageKey, query: _Query, round_: _Round) -> None:
        try:
            if query.parent is not None:
                page = await self._source.parent_and_page(
                    query.parent, query.parent_ids, query.collection, query.window
                )
            else:
                page = await self._source.page(query.collection, query.parent_ids, query.window)
        except GatewayError:
            self._pages[key] = None
            return
        self._pages[key] = page
        if query.parent is not None:
            for then in round_.on_read.get(self._item_key(query.parent, query.parent_ids), []):
                self._answered.append(functools.partial(then, self._round))
        for on_page in query.on_page:
            self._answered.append(functools.partial(on_page, page, self._round))

    # --- helpers --------------------------------------------------------------------------------------------

    def _root_objects(self, field: Field, root: Root) -> list[tuple[Entity, Ids]]:
        if root.entity is None:
            values = field.args.get("ids") if root.many else [field.args.get("id")]
            if not isinstance(values, list) or len(values) > queries.MAX_BATCH_IDS:
                return []  # the field refuses a list too long, reading nothing
            return [global_ids.decode(self._model, str(value)) for value in values]
        entity: Entity = root.entity
        if root.many:
            ((argument, id_field),) = root.arguments
            values = queries.batch_ids([str(one) for one in field.args.get(argument, [])], argument)
            return [(entity, self._model.canonical(entity, {id_field: value})) for value in dict.fromkeys(values)]
        ids = {id_field: validate_id(str(field.args[argument]), argument) for argument, id_field in root.arguments}
        return [(entity, self._model.canonical(entity, ids))]

    def _fields_of(self, field: Field, entity: Entity | None) -> list[Field]:
        """The fields selected under ``field`` on objects of ``entity``'s type (its own type when None)."""
        return children(self._scope, field, entity.name if entity is not None else None)

    def _item_key(self, entity: Entity, ids: Ids) -> ItemKey:
        return self._model.item_key(self._model.key(entity, ids))


def window_of(
    model: Model, selected: Field, collection: Collection, default: int, maximum: int
) -> queries.Window | None:
    """The page ``selected`` asks for; None when its arguments are refused (the field reports why)."""
    first_given = "first" in selected.given and selected.args.get("first") is not None
    numeric = queries.sorts_by_number(model, collection)
    try:
        return queries.window(selected.args, first_given, default, maximum, collection, numeric)
    except GatewayError:
        return None


def beside(
    model: Model, lookup: Lookup, selected: Sequence[Field], default: int, maximum: int
) -> tuple[Collection, queries.Window] | None:
    """A collection selected under ``lookup`` whose first page, as declared, follows the entity in the lookup's
    index: the lookup's one Query reads it too. Execution and the estimate both ask here, so what is estimated is
    what runs."""
    for one in selected:
        relation = model.relations.get(f"{lookup.entity.name}.{one.nodes[0].name.value}")
        if not isinstance(relation, Collection) or relation.index != lookup.index:
            continue
        if relation.levels:
            continue
        window = window_of(model, one, relation, default, maximum)
        if window is not None and window.with_parent(model, relation):
            return relation, window
    return None


def placeholders_of(entity: Entity) -> dict[str, str]:
    """Ids that format into the key templates themselves: the plan shows ``WS#{workspaceId}``."""
    return {name: "{" + name + "}" for name in entity.all_id_fields}


def description(request: Any) -> dict[str, Any]:
    """A Query as explain shows it: its index, key condition, direction, limit and filter."""
    pk_name, pk_value = request.partition
    condition = f"{pk_name} = {pk_value}"
    if request.sort is not None:
        sk_name, operator, sk_value = request.sort
        if operator == "begins_with":
            sort = f"begins_with({sk_name}, {sk_value})"
        elif operator == "between":
            sort = f"{sk_name} BETWEEN {sk_value} AND {request.sort_end}"
        else:
            sort = f"{sk_name} {operator} {sk_value}"
        condition += f" AND {sort}"
    return {
        "index": request.index or "table",
        "keyCondition": condition,
        "scanIndexForward": request.ascending,
        "limit": request.limit,
        **({"filter": filters.describe(request.filter)} if request.filter is not None else {}),
    }


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
