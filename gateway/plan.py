"""Request building: pure functions from a relation and its arguments to the Query that answers it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gateway.errors import BadUserInput
from gateway.keys import Ids, validate_id
from gateway.model import Collection, Model, graphql_name
from gateway.store import Key, QueryRequest


def page_size(first: int | None, default: int, maximum: int) -> int:
    if first is None:
        return default
    if not 1 <= first <= maximum:
        raise BadUserInput(f"first must be between 1 and {maximum}", argument="first")
    return first


def binding(collection: Collection, parent_ids: Ids) -> str:
    """What a cursor is bound to: the field, and the range it paginates (a partition and a sort-key prefix).

    With a composite sort key the prefix names a level of the hierarchy, so a cursor from one level is refused at
    another, as it is in another partition.
    """
    shape = collection.member.keys[collection.index]
    return f"{collection.name}\x00{shape.pk.format(parent_ids)}\x00{shape.sk.prefix(parent_ids)}"


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
    model: Model, collection: Collection, parent_ids: Ids, first: int, start_key: Key | None = None
) -> QueryRequest:
    """The members only: ``begins_with`` on their sort-key prefix, one extra item to know if more follow."""
    index = model.index(collection.index)
    shape = collection.member.keys[collection.index]
    return QueryRequest(
        partition=(index.pk, shape.pk.format(parent_ids)),
        sort=(index.sk, "begins_with", shape.sk.prefix(parent_ids)),
        index=collection.index,
        ascending=collection.ascending,
        limit=first + 1,
        start_key=start_key,
    )


def parent_and_members_query(model: Model, collection: Collection, parent_ids: Ids, first: int) -> QueryRequest:
    """The parent and the first page of members in one Query; valid when the parent sorts at the head."""
    if not model.parent_sorts_with_members(collection):
        raise ValueError(f"{collection.name}: the parent does not sort ahead of its members")
    index = model.index(collection.index)
    parent = collection.parent.keys[collection.index]
    parent_sk = parent.sk.format(parent_ids)
    members = collection.member.keys[collection.index].sk.prefix(parent_ids)
    # Bounded on both sides, so items of other shapes beyond the members are never read.
    low, high = (parent_sk, _after_prefix(members)) if collection.ascending else (members, parent_sk)
    return QueryRequest(
        partition=(index.pk, parent.pk.format(parent_ids)),
        sort=(index.sk, "between", low),
        sort_end=high,
        index=collection.index,
        ascending=collection.ascending,
        limit=first + 2,
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
