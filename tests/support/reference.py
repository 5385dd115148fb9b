"""A reference for the declared graph (API 0.2): the answer to a query and its optimal DynamoDB cost, from raw items.

It shares no code with ``gateway`` or ``schema``: the key strings of DESIGN.md are written here literally, the
orders and counters come from /tmp/api-spec.md, and the cost is the spec's "Cost" rules applied to the data. A query
is a small tree (``Root`` > ``Obj`` > ``LinkSel``/``ConnSel``) that ``render`` turns into GraphQL text, so the same
tree is evaluated here and sent to the gateway.

Cursors are opaque: where an answer holds one, ``answer`` puts ``CURSOR`` and the tests check for a non-empty string.
"""

from __future__ import annotations

import base64
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

Item = dict[str, Any]
Key = tuple[str, str]

CURSOR = "<cursor>"


# --- the graph: entities, their keys, collections and links --------------------------------------------------------


@dataclass(frozen=True)
class EntityType:
    name: str
    ids: tuple[str, ...]  # the table-key id fields, in template order: root arguments and global id parts
    keys: tuple[str, ...]  # natural-key fields: the id fields of all the entity's own key templates
    attrs: tuple[str, ...]  # plain attributes

    @property
    def root(self) -> str:
        return self.name[0].lower() + self.name[1:]


TYPES = {
    t.name: t
    for t in [
        EntityType(
            "Workspace",
            ("workspaceId",),
            ("workspaceId",),
            ("displayName", "region", "seatLimit", "projectCount", "version"),
        ),
        EntityType(
            "Project",
            ("workspaceId", "projectId"),
            ("workspaceId", "projectId"),
            ("title", "status", "createdBy", "version"),
        ),
        EntityType("Organization", ("orgName",), ("orgName",), ("name", "subscriptionLevel", "userCount", "version")),
        EntityType(
            "User", ("orgName", "username"), ("orgName", "username"), ("name", "role", "ticketCount", "version")
        ),
        EntityType("Ticket", ("ticketId",), ("ticketId", "orgName", "username"), ("title", "status", "version")),
        EntityType("Student", ("studentId",), ("studentId",), ("name", "year", "major", "courseCount", "version")),
        EntityType("Course", ("courseId",), ("courseId",), ("title", "credits", "term", "enrolledCount", "version")),
        EntityType(
            "Enrollment", ("studentId", "courseId"), ("studentId", "courseId"), ("grade", "enrolledOn", "version")
        ),
    ]
}

# The table key of each entity, from its table-key ids (DESIGN.md, "The key design").
TABLE_KEYS: dict[str, Callable[..., Key]] = {
    "Workspace": lambda w: (f"WS#{w}", "META"),
    "Project": lambda w, p: (f"WS#{w}", f"PROJ#{p}"),
    "Organization": lambda o: (f"ORG#{o}", f"METADATA#{o}"),
    "User": lambda o, u: (f"ORG#{o}", f"USER#{u}"),
    "Ticket": lambda t: (f"TICKET#{t}", f"TICKET#{t}"),
    "Student": lambda s: (f"STU#{s}", "PROFILE"),
    "Course": lambda c: (f"CRS#{c}", "METADATA"),
    "Enrollment": lambda s, c: (f"STU#{s}", f"ENROLL#CRS#{c}"),
}


def _after(key: str, head: str) -> str:
    assert key.startswith(head), (key, head)
    return key[len(head) :]


def type_of(item: Item) -> str | None:
    """The entity an item is, from the shape of its table key; None for an item of no known shape."""
    pk, sk = item["PK"], item["SK"]
    shapes = [
        ("WS#", "META", "Workspace"),
        ("WS#", "PROJ#", "Project"),
        ("ORG#", "METADATA#", "Organization"),
        ("ORG#", "USER#", "User"),
        ("TICKET#", "TICKET#", "Ticket"),
        ("STU#", "PROFILE", "Student"),
        ("STU#", "ENROLL#CRS#", "Enrollment"),
        ("CRS#", "METADATA", "Course"),
    ]
    for pk_head, sk_head, name in shapes:
        if pk.startswith(pk_head) and sk.startswith(sk_head):
            return name
    return None


