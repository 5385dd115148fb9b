"""Minted ids as write building makes them: ULIDs, and the counter update a numbered create joins to its writes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from gateway.writes import building
from tests.support.helpdesk import HELPDESK

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
MOMENT = datetime(2026, 3, 15, 14, 25, 1, 123000, tzinfo=UTC)


def millis_of(ulid: str) -> int:
    """The timestamp a ULID's first ten characters hold, decoded independently of the minting code."""
    value = 0
    for char in ulid[:10]:
        value = value * 32 + CROCKFORD.index(char)
    return value


def test_a_ulid_is_26_crockford_characters_holding_its_millisecond() -> None:
    ulid = building.Ulids()(MOMENT)

    assert re.fullmatch("[0-9A-HJKMNP-TV-Z]{26}", ulid)
    assert millis_of(ulid) == int(MOMENT.timestamp() * 1000)


def test_ulids_of_one_millisecond_sort_in_the_order_they_were_minted() -> None:
    mint = building.Ulids()

    ulids = [mint(MOMENT) for _ in range(1000)]

    assert sorted(ulids) == ulids and len(set(ulids)) == 1000


def test_a_later_ulid_sorts_after_an_earlier_one_and_a_clock_stepping_back_does_not_reorder() -> None:
    mint = building.Ulids()

    earlier, later = mint(MOMENT), mint(MOMENT + timedelta(milliseconds=1))
    after_a_step_back = mint(MOMENT)

    assert earlier < later < after_a_step_back


def test_a_numbered_create_takes_its_number_in_the_parents_counter_update() -> None:
    model, ticket = HELPDESK.model, HELPDESK.entity("Ticket")
    ids = {"projectId": "p1", "ticketNumber": "5"}
    put = building.create(model, ticket, ids, {"title": "x"}, [], write_id="w")
    counted = building.counter_ops(HELPDESK.writes, [(ticket, ids)], +1)

    ops = building.numbered(model, ticket, ids, [put, *counted], seen=4)

    # A transaction touches an item once: the project's member counter and its sequence are one update.
    assert [(op.action, op.key["SK"], op.target.role) for op in ops] == [
        ("Put", "TICKET#0000005", "item"),
        ("Update", "META", "sequence"),
    ]
    update = ops[1]
    assert update.update is not None and update.condition is not None
    assert update.update.endswith(", #q0 :q1") and update.names["#q0"] == "lastNumber"
    assert update.condition.endswith("attribute_exists(#q1) AND #q0 = :q0") and update.values[":q0"] == 4


def test_the_first_number_requires_that_none_was_taken_or_the_counter_holds_0() -> None:
    model, request = HELPDESK.model, HELPDESK.entity("Request")
    ids = {"projectId": "p1", "requestNumber": "1"}
    put = building.create(model, request, ids, {"title": "x"}, [], write_id="w")

    ops = building.numbered(model, request, ids, [put], seen=0)

    # A counter at 0 is absent, or stored by the parent's create as its declared default.
    assert ops[1].update == "ADD #q0 :q1"
    assert ops[1].condition == "attribute_exists(#q1) AND (attribute_not_exists(#q0) OR #q0 = :q0)"
    assert ops[1].values[":q0"] == 0
