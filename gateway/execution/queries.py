"""Request building: pure functions from a relation and its arguments to the Query that answers it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gateway.design.keys import Ids, validate_id
from gateway.design.model import Collection, Lookup, Model, graphql_name
from gateway.dynamo.requests import Filter
from gateway.dynamo.store import Key, QueryRequest
from gateway.errors import BadUserInput
from gateway.execution import filters


def page_size(first: int | None, default: int, maximum: int, argument: str = "first") -> int:
    if first is None:
        return default
    if not 1 <= first <= maximum:
        raise BadUserInput(f"{argument} must be between 1 and {maximum}", argument=argument)
    return first


@dataclass(frozen=True)
class Window:
    """Which page of a collection: ``size`` members after ``cursor`` (from the start when None), or, ``backward``,
    the ``size`` members before it (from the end when None)."""

    size: int
    cursor: str | None = None
    backward: bool = False
    flipped: bool = False
    """Ordered against the collection's declared order (its ``order`` argument)."""
    filter: Filter | None = None
    range: KeyRange | None = None

    def with_parent(self, model: Model, collection: Collection) -> bool:
        """Whether this page may come with the parent in one Query: read from either end, in either order, the read
        starts at the parent when it sorts next to the members on that side. Not after a cursor (the read starts
        past the parent), nor with a filter (DynamoDB filters no key attribute, so it would drop the parent) or a
        range (it leaves the parent out)."""
        return (
            self.cursor is None
            and self.filter is None
            and self.range is None
            and model.parent_sorts_with_members(collection, self.ascending(collection))
        )

    def ascending(self, collection: Collection) -> bool:
        """Which way the Query reads the index."""
        return (collection.ascending != self.flipped) != self.backward

    @property
    def argument(self) -> str:
        """The argument that carried the cursor, for errors about it."""
        return "before" if self.backward else "after"


def window(
    args: Mapping[str, Any],
    first_given: bool,
    default: int,
    maximum: int,
    collection: Collection,
    numeric: bool = False,
) -> Window:
    """The page a connection's arguments ask for. ``first`` has a default, so it reads forwards unless ``last``
    or ``before`` is given; then ``first`` and ``after`` must be left out (``first_given``: the client set it).
    ``numeric``: the collection sorts by a number key (``sorts_by_number``).

    Paging both ways at once (Relay allows ``first`` with ``last``) answers nothing a client needs and is refused.
    """
    order = args.get("order")
    flipped = order is not None and (getattr(order, "value", order) == ASCENDING) != collection.ascending
    where = filters.parse(args.get(filters.ARGUMENT), collection)
    ranged = key_range(args, collection, numeric)
    last, before, after = args.get("last"), args.get("before"), args.get("after")
    if last is None and before is None:
        size = page_size(args.get("first"), default, maximum)
        return Window(size, _cursor(after, "after"), flipped=flipped, filter=where, range=ranged)
    for name, given in (("first", first_given), ("after", after is not None)):
        if given:
            raise BadUserInput(
                f"{name} cannot be combined with last or before: page forwards with first and after, or "
                "backwards with last and before",
                argument=name,
            )
    size = page_size(last, default, maximum, "last")
    return Window(size, _cursor(before, "before"), backward=True, flipped=flipped, filter=where, range=ranged)


RANGE_OPERATORS = ("between", "gte", "lte", "beginsWith")
"""The fields of a range argument (GraphQL names): one of them is given."""


def sorts_by_number(model: Model, collection: Collection) -> bool:
    """Whether ``collection``'s members sort by a number key: its range is of numbers, compared as numbers."""
    return model.index(collection.index).sk_type == "N"


@dataclass(frozen=True)
class KeyRange:
    """A stretch of a collection's sort key (``Collection.range``), as the values of its last field: inclusive
    bounds, either of which may be open, or a prefix. Compared as DynamoDB compares keys: text by UTF-8 bytes,
    a number key (``numeric``) as numbers."""

    low: str | None = None
    high: str | None = None
    prefix: str | None = None
    numeric: bool = False

    def condition(self, attribute: str, head: str) -> tuple[tuple[str, str, str], str | None]:
        """The Query's sort key condition (and the upper bound of a ``between``) under ``head``, the key's text
        before the field: kept within keys that start with ``head``, so no item of another shape is read."""
        if self.prefix is not None:
            return (attribute, "begins_with", head + self.prefix), None
        if self.low is not None and self.high is not None:
            return (attribute, "between", head + self.low), head + self.high
        if self.low is not None:
            if not head:
                return (attribute, ">=", self.low), None
            return (attribute, "between", head + self.low), _after_prefix(head)
        assert self.high is not None
        if not head:
            return (attribute, "<=", self.high), None
        return (attribute, "between", head), head + self.high

    def holds(self, key: str, head: str) -> bool:
        """Whether a sort key is in the range (a cursor's position must be, or DynamoDB refuses to resume there)."""
        if not key.startswith(head):
            return False
        if self.numeric:  # the whole key is the number (a number key holds no text)
            number = Decimal(key)
            return (self.low is None or number >= Decimal(self.low)) and (
                self.high is None or number <= Decimal(self.high)
            )
        value = key[len(head) :].encode()
        if self.prefix is not None:
            return value.startswith(self.prefix.encode())
        return (self.low is None or value >= self.low.encode()) and (self.high is None or value <= self.high.encode())