def natural_keys(type_name: str, item: Item) -> dict[str, str]:
    """The entity's id fields, read from its own item's keys."""
    pk, sk = item["PK"], item["SK"]
    if type_name == "Workspace":
        return {"workspaceId": _after(pk, "WS#")}
    if type_name == "Project":
        return {"workspaceId": _after(pk, "WS#"), "projectId": _after(sk, "PROJ#")}
    if type_name == "Organization":
        return {"orgName": _after(pk, "ORG#")}
    if type_name == "User":
        return {"orgName": _after(pk, "ORG#"), "username": _after(sk, "USER#")}
    if type_name == "Ticket":
        org, org_name, user, username = item["GSI1PK"].split("#")
        assert (org, user) == ("ORG", "USER"), item
        return {"ticketId": _after(pk, "TICKET#"), "orgName": org_name, "username": username}
    if type_name == "Student":
        return {"studentId": _after(pk, "STU#")}
    if type_name == "Course":
        return {"courseId": _after(pk, "CRS#")}
    if type_name == "Enrollment":
        return {"studentId": _after(pk, "STU#"), "courseId": _after(sk, "ENROLL#CRS#")}
    raise AssertionError(type_name)


@dataclass(frozen=True)
class Ref:
    """An entity by its table-key ids."""

    type: str
    ids: tuple[str, ...]

    @property
    def key(self) -> Key:
        return TABLE_KEYS[self.type](*self.ids)

    @property
    def global_id(self) -> str:
        text = "#".join([self.type, *self.ids]).encode()
        return base64.urlsafe_b64encode(text).decode().rstrip("=")

    @staticmethod
    def of(type_name: str, item: Item) -> Ref:
        keys = natural_keys(type_name, item)
        return Ref(type_name, tuple(keys[name] for name in TYPES[type_name].ids))

    @staticmethod
    def from_global_id(global_id: str) -> Ref:
        text = base64.urlsafe_b64decode(global_id + "=" * (-len(global_id) % 4)).decode()
        type_name, *ids = text.split("#")
        assert type_name in TYPES and len(ids) == len(TYPES[type_name].ids), text
        return Ref(type_name, tuple(ids))


@dataclass(frozen=True)
class Collection:
    member: str  # the entity of the items the Query returns (Enrollment for a many-to-many)
    target: str | None  # the node type of a many-to-many: the other end of the enrolment
    index: str  # "table" or "GSI1"
    partition: Callable[..., str]  # the partition key from the parent's table-key ids
    prefix: str  # begins_with on the sort key
    ascending: bool
    counter: str
    parent_low: bool | None  # the parent's item sorts just below its members (False: just above; None: elsewhere)


COLLECTIONS = {
    ("Workspace", "projects"): Collection(
        "Project", None, "table", lambda w: f"WS#{w}", "PROJ#", False, "projectCount", True
    ),
    ("Organization", "users"): Collection(
        "User", None, "table", lambda o: f"ORG#{o}", "USER#", True, "userCount", True
    ),
    ("User", "tickets"): Collection(
        "Ticket", None, "GSI1", lambda o, u: f"ORG#{o}#USER#{u}", "TICKET#", False, "ticketCount", False
    ),
    ("Student", "courses"): Collection(
        "Enrollment", "Course", "table", lambda s: f"STU#{s}", "ENROLL#CRS#", False, "courseCount", False
    ),
    ("Course", "students"): Collection(
        "Enrollment", "Student", "GSI1", lambda c: f"CRS#{c}", "STU#", True, "enrolledCount", None
    ),
}


@dataclass(frozen=True)
class Link:
    target: str
    # The target's ids from the source's table-key ids; None when they are on the source's item (read it first).
    from_ids: Callable[[tuple[str, ...]], tuple[str, ...]] | None
    from_item: tuple[str, ...] = ()  # otherwise: the natural keys of the source that are the target's ids


LINKS = {
    ("Project", "workspace"): Link("Workspace", lambda ids: (ids[0],)),
    ("User", "organization"): Link("Organization", lambda ids: (ids[0],)),
    ("Ticket", "user"): Link("User", None, ("orgName", "username")),
    ("Enrollment", "student"): Link("Student", lambda ids: (ids[0],)),
    ("Enrollment", "course"): Link("Course", lambda ids: (ids[1],)),
}

# Fields of a many-to-many edge besides cursor and node: the enrolment's data.
EDGE_DATA = ("grade", "enrolledOn", "version")


def relations(type_name: str) -> list[str]:
    """The relation fields of an entity: links and collections."""
    return [name for (source, name) in [*LINKS, *COLLECTIONS] if source == type_name]


