"""Counters kept through an index: copies of a document live in partitions of their own, and their GSI1 keys name
the original (or, as drafts, a variant shape, the document they draft); the original counts each kind exactly, in
the transaction that writes or deletes the member, whatever clients do at the same time."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from gateway.config import Settings
from gateway.dynamo.store import Store
from gateway.writes.recount import recount
from tests.support.gateway import Gateway
from tests.support.library_copies import COPIES_DESK
from tests.support.mutations import mutate, mutation, post_all

COPY = "... on Copy { copyId }"


@pytest.fixture(scope="module")
def desk(served: Callable[..., Gateway]) -> Gateway:
    return served(COPIES_DESK)


def _doc(desk: Gateway) -> str:
    doc_id = f"d-{uuid.uuid4().hex[:8]}"
    result, _ = mutate(desk, "createDoc", {"docId": doc_id, "title": "Manual"})
    assert result["__typename"] == "Doc", result
    return doc_id


@pytest.fixture
def doc(desk: Gateway) -> str:
    """A new document, with no copy yet."""
    return _doc(desk)


def counts(desk: Gateway, doc_id: str) -> dict[str, Any]:
    """The document's counters and what its connections list, read through the gateway."""
    body = desk.query(
        f'{{ doc(docId: "{doc_id}") {{ copyCount draftCount copies {{ totalCount nodes {{ copyId }} }}'
        " drafts { totalCount nodes { copyId } } } }"
    )
    assert "errors" not in body, body
    doc = body["data"]["doc"]
    return {
        "copyCount": doc["copyCount"],
        "draftCount": doc["draftCount"],
        "copies": sorted(node["copyId"] for node in doc["copies"]["nodes"]),
        "drafts": sorted(node["copyId"] for node in doc["drafts"]["nodes"]),
        "totals": (doc["copies"]["totalCount"], doc["drafts"]["totalCount"]),
    }


def test_a_copy_and_a_draft_are_counted_on_the_original_in_the_transaction_that_writes_them(
    desk: Gateway, doc: str
) -> None:
    """Regression: a member with variant shapes was counted in the collection of every shape, and a create that
    gave one shape's ids failed (INTERNAL) looking for the other's parent; each kind is now counted where it is
    listed."""
    copy, operations = mutate(desk, "createCopy", {"copyId": f"{doc}-c1", "originalId": doc}, COPY)
    assert copy["__typename"] == "Copy", copy
    assert operations == {"TransactWriteItems": 1}
    draft, operations = mutate(desk, "createCopy", {"copyId": f"{doc}-d1", "draftOf": doc}, COPY)
    assert draft["__typename"] == "Copy", draft
    assert operations == {"TransactWriteItems": 1}
    assert counts(desk, doc) == {
        "copyCount": 1,
        "draftCount": 1,
        "copies": [f"{doc}-c1"],
        "drafts": [f"{doc}-d1"],
        "totals": (1, 1),
    }


def test_deleting_a_copy_uncounts_it_on_the_original_it_names(desk: Gateway, doc: str) -> None:
    other = _doc(desk)
    mutate(desk, "createCopy", {"copyId": f"{doc}-c1", "originalId": doc})
    mutate(desk, "createCopy", {"copyId": f"{doc}-c2", "originalId": other})
    mutate(desk, "createCopy", {"copyId": f"{doc}-d1", "draftOf": doc})

    deleted, operations = mutate(desk, "deleteCopy", {"copyId": f"{doc}-c1"}, "... on Deleted { items { type count } }")
    assert deleted == {"__typename": "Deleted", "items": [{"type": "Copy", "count": 1}]}
    # The copy's item is read to learn which original counts it, then deleted with that count in one transaction.
    assert operations == {"GetItem": 1, "TransactWriteItems": 1}
    assert counts(desk, doc) == {
        "copyCount": 0,
        "draftCount": 1,
        "copies": [],
        "drafts": [f"{doc}-d1"],
        "totals": (0, 1),
    }
    assert counts(desk, other)["copyCount"] == 1
    mutate(desk, "deleteCopy", {"copyId": f"{doc}-d1"})
    assert counts(desk, doc)["draftCount"] == 0