def key_range(args: Mapping[str, Any], collection: Collection, numeric: bool = False) -> KeyRange | None:
    """The range a connection's range argument (as GraphQL coerced it) asks for; None when it asks for none.
    ``numeric``: of a number key, whose bounds are whole numbers' text (``Long``)."""
    if collection.range is None:
        return None
    argument = graphql_name(collection.range)
    given = args.get(argument)
    if given is None:
        return None
    missing = [graphql_name(level) for level in collection.levels if args.get(graphql_name(level)) is None]
    if missing:
        # Without them the range's values would not follow one text in the sort key: no one stretch of keys.
        raise BadUserInput(
            f"{argument} is read within {', '.join(missing)}: give {missing[0]} as well", argument=argument
        )
    named = {name: value for name, value in given.items() if value is not None}
    if len(named) != 1:
        raise BadUserInput(f"{argument} takes one of {', '.join(RANGE_OPERATORS)}", argument=argument)
    ((operator, value),) = named.items()
    if operator == "between":
        if len(value) != 2:
            raise BadUserInput(f"{argument}.between takes two values: low, then high", argument=argument)
        low, high = (_bound(collection, str(one), argument) for one in value)
        if (Decimal(low) > Decimal(high)) if numeric else (low.encode() > high.encode()):
            raise BadUserInput(f"{argument}.between takes the low bound first: {low!r} > {high!r}", argument=argument)
        return KeyRange(low=low, high=high, numeric=numeric)
    if operator == "beginsWith":
        return KeyRange(prefix=validate_id(str(value), argument))
    text = _bound(collection, str(value), argument)
    return KeyRange(low=text, numeric=numeric) if operator == "gte" else KeyRange(high=text, numeric=numeric)


def _bound(collection: Collection, value: str, argument: str) -> str:
    """A bound of a range as the members' keys write it: a zero-padded number padded (``7`` is ``00007``), so that
    key order is the numbers' order; BadUserInput for text a number field cannot hold."""
    assert collection.range is not None
    return collection.member_shape.sk.written(collection.range, validate_id(value, argument))


ASCENDING = "ASCENDING"
"""The value of a connection's ``order`` argument that reads the index forwards."""

MAX_FILTERED_READ = 1000
"""The most items one Query of a filtered page reads (DynamoDB stops at 1 MB anyway)."""


def filter_limits(size: int, calls: int) -> list[int]:
    """The ``Limit`` of each Query a filtered page may send, ``calls`` at most: DynamoDB applies it before the
    filter, so the first reads what a page needs if every member matches, and each next one four times more. A
    page whose members all match costs one Query, as unfiltered; a sparse filter reads on, within a known bound."""
    return [min(MAX_FILTERED_READ, (size + 1) * 4**call) for call in range(calls)]


