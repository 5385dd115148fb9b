"""An id some key writes zero-padded is one number wherever it is given, across the relations that pass it on."""

from __future__ import annotations

from gateway import Collection, Entity, Index, KeyShape, Link, Model

TABLE = Index(None, "PK", "SK")
ISSUE = Entity("Issue", {None: KeyShape.of("R#{repo}", "ISSUE#{number:07}")})
COMMENT = Entity("Comment", {None: KeyShape.of("C#{repo}#{number}", "C#{commentId}")})
LABEL = Entity("Label", {None: KeyShape.of("L#{repo}", "L#{number}")})
"""No relation passes Issue's number to a label: its ``number`` is text of its own."""
BY_ROLE = Entity("Mention", {None: KeyShape.of("M#{repo}#{issueNo}", "M#{mentionId}")})
MODEL = Model(
    "t",
    (TABLE,),
    (ISSUE, COMMENT, LABEL, BY_ROLE),
    collections=(Collection("Issue.comments", ISSUE, COMMENT),),
    links=(Link("Mention.issue", BY_ROLE, ISSUE, ids={"number": "issueNo"}),),
)


def test_a_padded_number_is_read_plain_for_its_own_entity() -> None:
    assert MODEL.canonical(ISSUE, {"repo": "r1", "number": "0000007"}) == {"repo": "r1", "number": "7"}


def test_a_collection_passes_the_number_to_a_key_that_writes_it_plain() -> None:
    assert MODEL.canonical(COMMENT, {"repo": "r1", "number": "007", "commentId": "0042"}) == {
        "repo": "r1",
        "number": "7",
        "commentId": "0042",
    }


def test_a_link_by_role_passes_the_number_under_its_own_name() -> None:
    assert MODEL.canonical(BY_ROLE, {"repo": "r1", "issueNo": "0007", "mentionId": "9"})["issueNo"] == "7"


def test_an_id_no_relation_ties_to_a_padded_number_stays_text() -> None:
    assert MODEL.canonical(LABEL, {"repo": "r1", "number": "007"})["number"] == "007"


def test_text_that_is_no_number_is_left_for_the_key_to_refuse() -> None:
    assert MODEL.canonical(ISSUE, {"repo": "r1", "number": "seven"})["number"] == "seven"
    assert MODEL.canonical(ISSUE, {"repo": "r1", "number": "١٢"})["number"] == "١٢"