def test_concurrent_creates_and_deletes_of_copies_keep_the_count_exact(desk: Gateway, doc: str) -> None:
    creates = [
        (mutation("createCopy", COPY), {"input": {"copyId": f"{doc}-c{i}", "originalId": doc}}) for i in range(6)
    ]
    bodies = post_all(desk, creates)
    assert all(body["data"]["createCopy"]["__typename"] == "Copy" for body in bodies), bodies
    deletes = [(mutation("deleteCopy"), {"input": {"copyId": f"{doc}-c{i}"}}) for i in range(0, 6, 2)]
    deletes += [(mutation("createCopy", COPY), {"input": {"copyId": f"{doc}-d{i}", "draftOf": doc}}) for i in range(3)]
    bodies = post_all(desk, deletes)
    answers = sorted(next(iter(body["data"].values()))["__typename"] for body in bodies)
    assert answers == ["Copy"] * 3 + ["Deleted"] * 3, bodies
    found = counts(desk, doc)
    assert found["copies"] == [f"{doc}-c{i}" for i in (1, 3, 5)]
    assert (found["copyCount"], found["draftCount"], found["totals"]) == (3, 3, (3, 3))


def test_an_update_cannot_move_a_copy_to_another_original(desk: Gateway, doc: str) -> None:
    """The ids an index key names are no update input: a copy stays counted where it was created."""
    other = _doc(desk)
    mutate(desk, "createCopy", {"copyId": f"{doc}-c1", "originalId": doc})
    moved = f'copyId: "{doc}-c1", expectedVersion: 1, originalId: "{other}"'
    body = desk.query(f"mutation {{ updateCopy(input: {{{moved}}}) {{ __typename }} }}")
    assert body.get("data") is None
    assert [error["extensions"]["code"] for error in body["errors"]] == ["GRAPHQL_VALIDATION_FAILED"], body
    assert (counts(desk, doc)["copyCount"], counts(desk, other)["copyCount"]) == (1, 0)


async def test_recount_counts_copies_and_drafts_written_by_another_tool_each_where_it_is_listed(
    dynamodb: Any, endpoint: str, served: Callable[..., Gateway]
) -> None:
    """Regression: the recount took a draft for a copy too, and failed looking for the original it does not name."""
    desk = served(COPIES_DESK)
    put = [
        {"PK": "DOC#d", "SK": "DOC", "title": "Manual"},
        {"PK": "COPY#c1", "SK": "COPY", "GSI1PK": "DOC#d", "GSI1SK": "COPY#c1"},
        {"PK": "COPY#c2", "SK": "COPY", "GSI1PK": "DOC#d", "GSI1SK": "COPY#c2"},
        {"PK": "COPY#d1", "SK": "COPY", "GSI1PK": "DOC#d", "GSI1SK": "DRAFT#d1"},
    ]
    for item in put:
        dynamodb.put_item(TableName=desk.table, Item={name: {"S": value} for name, value in item.items()})
    async with Store.open(Settings(endpoint_url=endpoint, table=desk.table), COPIES_DESK.model) as store:
        report = await recount(store, COPIES_DESK.writes, lambda *step: None)
    assert (report.parents, report.corrected) == (1, 1)
    assert counts(desk, "d") == {
        "copyCount": 2,
        "draftCount": 1,
        "copies": ["c1", "c2"],
        "drafts": ["d1"],
        "totals": (2, 1),
    }


def test_an_original_with_copies_is_deleted_only_with_them_and_a_cascade_takes_copies_and_drafts(
    desk: Gateway, doc: str
) -> None:
    mutate(desk, "createCopy", {"copyId": f"{doc}-c1", "originalId": doc})
    mutate(desk, "createCopy", {"copyId": f"{doc}-d1", "draftOf": doc})
    refused, _ = mutate(desk, "deleteDoc", {"docId": doc})
    assert refused["__typename"] == "ConflictError" and refused["reason"] == "HAS_CHILDREN", refused

    deleted, operations = mutate(
        desk, "deleteDoc", {"docId": doc, "cascade": True}, "... on Deleted { items { type count } }"
    )
    assert sorted((one["type"], one["count"]) for one in deleted["items"]) == [("Copy", 2), ("Doc", 1)], deleted
    # The parent's delete is refused while it counts members; each collection's members are then found by one Query
    # on GSI1 and deleted with their counter updates in one transaction; the parent goes last, its counters at 0.
    assert operations == {"DeleteItem": 2, "Query": 2, "TransactWriteItems": 2}
    assert desk.query(f'{{ doc(docId: "{doc}") {{ docId }} }}')["data"]["doc"] is None
    assert desk.query(f'{{ copy(copyId: "{doc}-d1") {{ copyId }} }}')["data"]["copy"] is None