def _cursor(value: Any, argument: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise BadUserInput(f"{argument} must be a cursor", argument=argument)


def binding(collection: Collection, parent_ids: Ids) -> str:
    """What a cursor is bound to: the field, and the range it paginates (a partition and a sort-key prefix).

    With a composite sort key the prefix names a level of the hierarchy, so a cursor from one level is refused at
    another, as it is in another partition.
    """
    shape = collection.member_shape
    ids = collection.member_ids(parent_ids)
    return f"{collection.name}\x00{shape.pk.partition(ids, 0)}\x00{collection.sort_prefix(ids)}"


def narrowed(collection: Collection, parent_ids: Ids, arguments: Mapping[str, object]) -> dict[str, str]:
    """The parent's ids with the levels of a composite sort key that a connection's ``arguments`` (by GraphQL
    name) give, validated: a level only with the ones above it, so the ids given always make a prefix of the key.
    The Query, its cursors and its cache are then those of that prefix."""
    out = dict(parent_ids)
    missing: str | None = None
    for level in collection.levels:
        argument = graphql_name(level)
        value = arguments.get(argument)
        if value is None:
            missing = missing or argument
        elif missing is not None:
            raise BadUserInput(f"{argument} is a level below {missing}: give {missing} as well", argument=argument)
        else:
            out[level] = validate_id(str(value), argument)
    return out


def narrows(collection: Collection, arguments: Mapping[str, object]) -> bool:
    """Whether ``arguments`` give a level, so that the Query reads part of the members only."""
    return any(arguments.get(graphql_name(level)) is not None for level in collection.levels)


def members_query(
    model: Model,
    collection: Collection,
    parent_ids: Ids,
    first: int,
    start_key: Key | None = None,
    window: Window | None = None,
    shard: int | str = 0,
) -> QueryRequest:
    """The members only: ``begins_with`` on their sort-key prefix (a union's: the one its kinds share, or the whole
    partition), one extra item to know if more follow. The
    window may read from the end or against the declared order (the same index, ``ScanIndexForward`` turned, at
    the same cost), and filter.

    Of a sharded collection, the members in one ``shard``. A position in any shard resumes every shard: the sort
    key tells all members apart (the shard is picked by one of its ids), so each shard's Query starts past the same
    sort key, in its own partition."""
    index = model.index(collection.index)
    shape = collection.member_shape
    parent_ids = collection.member_ids(parent_ids)
    partition = shape.pk.partition(parent_ids, shard)
    if start_key is not None and collection.shards > 1:
        start_key = {**start_key, index.pk: partition}
    # Empty for a sort key that starts with a member's own field, and for a union whose kinds share no prefix.
    prefix = collection.sort_prefix(parent_ids)
    sort = (index.sk, "begins_with", prefix) if prefix and index.sk is not None else None
    sort_end = None
    if window is not None and window.range is not None:
        assert index.sk is not None  # a range is a field of the sort key (the model's validation)
        sort, sort_end = window.range.condition(index.sk, prefix)
        resumed = None if start_key is None else start_key.get(index.sk)
        if isinstance(resumed, str) and not window.range.holds(resumed, prefix):
            raise BadUserInput(
                f"{window.argument}: the cursor is outside the range asked for", argument=window.argument
            )
    return QueryRequest(
        partition=(index.pk, partition),
        sort=sort,
        sort_end=sort_end,
        index=collection.index,
        ascending=collection.ascending if window is None else window.ascending(collection),
        limit=first + 1,
        start_key=start_key,
        filter=None if window is None else window.filter,
        consistent=collection.consistent,
    )


def partitions(collection: Collection, parent_ids: Ids) -> list[str]:
    """The partition of each shard of ``collection`` (one for a collection that is not sharded)."""
    shape = collection.member_shape.pk
    ids = collection.member_ids(parent_ids)
    return [shape.partition(ids, shard) for shard in range(collection.shards)]


def parent_and_members_query(model: Model, collection: Collection, parent_ids: Ids, window: Window) -> QueryRequest:
    """The parent and the page ``window`` of its members in one Query; valid when ``window.with_parent`` holds."""
    if not window.with_parent(model, collection):
        raise ValueError(f"{collection.name}: this page's read does not start at the parent")
    index = model.index(collection.index)
    assert index.sk is not None  # no parent heads a partition of an index without a sort key
    parent = collection.parent.keys[collection.index]
    parent_sk = parent.sk.format(parent_ids)
    members = collection.member_shape.sk.prefix(collection.member_ids(parent_ids))
    # Bounded on both sides, so items of other shapes beyond the members are never read.
    low, high = (parent_sk, _after_prefix(members)) if parent_sk < members else (members, parent_sk)
    return QueryRequest(
        partition=(index.pk, parent.pk.format(parent_ids)),
        sort=(index.sk, "between", low),
        sort_end=high,
        index=collection.index,
        ascending=window.ascending(collection),
        limit=window.size + 2,
        consistent=collection.consistent,
    )


def lookup_query(model: Model, lookup: Lookup, ids: Ids) -> QueryRequest:
    """The entity's item in the lookup's index: both keys equal, at most two items read (a second one says the ids
    do not name one item)."""
    index = model.index(lookup.index)
    shape = lookup.shape
    return QueryRequest(
        partition=(index.pk, shape.pk.format(ids)),
        sort=None if index.sk is None else (index.sk, "=", shape.sk.format(ids)),
        index=lookup.index,
        limit=2,
    )


def _after_prefix(prefix: str) -> str:
    """The least string above every string that starts with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


MAX_BATCH_IDS = 1000


def batch_ids(ids: Sequence[str], argument: str) -> list[str]:
    """Validated ids of a batch field; the count is bounded so one request cannot ask for the whole table."""
    if len(ids) > MAX_BATCH_IDS:
        raise BadUserInput(f"{argument} takes at most {MAX_BATCH_IDS} ids", argument=argument)
    return [validate_id(one, argument) for one in ids]
