"""Minted ids in the declaration: what a design may say about numbers from a counter and ULIDs, refused when built."""

from __future__ import annotations

import re
from typing import Any

import pytest

from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Model, Numbering

TABLE = Index(None, "PK", "SK")


def project(**attributes: Any) -> Entity:
    return Entity("Project", {None: KeyShape.of("PROJ#{projectId}", "META")}, attributes)


def ticket(sk: str = "TICKET#{ticketNumber:07}", **options: Any) -> Entity:
    options = {"mint": "ticketNumber", "minted": Numbering("Project", "lastNumber"), **options}
    return Entity("Ticket", {None: KeyShape.of("PROJ#{projectId}", sk)}, {"title": "S"}, **options)


KEPT = Attribute("INT", writable=False)


def test_a_numbered_ticket_of_a_project_with_its_counter_is_a_model() -> None:
    model = Model("t", (TABLE,), (project(lastNumber=KEPT), ticket()))

    assert model.entity("Ticket") is not None


@pytest.mark.parametrize(
    ("parent", "fix"),
    [
        (project(), r"declare 'lastNumber': Attribute\('INT', writable=False\) among Project's attributes"),
        (project(lastNumber="INT"), r"declare 'lastNumber': Attribute\('INT', writable=False\)"),
        (project(lastNumber=Attribute("S", writable=False)), "the counter must be a number the gateway keeps"),
    ],
)
def test_a_counter_that_is_not_the_parents_own_kept_number_is_refused(parent: Entity, fix: str) -> None:
    with pytest.raises(ValueError, match=r"Ticket\.ticketNumber: numbered from Project\.lastNumber: .*" + fix):
        Model("t", (TABLE,), (parent, ticket()))


def test_a_counter_of_an_unknown_parent_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Ticket\.ticketNumber: numbered from Board\.lastNumber: Board is no entity"):
        Model("t", (TABLE,), (project(lastNumber=KEPT), ticket(minted=Numbering("Board", "lastNumber"))))


def test_a_numbered_id_without_its_parents_ids_is_refused() -> None:
    orphan = Entity(
        "Ticket",
        {None: KeyShape.of("TICKET#{ticketNumber:07}", "TICKET")},
        mint="ticketNumber",
        minted=Numbering("Project", "lastNumber"),
    )

    with pytest.raises(ValueError, match="its other ids lack Project's projectId=projectId, so no parent item is"):
        Model("t", (TABLE,), (project(lastNumber=KEPT), orphan))


def test_a_parent_id_held_by_another_name_is_mapped_by_role() -> None:
    board = Entity(
        "Ticket",
        {None: KeyShape.of("BOARD#{board}", "TICKET#{ticketNumber:07}")},
        mint="ticketNumber",
        minted=Numbering("Project", "lastNumber", ids={"projectId": "board"}),
    )
    model = Model("t", (TABLE,), (project(lastNumber=KEPT), board))

    assert board.minted == Numbering("Project", "lastNumber", {"projectId": "board"})
    assert isinstance(board.minted, Numbering)
    parent = model.entity("Project")
    assert parent is not None and board.minted.parent_ids(parent, {"board": "b1", "ticketNumber": "3"}) == {
        "projectId": "b1"
    }
    with pytest.raises(ValueError, match=r"ids maps \['id'\], which are not ids of Project's table key"):
        Model("t", (TABLE,), (project(lastNumber=KEPT), ticket(minted=Numbering("Project", "lastNumber", {"id": "x"}))))
    with pytest.raises(ValueError, match="lack Project's projectId=desk, so no parent item is known"):
        Model(
            "t",
            (TABLE,),
            (project(lastNumber=KEPT), ticket(minted=Numbering("Project", "lastNumber", {"projectId": "desk"}))),
        )


def test_a_member_count_is_no_sequence() -> None:
    parent = project(lastNumber=KEPT)
    member = ticket()

    with pytest.raises(ValueError, match=r"that attribute counts Project\.tickets's members; a sequence needs its own"):
        Model("t", (TABLE,), (parent, member), (Collection("Project.tickets", parent, member, counter="lastNumber"),))


def test_a_minted_field_that_is_no_id_of_the_table_key_is_refused() -> None:
    with pytest.raises(ValueError, match="Ticket: the minted id 'title' is not an id of its table key"):
        ticket(mint="title")


def test_how_an_id_is_minted_needs_the_id() -> None:
    with pytest.raises(ValueError, match="Ticket: minted= says how an id is minted; name that id with mint="):
        ticket(mint=None)
    with pytest.raises(ValueError, match="an id is minted as 'time', 'ulid' or a Numbering"):
        ticket(minted="uuid")


@pytest.mark.parametrize("kind", ["ulid", "time"])
def test_text_minted_into_a_padded_number_is_refused(kind: str) -> None:
    with pytest.raises(ValueError, match=f"Ticket.ticketNumber: a {kind} id is text, and 'TICKET#{{ticketNumber:07}}'"):
        ticket(minted=kind)


def test_a_minted_id_declared_as_an_attribute_too_is_refused() -> None:
    with pytest.raises(
        ValueError, match=re.escape("Ticket: ticketNumber is an attribute, in the key 'TICKET#{ticketNumber:07}'")
    ):
        Entity(
            "Ticket",
            {None: KeyShape.of("PROJ#{projectId}", "TICKET#{ticketNumber:07}")},
            {"ticketNumber": "INT"},
            mint="ticketNumber",
            minted=Numbering("Project", "lastNumber"),
        )