def relation_target(type_name: str, name: str) -> str:
    """The type of the objects a relation leads to (a collection's nodes)."""
    if (type_name, name) in LINKS:
        return LINKS[type_name, name].target
    collection = COLLECTIONS[type_name, name]
    return collection.target or collection.member


# --- queries ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Obj:
    """The selection on one entity: scalars ("id", natural keys, attributes) then relations, in this order."""

    type: str
    scalars: tuple[str, ...]
    relations: tuple[LinkSel | ConnSel, ...] = ()


@dataclass(frozen=True)
class LinkSel:
    name: str
    sel: Obj


@dataclass(frozen=True)
class ConnSel:
    name: str
    first: int
    total_count: bool = False
    page_info: tuple[str, ...] = ()  # "hasNextPage", "hasPreviousPage", "startCursor", "endCursor"
    edges: tuple[str, ...] | None = None  # "cursor", edge data of a many-to-many, "node"
    nodes: bool = False
    node: Obj | None = None  # the selection of edges.node and of nodes
    after: int | None = None  # the position of the member whose cursor `$cursor` holds (rendered as the variable)
    backward: bool = False  # last (= first) and before (= after) instead: read from the end, or back from the cursor
    flip: bool = False  # order: against the collection's declared order
    where: Any = None  # a filter: (attribute, operator, operands), or ("and" | "or", (filters...))

    def with_parent(self, collection: Collection) -> bool:
        """Whether the page's Query reads its parent's item first: it reads from the parent's side of the members
        (from either end, in either order), without a cursor (past the parent) or a filter (which would drop it)."""
        reads_up = (collection.ascending != self.flip) != self.backward
        return self.after is None and self.where is None and collection.parent_low is reads_up


@dataclass(frozen=True)
class Root:
    """A root field: the entity's own (arguments = its table-key ids) or ``node(id:)``."""

    ref: Ref
    sel: Obj
    by_global_id: bool = False

    @property
    def field(self) -> str:
        return "node" if self.by_global_id else TYPES[self.ref.type].root


def render(root: Root) -> str:
    """The GraphQL text of a query; a connection with ``after`` reads the cursor from the variable ``$cursor``."""
    if root.by_global_id:
        arguments = f"id: {json.dumps(root.ref.global_id)}"
        inner = f"... on {root.sel.type} {{ {_render_obj(root.sel)} }}"
    else:
        names = TYPES[root.ref.type].ids
        arguments = ", ".join(f"{name}: {json.dumps(value)}" for name, value in zip(names, root.ref.ids, strict=True))
        inner = _render_obj(root.sel)
    text = f"{root.field}({arguments}) {{ {inner} }}"
    if any(conn.after is not None for conn in _connections(root.sel)):
        return f"query ($cursor: String) {{ {text} }}"
    return f"{{ {text} }}"


def _connections(sel: Obj) -> Iterator[ConnSel]:
    for rel in sel.relations:
        if isinstance(rel, ConnSel):
            yield rel
            if rel.node is not None:
                yield from _connections(rel.node)
        else:
            yield from _connections(rel.sel)


def _render_obj(sel: Obj) -> str:
    parts = list(sel.scalars)
    for rel in sel.relations:
        if isinstance(rel, LinkSel):
            parts.append(f"{rel.name} {{ {_render_obj(rel.sel)} }}")
        else:
            parts.append(_render_conn(rel))
    return " ".join(parts)


def _render_conn(conn: ConnSel) -> str:
    size, cursor = ("last", "before") if conn.backward else ("first", "after")
    after = f", {cursor}: $cursor" if conn.after is not None else ""
    parts = []
    if conn.total_count:
        parts.append("totalCount")
    if conn.page_info:
        parts.append(f"pageInfo {{ {' '.join(conn.page_info)} }}")
    if conn.edges is not None:
        edge = [f"node {{ {_render_obj(conn.node)} }}" if f == "node" and conn.node else f for f in conn.edges]
        parts.append(f"edges {{ {' '.join(edge)} }}")
    if conn.nodes and conn.node is not None:
        parts.append(f"nodes {{ {_render_obj(conn.node)} }}")
    extra = ""
    if conn.flip:
        ascending = COLLECTIONS_ASCENDING[conn.name]
        extra += f", order: {'DESCENDING' if ascending else 'ASCENDING'}"
    if conn.where is not None:
        extra += f", where: {_render_filter(conn.where)}"
    return f"{conn.name}({size}: {conn.first}{after}{extra}) {{ {' '.join(parts)} }}"


