"""A design's own write rules through a served gateway: numbers from a counter on the parent, ULIDs, and sets."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from gateway.writes.writer import SEQUENCE_ATTEMPTS
from tests.support.gateway import Gateway
from tests.support.helpdesk import HELPDESK
from tests.support.mutations import mutate, mutation, post_all, stored

TICKET = "... on Ticket { ticketNumber title }"
REQUEST = "... on Request { requestNumber }"


@pytest.fixture(scope="module")
def desk(served: Callable[..., Gateway]) -> Gateway:
    return served(HELPDESK)


@pytest.fixture
def project(desk: Gateway) -> str:
    """A new project, with no number taken yet."""
    project_id = f"p-{uuid.uuid4().hex[:8]}"
    result, _ = mutate(desk, "createProject", {"projectId": project_id, "name": "Desk"})
    assert result["__typename"] == "Project"
    return project_id


def test_tickets_and_requests_take_the_next_numbers_of_one_sequence(desk: Gateway, project: str, dynamodb: Any) -> None:
    first, operations = mutate(desk, "createTicket", {"projectId": project, "title": "Printer"}, TICKET)
    second, _ = mutate(desk, "createRequest", {"projectId": project, "title": "Laptop"}, REQUEST)
    third, _ = mutate(desk, "createTicket", {"projectId": project, "title": "Wi-Fi"}, TICKET)

    assert (first["ticketNumber"], second["requestNumber"], third["ticketNumber"]) == ("1", "2", "3")
    # The counter is read, then taken in the transaction that writes the ticket and counts it.
    assert operations == {"GetItem": 1, "TransactWriteItems": 1}
    # Padded where the key says so, plain where it does not; the copy of the number holds it as given.
    ticket = stored(dynamodb, desk, f"PROJ#{project}", "TICKET#0000003")
    assert ticket is not None and ticket["number"] == {"S": "3"}
    assert stored(dynamodb, desk, f"PROJ#{project}", "REQUEST#2") is not None
    parent = stored(dynamodb, desk, f"PROJ#{project}", "META")
    assert parent is not None and (parent["lastNumber"], parent["ticketCount"]) == ({"N": "3"}, {"N": "2"})


def test_a_numbered_ticket_is_read_back_by_its_number(desk: Gateway, project: str) -> None:
    for title in ("a", "b"):
        mutate(desk, "createTicket", {"projectId": project, "title": title})

    body = desk.query(
        'query($p: ID!) { ticket(projectId: $p, ticketNumber: "2") { title number: ticketNumber }'
        " project(projectId: $p) { lastNumber tickets(first: 5) { nodes { ticketNumber } } } }",
        {"p": project},
    )

    assert body["data"]["ticket"] == {"title": "b", "number": "2"}
    assert body["data"]["project"] == {
        "lastNumber": 2,
        "tickets": {"nodes": [{"ticketNumber": "1"}, {"ticketNumber": "2"}]},
    }


def test_concurrent_creates_take_distinct_gap_free_numbers(desk: Gateway, project: str, dynamodb: Any) -> None:
    requests = [
        (mutation(field, selection), {"input": {"projectId": project, "title": f"t{i}"}})
        for i, (field, selection) in enumerate([("createTicket", TICKET), ("createRequest", REQUEST)] * 4)
    ]

    desk.sent.clear()
    bodies = post_all(desk, requests)

    answers = [next(iter(body["data"].values())) for body in bodies]
    assert all(answer["__typename"] in ("Ticket", "Request") for answer in answers), answers
    numbers = sorted(int(answer.get("ticketNumber") or answer["requestNumber"]) for answer in answers)
    assert numbers == list(range(1, len(requests) + 1))
    parent = stored(dynamodb, desk, f"PROJ#{project}", "META")
    assert parent is not None and (parent["lastNumber"], parent["ticketCount"]) == ({"N": "8"}, {"N": "4"})
    # Each create read the counter once: one that lost a number learnt the counter from the refusal.
    assert desk.sent["GetItem"] == len(requests)


def before_writes(monkeypatch: pytest.MonkeyPatch, desk: Gateway, times: int, meddle: Callable[[], Any]) -> list[int]:
    """Let another writer ``meddle`` between the gateway's read of a counter and each of its first ``times`` writes
    (a spy around the store's real write); the list counts the writes the spy saw."""
    store = desk.app.state.store
    real = store.write
    seen: list[int] = []

    async def write(ops: Any, ledger: Any) -> Any:
        seen.append(len(ops))
        if len(seen) <= times:
            meddle()
        return await real(ops, ledger)

    monkeypatch.setattr(store, "write", write)
    return seen


def take_numbers_first(
    monkeypatch: pytest.MonkeyPatch, desk: Gateway, dynamodb: Any, project: str, times: int
) -> list[int]:
    """Another writer takes the next number of ``project`` before each of the gateway's first ``times`` writes."""
    return before_writes(
        monkeypatch,
        desk,
        times,
        lambda: dynamodb.update_item(
            TableName=desk.table,
            Key={"PK": {"S": f"PROJ#{project}"}, "SK": {"S": "META"}},
            UpdateExpression="ADD lastNumber :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        ),
    )


def test_a_create_that_loses_its_number_takes_the_next_without_reading_again(
    desk: Gateway, project: str, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = take_numbers_first(monkeypatch, desk, dynamodb, project, times=1)

    result, operations = mutate(desk, "createTicket", {"projectId": project, "title": "late"}, TICKET)

    assert result == {"__typename": "Ticket", "ticketNumber": "2", "title": "late"}
    assert operations == {"GetItem": 1, "TransactWriteItems": 2} and len(writes) == 2
    assert stored(dynamodb, desk, f"PROJ#{project}", "TICKET#0000001") is None


def test_a_create_that_keeps_losing_its_number_gives_up_with_a_conflict(
    desk: Gateway, project: str, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = take_numbers_first(monkeypatch, desk, dynamodb, project, times=1000)

    result, operations = mutate(desk, "createTicket", {"projectId": project, "title": "never"}, TICKET)

    assert result["__typename"] == "ConflictError" and result["reason"] == "CHANGED"
    assert "lost Project.lastNumber" in result["message"]
    assert operations["TransactWriteItems"] == len(writes) == SEQUENCE_ATTEMPTS


def test_a_numbered_create_sent_again_with_its_token_answers_the_number_it_took(
    desk: Gateway, project: str, dynamodb: Any
) -> None:
    token = uuid.uuid4().hex
    data = {"projectId": project, "title": "once"}

    first, _ = mutate(desk, "createTicket", data, TICKET, token=token)
    again, _ = mutate(desk, "createTicket", data, TICKET, token=token)

    assert first == again == {"__typename": "Ticket", "ticketNumber": "1", "title": "once"}
    parent = stored(dynamodb, desk, f"PROJ#{project}", "META")
    assert parent is not None and (parent["lastNumber"], parent["ticketCount"]) == ({"N": "1"}, {"N": "1"})


def test_a_project_deleted_after_its_counter_was_read_is_not_found(
    desk: Gateway, project: str, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = {"PK": {"S": f"PROJ#{project}"}, "SK": {"S": "META"}}
    before_writes(monkeypatch, desk, 1, lambda: dynamodb.delete_item(TableName=desk.table, Key=key))

    result, operations = mutate(desk, "createTicket", {"projectId": project, "title": "orphan"}, TICKET)

    assert result["__typename"] == "NotFoundError" and result["entity"] == "Project"
    assert operations == {"GetItem": 1, "TransactWriteItems": 1}
    assert stored(dynamodb, desk, f"PROJ#{project}", "TICKET#0000001") is None


def test_a_numbered_create_under_a_missing_project_is_not_found(desk: Gateway, dynamodb: Any) -> None:
    missing = f"p-{uuid.uuid4().hex[:8]}"

    result, operations = mutate(desk, "createTicket", {"projectId": missing, "title": "x"}, TICKET)

    assert result["__typename"] == "NotFoundError" and result["entity"] == "Project"
    assert operations == {"GetItem": 1}
    assert stored(dynamodb, desk, f"PROJ#{missing}", "TICKET#0000001") is None


def test_a_counter_behind_the_items_is_a_conflict_not_an_overwrite(desk: Gateway, project: str, dynamodb: Any) -> None:
    # Another tool wrote ticket 1 and left the counter as it was.
    item = {"PK": {"S": f"PROJ#{project}"}, "SK": {"S": "TICKET#0000001"}, "title": {"S": "theirs"}}
    dynamodb.put_item(TableName=desk.table, Item=item)

    result, _ = mutate(desk, "createTicket", {"projectId": project, "title": "ours"}, TICKET)

    assert result["__typename"] == "ConflictError" and result["reason"] == "ALREADY_EXISTS"
    assert "lastNumber is behind" in result["message"]
    stored_ticket = stored(dynamodb, desk, f"PROJ#{project}", "TICKET#0000001")
    assert stored_ticket is not None and stored_ticket["title"] == {"S": "theirs"}
    parent = stored(dynamodb, desk, f"PROJ#{project}", "META")
    assert parent is not None and "lastNumber" not in parent


def test_events_with_ulids_are_listed_in_the_order_they_were_created(desk: Gateway, project: str) -> None:
    created = [
        mutate(desk, "createEvent", {"projectId": project, "what": f"e{i}"}, "... on Event { eventId }")[0]["eventId"]
        for i in range(6)
    ]

    body = desk.query(
        "query($p: ID!) { project(projectId: $p) { events(first: 10) { nodes { eventId what } } } }", {"p": project}
    )

    nodes = body["data"]["project"]["events"]["nodes"]
    assert [node["what"] for node in nodes] == [f"e{i}" for i in range(6)]
    assert [node["eventId"] for node in nodes] == created
    assert all(re.fullmatch("[0-9A-HJKMNP-TV-Z]{26}", one) for one in created)


SETS = "... on Ticket { labels points version }"


def update_ticket(desk: Gateway, project: str, number: str, version: int, **changes: Any) -> Any:
    data = {"projectId": project, "ticketNumber": number, "expectedVersion": version, **changes}
    return mutate(desk, "updateTicket", data, SETS)


def test_sets_are_added_to_and_removed_from_down_to_null(desk: Gateway, project: str, dynamodb: Any) -> None:
    mutate(desk, "createTicket", {"projectId": project, "title": "sets"})

    created, operations = update_ticket(desk, project, "1", 1, addToLabels=["b", "a"], addToPoints=[3, 1.5])
    added, _ = update_ticket(desk, project, "1", 2, addToLabels=["c", "a"])
    removed, _ = update_ticket(desk, project, "1", 3, removeFromLabels=["a", "x"], removeFromPoints=[3])
    emptied, _ = update_ticket(desk, project, "1", 4, removeFromLabels=["b", "c"], removeFromPoints=[1.5])

    # An absent set is created by adding to it, in the one UpdateItem of an update.
    assert created == {"__typename": "Ticket", "labels": ["a", "b"], "points": [1.5, 3], "version": 2}
    assert operations == {"UpdateItem": 1}
    assert (added["labels"], removed["labels"], removed["points"]) == (["a", "b", "c"], ["b", "c"], [1.5])
    # DynamoDB removes a set with its last member: it is served as null, like a set never written.
    assert emptied == {"__typename": "Ticket", "labels": None, "points": None, "version": 5}
    item = stored(dynamodb, desk, f"PROJ#{project}", "TICKET#0000001")
    assert item is not None and "labels" not in item and "points" not in item


def test_a_set_replaced_and_added_to_in_one_update_is_refused(desk: Gateway, project: str, dynamodb: Any) -> None:
    mutate(desk, "createTicket", {"projectId": project, "title": "sets"})

    both, operations = update_ticket(desk, project, "1", 1, labels=["a"], addToLabels=["b"])
    either, _ = update_ticket(desk, project, "1", 1, addToLabels=["b"], removeFromLabels=["a"])

    assert both["__typename"] == "ValidationFailedError" and both["field"] == "addToLabels"
    assert "which this input replaces too" in both["message"] and operations == {}
    assert either["__typename"] == "ValidationFailedError" and either["field"] == "removeFromLabels"
    item = stored(dynamodb, desk, f"PROJ#{project}", "TICKET#0000001")
    assert item is not None and item["version"] == {"N": "1"} and "labels" not in item


def test_a_replaced_set_is_still_replaced(desk: Gateway, project: str) -> None:
    mutate(desk, "createTicket", {"projectId": project, "title": "sets", "labels": ["x", "y"]})

    replaced, _ = update_ticket(desk, project, "1", 1, labels=["z"], addToPoints=[2])
    cleared, _ = update_ticket(desk, project, "1", 2, labels=[])

    assert (replaced["labels"], replaced["points"]) == (["z"], [2])
    assert cleared["labels"] is None


def test_adding_past_a_sets_bound_is_refused_with_nothing_written(desk: Gateway, project: str, dynamodb: Any) -> None:
    mutate(desk, "createTicket", {"projectId": project, "title": "bounded", "points": [1, 2]})

    refused, operations = update_ticket(desk, project, "1", 1, addToPoints=[3, 4])
    # Members added count as new, those the set holds already too: the condition cannot tell them apart.
    counted, _ = update_ticket(desk, project, "1", 1, addToPoints=[2, 3])
    held, _ = update_ticket(desk, project, "1", 1, addToPoints=[3])

    # The bound is the set's condition: the refusal is one UpdateItem, explained from the item as it was.
    assert refused["__typename"] == "ValidationFailedError" and refused["field"] == "addToPoints"
    assert (
        "would leave points with up to 4 members (those it holds counted too); it holds at most 3"
        in (refused["message"])
    )
    assert operations == {"UpdateItem": 1}
    assert counted["__typename"] == "ValidationFailedError" and "up to 4 members" in counted["message"]
    assert held == {"__typename": "Ticket", "labels": None, "points": [1, 2, 3], "version": 2}
