"""Request building: pure functions from a relation and its arguments to the Query that answers it."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.errors import BadUserInput
from gateway.keys import Ids, validate_id
from gateway.model import Collection, Model
from gateway.store import Key, QueryRequest


def page_size(first: int | None, default: int, maximum: int) -> int:
    if first is None:
        return default
    if not 1 <= first <= maximum:
        raise BadUserInput(f"first must be between 1 and {maximum}", argument="first")
    return first


def binding(collection: Collection, parent_ids: Ids) -> str:
    """What a cursor is bound to: the field and the parent it paginates."""
    partition = collection.member.keys[collection.index].pk.format(parent_ids)
    return f"{collection.name}\x00{partition}"


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
    return QueryRequest(
        partition=(index.pk, parent.pk.format(parent_ids)),
        sort=(index.sk, ">=" if collection.ascending else "<=", parent.sk.format(parent_ids)),
        index=collection.index,
        ascending=collection.ascending,
        limit=first + 2,
    )


MAX_BATCH_IDS = 1000


def batch_ids(ids: Sequence[str], argument: str) -> list[str]:
    """Validated ids of a batch field; the count is bounded so one request cannot ask for the whole table."""
    if len(ids) > MAX_BATCH_IDS:
        raise BadUserInput(f"{argument} takes at most {MAX_BATCH_IDS} ids", argument=argument)
    return [validate_id(one, argument) for one in ids]