def _render_filter(where: Any) -> str:
    """A filter as a GraphQL input literal: a test inside its attribute's condition, groups as and/or lists."""
    kind, rest = where[0], where[1:]
    if kind in ("and", "or"):
        return f"{{ {kind}: [{', '.join(_render_filter(part) for part in rest[0])}] }}"
    operator, operands = rest
    if operator in ("in", "between"):
        value = "[" + ", ".join(_literal(kind, one) for one in operands) + "]"
    elif operator == "exists":
        value = "true" if operands[0] else "false"
    else:
        value = _literal(kind, operands[0])
    return f"{{ {kind}: {{ {operator}: {value} }} }}"


def _literal(attribute: str, value: Any) -> str:
    """Enum values are written bare, everything else as JSON."""
    return value if attribute in ENUM_FILTERS else json.dumps(value)


# Filterable attributes per connection (as the demo declares them), and which of them are enums.
FILTERS = {
    "projects": ("status", "title", "createdBy"),
    "users": ("role", "name"),
    "tickets": ("status", "title"),
    "courses": ("grade", "enrolledOn"),
    "students": ("grade", "enrolledOn"),
}
ENUM_FILTERS = {"status"}
COLLECTIONS_ASCENDING = {"projects": False, "users": True, "tickets": False, "courses": False, "students": True}
FILTER_READ_CALLS = 1


def matches(item: Item, where: Any) -> bool:
    """Whether DynamoDB's filter keeps ``item``: ne holds where the attribute is absent; a value of another type
    never compares; strings compare by their UTF-8 bytes."""
    kind, rest = where[0], where[1:]
    if kind == "and":
        return all(matches(item, part) for part in rest[0])
    if kind == "or":
        return any(matches(item, part) for part in rest[0])
    operator, operands = rest
    present = kind in item
    value = item.get(kind)
    if operator == "exists":
        return present == operands[0]
    if operator == "ne":
        return not (present and _same_type(value, operands[0]) and value == operands[0])
    if not present:
        return False
    if operator == "eq":
        return _same_type(value, operands[0]) and value == operands[0]
    if operator == "in":
        return any(_same_type(value, one) and value == one for one in operands)
    if operator == "beginsWith":
        return isinstance(value, str) and value.startswith(operands[0])
    low, high = operands
    return _same_type(value, low) and _bytes(low) <= _bytes(value) <= _bytes(high)


def _same_type(a: Any, b: Any) -> bool:
    return isinstance(a, str) == isinstance(b, str)


def _bytes(value: Any) -> Any:
    return value.encode() if isinstance(value, str) else value


def filter_limits(size: int) -> list[int]:
    """The Limit of each Query a filtered page may send: its size and one, then four times more each time."""
    return [min(1000, (size + 1) * 4**call) for call in range(FILTER_READ_CALLS)]


# --- the reference ---------------------------------------------------------------------------------------------------


@dataclass
class Cost:
    calls: int
    rounds: int
    trace: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"reference: {self.calls} calls, {self.rounds} rounds\n  " + "\n  ".join(self.trace)


PageKey = tuple[Ref, ConnSel]


@dataclass
class _Round:
    point: set[Key] = field(default_factory=set)  # point reads
    combined: dict[PageKey, Key] = field(default_factory=dict)  # parent + first page in one Query: page -> parent
    pages: set[PageKey] = field(default_factory=set)  # every page this round needs that no earlier round answered
    then: list[tuple[_Visit, ConnSel]] = field(default_factory=list)  # pages whose members start next round


class Reference:
    def __init__(self, items: list[Item]) -> None:
        self.items: dict[Key, Item] = {(item["PK"], item["SK"]): item for item in items}
        self._table: dict[str, list[Item]] = defaultdict(list)
        self._gsi1: dict[str, list[Item]] = defaultdict(list)
        for item in items:
            self._table[item["PK"]].append(item)
            if "GSI1PK" in item:
                self._gsi1[item["GSI1PK"]].append(item)

    def item(self, ref: Ref) -> Item | None:
        return self.items.get(ref.key)

    def refs(self, type_name: str) -> list[Ref]:
        """Every entity of a type in the data, in key order."""
        found = [Ref.of(type_name, item) for item in self.items.values() if type_of(item) == type_name]
        return sorted(found, key=lambda ref: ref.key)

    # -- membership and order --

    def members(self, ref: Ref, name: str) -> list[Item]:
        """All the items of a collection, in the collection's order (DynamoDB compares strings as UTF-8 bytes)."""
        collection = COLLECTIONS[ref.type, name]
        partition = collection.partition(*ref.ids)
        if collection.index == "GSI1":
            candidates, sort_key = self._gsi1.get(partition, []), "GSI1SK"
        else:
            candidates, sort_key = self._table.get(partition, []), "SK"
        chosen = [item for item in candidates if item[sort_key].startswith(collection.prefix)]
        return sorted(chosen, key=lambda item: item[sort_key].encode(), reverse=not collection.ascending)

    def member_refs(self, ref: Ref, name: str) -> list[Ref]:
        """The nodes of a collection, in order (for a many-to-many, the other ends of the edges)."""
        collection = COLLECTIONS[ref.type, name]
        return [self._node_ref(collection, item) for item in self.members(ref, name)]

    def _node_ref(self, collection: Collection, item: Item) -> Ref:
        if collection.target is None:
            return Ref.of(collection.member, item)
        keys = natural_keys(collection.member, item)
        return Ref(collection.target, tuple(keys[name] for name in TYPES[collection.target].ids))

    def page(self, ref: Ref, conn: ConnSel) -> tuple[list[Item], dict[str, bool]]:
        """The members on a page, in the order asked for, and its hasPreviousPage and hasNextPage."""
        members = self.members(ref, conn.name)
        if conn.flip:
            members = members[::-1]
        if conn.where is not None:
            return self._filtered_page(members, conn)[:2]
        if conn.backward:
            end = len(members) if conn.after is None else conn.after
            start = max(0, end - conn.first)
            return members[start:end], {"hasPreviousPage": start > 0, "hasNextPage": conn.after is not None}
        start = 0 if conn.after is None else conn.after + 1
        more = len(members) > start + conn.first
        return members[start : start + conn.first], {"hasPreviousPage": conn.after is not None, "hasNextPage": more}

    def _filtered_page(self, members: list[Item], conn: ConnSel) -> tuple[list[Item], dict[str, bool], int]:
        """A filtered first page: DynamoDB reads ``Limit`` items per call and keeps those that match; the reader
        calls again until the page fills, the collection ends, or the budget is spent. Also the calls it takes."""
        assert conn.after is None, "the reference reads filtered pages from their start only"
        order = members[::-1] if conn.backward else members
        matched: list[Item] = []
        position, calls, done = 0, 0, False
        for limit in filter_limits(conn.first):
            calls += 1
            chunk = order[position : position + limit]
            position += len(chunk)
            matched += [item for item in chunk if matches(item, conn.where)]
            # DynamoDB says where it stopped whenever it read Limit items, even the last ones.
            if len(chunk) < limit or len(matched) > conn.first:
                done = True
                break
        more = len(matched) > conn.first or not done
        page = matched[: conn.first]
        if conn.backward:
            return page[::-1], {"hasPreviousPage": more, "hasNextPage": False, "readLimitReached": not done}, calls
        return page, {"hasPreviousPage": False, "hasNextPage": more, "readLimitReached": not done}, calls

    def page_calls(self, ref: Ref, conn: ConnSel) -> int:
        """The Query calls a page takes: one, or as many as a filtered page needs to fill."""
        if conn.where is None:
            return 1
        members = self.members(ref, conn.name)
        return self._filtered_page(members[::-1] if conn.flip else members, conn)[2]

    def _link_target(self, ref: Ref, item: Item | None, name: str) -> Ref | None:
        link = LINKS[ref.type, name]
        if link.from_ids is not None:
            return Ref(link.target, link.from_ids(ref.ids))
        if item is None:
            return None
        keys = natural_keys(ref.type, item)
        return Ref(link.target, tuple(keys[name] for name in link.from_item))

    # -- the answer --

    def answer(self, root: Root) -> dict[str, Any]:
        """What ``data`` must be."""
        return {root.field: self._object(root.ref, root.sel)}

    def _object(self, ref: Ref, sel: Obj) -> dict[str, Any] | None:
        item = self.item(ref)
        if item is None:
            return None
        keys = natural_keys(ref.type, item)
        out: dict[str, Any] = {}
        for name in sel.scalars:
            if name == "id":
                out[name] = Ref.of(ref.type, item).global_id
            elif name in keys:
                out[name] = keys[name]
            else:
                # The data sets hold declared values only: one outside an enum is an error, not a value
                # (tests/e2e/test_data_mismatch.py).
                out[name] = item.get(name)
        for rel in sel.relations:
            if isinstance(rel, LinkSel):
                target = self._link_target(ref, item, rel.name)
                out[rel.name] = None if target is None else self._object(target, rel.sel)
            else:
                out[rel.name] = self._connection(ref, item, rel)
        return out

    def _connection(self, ref: Ref, item: Item, conn: ConnSel) -> dict[str, Any]:
        collection = COLLECTIONS[ref.type, conn.name]
        page, flags = self.page(ref, conn)
        out: dict[str, Any] = {}
        if conn.total_count:
            out["totalCount"] = item.get(collection.counter)
        if conn.page_info:
            stopped = flags.pop("readLimitReached", False)
            # A page stopped by its budget hands out where reading stopped as its cursor, even with no member.
            start = CURSOR if page or (stopped and conn.backward) else None
            end = CURSOR if page or (stopped and not conn.backward) else None
            info = {**flags, "readLimitReached": stopped, "startCursor": start, "endCursor": end}
            out["pageInfo"] = {name: info[name] for name in conn.page_info}

        def node(member: Item) -> dict[str, Any] | None:
            assert conn.node is not None
            return self._object(self._node_ref(collection, member), conn.node)

        if conn.edges is not None:
            edges = []
            for member in page:
                edge: dict[str, Any] = {}
                for name in conn.edges:
                    if name == "cursor":
                        edge[name] = CURSOR
                    elif name == "node":
                        edge[name] = node(member)
                    else:
                        edge[name] = member.get(name)
                edges.append(edge)
            out["edges"] = edges
        if conn.nodes:
            out["nodes"] = [node(member) for member in page]
        return out

    # -- the cost --

    def cost(self, root: Root) -> Cost:
        """The optimal plan by the spec's Cost rules, applied to this data: DynamoDB calls and rounds.

        1. An object is "to read" in the round its table-key ids are known; in that round start its collections
           (one Query each) and its links whose target ids it knows. If its first collection's page is read from
           the side of its members where the parent's item sorts next to them (from either end, in either order,
           without a cursor or a filter), the object and that page are one Query.
        2. A round's point reads, minus items known from earlier rounds (read or Query members), are deduplicated
           into ceil(n/100) BatchGetItem. A page already answered is not asked again (same parent, field,
           size, cursor, direction); a page's members start their relations the round after it answers, and the
           targets of a many-to-many page's edges are to read then (only when node/nodes is selected).
        3. A link that needs ids from the source's item (Ticket.user) starts the round after that item is read.
           A null object starts nothing after its own round.
        """
        known: dict[Key, int] = {}  # item -> round whose answer brought it
        answered: dict[PageKey, int] = {}  # page -> round whose answer brought it
        waiting: dict[int, list[_Visit]] = defaultdict(list)
        waiting[1].append(_Visit("read", root.ref, root.sel))
        calls = rounds = clock = 0
        trace: list[str] = []
        r = 0
        late: dict[int, set[Key]] = defaultdict(set)  # parents a secondary index's Query did not meet, read by key
        while waiting or late:
            r += 1
            work = waiting.pop(r, [])
            now = _Round()
            while work:
                visit = work.pop(0)
                item_round = visit.item_round
                if visit.kind == "read" and visit.ref.key not in known:
                    ref = visit.ref
                    first = next((rel for rel in visit.sel.relations if isinstance(rel, ConnSel)), None)
                    if (
                        first is not None
                        and first.with_parent(COLLECTIONS[ref.type, first.name])
                        and _key(ref, first) not in answered
                    ):
                        now.combined[_key(ref, first)] = ref.key
                    else:
                        now.point.add(ref.key)
                    item_round = r
                elif visit.kind == "read":
                    item_round = known[visit.ref.key]
                self._start(visit, r, item_round, answered, now, work, waiting)
            point = (now.point | late.pop(r, set())) - set(now.combined.values())
            plain = now.pages - set(now.combined)
            # A filtered page's calls follow one another; what the round's answers start waits for the last.
            page_calls = [self.page_calls(page[0], page[1]) for page in plain]
            n = math.ceil(len(point) / 100) + len(now.combined) + sum(page_calls)
            if n:
                calls += n
                clock += max([1, *page_calls])
                rounds = clock
                trace.append(
                    f"round {r}: {n} calls: point reads {sorted(point)}; "
                    f"parent+page Queries {sorted(_show(p) for p in now.combined)}; "
                    f"page Queries {sorted(_show(p) for p in plain)}"
                )
            for key in point | set(now.combined.values()):
                if key in self.items:
                    known.setdefault(key, r)
            # An item may be absent from a secondary index (DynamoDB's rule): a parent its members' Query in one did
            # not meet, ahead of members it did, is read by its key a round later before it is taken for missing.
            for page, key in now.combined.items():
                on_index = COLLECTIONS[page[0].type, page[1].name].index != "table"
                if key not in self.items and on_index and self.page(page[0], page[1])[0]:
                    late[r + 1].add(key)
            for page in now.pages | set(now.combined):
                answered[page] = r
                members, _ = self.page(page[0], page[1])
                for member in members:
                    known.setdefault((member["PK"], member["SK"]), r)
            for visit, conn in now.then:
                self._members(visit, conn, r + 1, waiting[r + 1])
            waiting = defaultdict(list, {k: v for k, v in waiting.items() if v})
        return Cost(calls, rounds, trace)

    def _alive(self, visit: _Visit) -> bool:
        """Whether the object and every object on the path to it exist: a null object starts nothing later."""
        return all(key in self.items for key in (*visit.path, visit.ref.key))

    def _start(
        self,
        visit: _Visit,
        r: int,
        item_round: int,
        answered: dict[PageKey, int],
        now: _Round,
        work: list[_Visit],
        waiting: dict[int, list[_Visit]],
    ) -> None:
        """Round ``r`` reaches an object (its item arrives in ``item_round``): start what its relations need."""
        ref = visit.ref
        item = self.item(ref)
        path = (*visit.path, ref.key)
        for rel in visit.sel.relations:
            if isinstance(rel, LinkSel):
                link = LINKS[ref.type, rel.name]
                if link.from_ids is not None:
                    target = Ref(link.target, link.from_ids(ref.ids))
                    work.append(_Visit("read", target, rel.sel, path=path))
                elif self._alive(visit):
                    target = self._link_target(ref, item, rel.name)
                    assert target is not None
                    at = max(r, item_round + 1)
                    (work if at == r else waiting[at]).append(_Visit("read", target, rel.sel, path=path))
                continue
            page = _key(ref, rel)
            if page in answered:
                if self._alive(visit):
                    self._members(visit, rel, r, work)
            else:
                now.pages.add(page)
                if self._alive(visit):
                    now.then.append((visit, rel))

    def _members(self, parent: _Visit, conn: ConnSel, r: int, into: list[_Visit]) -> None:
        """A page's members (already read: their relations start) or many-to-many targets (to read) in round r."""
        if conn.node is None or not (conn.nodes or "node" in (conn.edges or ())):
            return
        collection = COLLECTIONS[parent.ref.type, conn.name]
        members, _ = self.page(parent.ref, conn)
        path = (*parent.path, parent.ref.key)
        for member in members:
            if collection.target is None:
                into.append(_Visit("known", Ref.of(collection.member, member), conn.node, r - 1, path))
            else:
                into.append(_Visit("read", self._node_ref(collection, member), conn.node, path=path))


@dataclass(frozen=True)
class _Visit:
    """A round reaches an object: one to read, or a page member already known (its item from round item_round)."""

    kind: str
    ref: Ref
    sel: Obj
    item_round: int = 0
    path: tuple[Key, ...] = ()


def _show(page: PageKey) -> str:
    ref, conn = page
    return f"{ref.type}{list(ref.ids)}.{_render_conn(conn)}"


def _key(ref: Ref, conn: ConnSel) -> PageKey:
    """A page as the gateway reads it: the same parent and connection with the same arguments (an and/or of one
    filter is that filter)."""
    where = None if conn.where is None else _canonical(conn.where)
    return ref, replace(conn, total_count=False, page_info=(), edges=None, nodes=False, node=None, where=where)


def _canonical(where: Any) -> Any:
    if where[0] not in ("and", "or"):
        return where
    parts = tuple(_canonical(part) for part in where[1])
    return parts[0] if len(parts) == 1 else (where[0], parts)
