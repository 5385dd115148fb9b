"""Write building without an engine: ids, conditions, counters and transaction sizes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gateway.dynamo.requests import TRANSACTION_LIMIT, Reason, Refused
from gateway.writes import building
from schema.demo import demo_items
from schema.model import COURSE, ENROLLMENT, MODEL, PROJECT, STUDENT, TICKET, WORKSPACE, WRITES
from tests.support.contract import project_id
from tests.support.library_copies import COPIES_DESK


def test_minted_ids_sort_by_creation_time_and_carry_no_separator() -> None:
    start = datetime(2026, 3, 15, 14, 25, 1, tzinfo=UTC)
    moments = [start + timedelta(microseconds=n) for n in (0, 1, 999_999, 1_000_000, 86_400_000_000)]
    ids = [building.mint_id(moment) for moment in moments]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all("#" not in one and len(one) <= 128 for one in ids)
    # Newest first stays right next to the year-sequence ids another tool writes.
    assert sorted([*ids, project_id(42)], reverse=True)[-1] == project_id(42)


def test_ids_minted_in_the_same_microsecond_differ() -> None:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    assert len({building.mint_id(moment) for _ in range(1000)}) == 1000


def test_a_new_item_starts_at_version_1_with_its_counters_at_0_and_must_not_exist() -> None:
    attributes = {"displayName": "W", "region": None}
    op = building.create(MODEL, WORKSPACE, {"workspaceId": "w1"}, attributes, ["projectCount"], write_id="w-1")
    assert op.action == "Put"
    assert op.item == {
        "PK": "WS#w1",
        "SK": "META",
        "displayName": "W",
        "version": 1,
        "projectCount": 0,
        "writeId": "w-1",
    }
    assert op.condition == "attribute_not_exists(#n0)" and op.names == {"#n0": "PK"}
    assert (op.write_id, op.version) == ("w-1", 1)


def test_an_update_is_a_compare_and_set_on_the_version_that_stores_its_write_id() -> None:
    ids = {"workspaceId": "w", "projectId": "p"}
    op = building.update(MODEL, PROJECT, ids, {"title": "T", "status": None}, 3, write_id="w-2")
    assert op.update == "SET #n0 = :v0, #n1 = :v1, #n2 = :v2 REMOVE #n3"
    assert op.names == {"#n0": "title", "#n1": "version", "#n2": "writeId", "#n3": "status", "#n4": "PK"}
    assert op.values == {":v0": "T", ":v1": 4, ":v2": "w-2", ":v3": 3}
    assert op.condition == "attribute_exists(#n4) AND #n1 = :v3"
    assert (op.write_id, op.version) == ("w-2", 4)


def test_write_ids_are_fresh() -> None:
    ids = {building.new_write_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(one) == 16 and "#" not in one for one in ids)


def test_an_item_without_a_version_counts_as_version_0() -> None:
    op = building.update(MODEL, STUDENT, {"studentId": "s"}, {"name": "N"}, 0, write_id="w")
    assert op.condition is not None and op.condition.endswith("attribute_not_exists(#n1)")
    assert op.values[":v1"] == 1
    assert building.version_of({"PK": "STU#s", "SK": "PROFILE"}) == 0


def test_a_parent_is_deleted_only_with_its_counters_at_0() -> None:
    op = building.delete(MODEL, COURSE, {"courseId": "c"}, expected_version=2, empty_counters=["enrolledCount"])
    assert op.condition == "attribute_exists(#n0) AND #n1 = :v0 AND #n2 = :v1"
    assert op.names == {"#n0": "PK", "#n1": "version", "#n2": "enrolledCount"}
    assert op.values == {":v0": 2, ":v1": 0}


def test_a_ticket_is_deleted_only_while_it_belongs_to_the_user_it_was_read_with() -> None:
    ids = {"ticketId": "t1", "orgName": "o", "username": "u"}
    op = building.delete(MODEL, TICKET, ids)
    assert op.key == {"PK": "TICKET#t1", "SK": "TICKET#t1"}
    # Or while it is in no user's list: an item may be absent from an index, and is still the ticket.
    assert op.condition == (
        "attribute_exists(#n0) AND (attribute_not_exists(#n1) OR attribute_not_exists(#n2) OR #n1 = :v0 AND #n2 = :v1)"
    )
    assert op.values == {":v0": "ORG#o#USER#u", ":v1": "TICKET#t1"}


def test_an_enrolment_counts_on_both_sides_and_each_side_must_be_counted() -> None:
    ops = building.counter_ops(WRITES, [(ENROLLMENT, {"studentId": "s", "courseId": "c"})], +1)
    assert [(op.key, op.update, op.values, op.condition) for op in ops] == [
        ({"PK": "STU#s", "SK": "PROFILE"}, "ADD #n0 :v0", {":v0": 1}, "attribute_exists(#n0)"),
        ({"PK": "CRS#c", "SK": "METADATA"}, "ADD #n0 :v0", {":v0": 1}, "attribute_exists(#n0)"),
    ]
    assert [op.names["#n0"] for op in ops] == ["courseCount", "enrolledCount"]


def test_members_deleted_together_move_each_parent_counter_once() -> None:
    members = [(ENROLLMENT, {"studentId": "s", "courseId": f"c{n}"}) for n in range(3)]
    ops = building.member_deletes(WRITES, members)
    student = [op for op in ops if op.key["PK"] == "STU#s" and op.action == "Update"]
    assert len(ops) == 3 + 1 + 3
    assert len(student) == 1 and student[0].values == {":v0": -3}


def test_a_parent_that_does_not_exist_is_left_out_of_the_counters() -> None:
    members = [(ENROLLMENT, {"studentId": "s", "courseId": "gone"})]
    ops = building.member_deletes(WRITES, members, skip={("CRS#gone", "METADATA")})
    assert [op.key["PK"] for op in ops] == ["STU#s", "STU#s"]


def test_cascade_batches_fit_in_one_transaction_each() -> None:
    members = [(ENROLLMENT, {"studentId": "s", "courseId": f"c{n:03d}"}) for n in range(250)]
    batches = list(building.member_batches(WRITES, members))
    assert [len(batch) for batch in batches] == [49, 49, 49, 49, 49, 5]
    assert all(len(building.member_deletes(WRITES, batch)) <= TRANSACTION_LIMIT for batch in batches)
    projects = [(PROJECT, {"workspaceId": "w", "projectId": str(n)}) for n in range(150)]
    assert [len(batch) for batch in building.member_batches(WRITES, projects)] == [99, 51]


def test_a_token_is_bound_to_the_caller_the_mutation_and_its_arguments_in_any_order() -> None:
    a = building.fingerprint("enroll", {"input": {"studentId": "s", "courseId": "c"}}, "ann")
    b = building.fingerprint("enroll", {"input": {"courseId": "c", "studentId": "s"}}, "ann")
    assert a == b
    assert a != building.fingerprint("drop", {"input": {"studentId": "s", "courseId": "c"}}, "ann")
    assert a != building.fingerprint("enroll", {"input": {"studentId": "s", "courseId": "c", "grade": "A"}}, "ann")
    assert a != building.fingerprint("enroll", {"input": {"studentId": "s", "courseId": "c"}}, "bob")


def test_a_token_record_may_replace_only_an_expired_one() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    op = building.token_record(WRITES, "ann", "tok", "f" * 64, {"ids": {"studentId": "s"}}, now)
    assert op.item is not None
    key = building.token_key("ann", "tok")
    assert op.item["PK"] == f"TOKEN#{key}" and op.item["SK"] == "TOKEN"
    assert op.item["expiresAt"] == int(now.timestamp()) + building.TOKEN_LIFETIME_SECONDS
    assert op.condition == "attribute_not_exists(#n0) OR #n1 < :v0"
    assert op.values == {":v0": int(now.timestamp())}
    assert MODEL.recognise(op.item) == (WRITES.token, {"tokenKey": key})


def test_the_same_token_of_two_callers_has_two_records() -> None:
    keys = {building.token_key(caller, token) for caller in ("ann", "bob", "ann#tok") for token in ("tok", "x", "")}
    assert len(keys) == 9
    assert building.token_key("ann", "tok") == building.token_key("ann", "tok")
    # Neither a caller nor a token can be chosen to land on another pair's record by a separator.
    assert building.token_key("a", "b#c") != building.token_key("a#b", "c")
    assert all("#" not in key and len(key) == 64 for key in keys)


# --- a lost answer ------------------------------------------------------------------------------------------------


WORKSPACE_IDS = {"workspaceId": "w"}


def _refused(item: dict[str, object] | None, uncertain: bool) -> Refused:
    return Refused([Reason("ConditionalCheckFailed", item)], uncertain)


def _workspace(version: int, write_id: str | None) -> dict[str, object]:
    item: dict[str, object] = {"PK": "WS#w", "SK": "META", "version": version}
    return item if write_id is None else {**item, "writeId": write_id}


def test_a_refused_retry_of_a_write_whose_answer_was_lost_recognises_the_write_by_its_id() -> None:
    create = building.create(MODEL, WORKSPACE, WORKSPACE_IDS, {"displayName": "W"}, [], write_id="mine")
    update = building.update(MODEL, WORKSPACE, WORKSPACE_IDS, {"displayName": "X"}, 4, write_id="mine")
    assert building.outcome_of(create, _refused(_workspace(1, "mine"), True)) == "applied"
    assert building.outcome_of(update, _refused(_workspace(5, "mine"), True)) == "applied"
    # Another create or update of the item is a real refusal, so is anything refused at the first attempt.
    assert building.outcome_of(create, _refused(_workspace(1, "theirs"), True)) == "refused"
    assert building.outcome_of(create, _refused(_workspace(0, None), True)) == "refused"
    assert building.outcome_of(update, _refused(_workspace(5, "theirs"), True)) == "refused"
    assert building.outcome_of(update, _refused(_workspace(3, "theirs"), True)) == "refused"
    assert building.outcome_of(update, _refused(_workspace(7, "theirs"), False)) == "refused"
    assert building.outcome_of(update, _refused(None, False)) == "refused"


def test_a_lost_answer_followed_by_another_write_of_the_item_is_an_unknown_outcome() -> None:
    create = building.create(MODEL, WORKSPACE, WORKSPACE_IDS, {"displayName": "W"}, [], write_id="mine")
    update = building.update(MODEL, WORKSPACE, WORKSPACE_IDS, {"displayName": "X"}, 4, write_id="mine")
    # The write may have been applied and overwritten since, or deleted: it cannot tell.
    assert building.outcome_of(create, _refused(_workspace(2, "theirs"), True)) == "unknown"
    assert building.outcome_of(update, _refused(_workspace(6, "theirs"), True)) == "unknown"
    assert building.outcome_of(update, _refused(None, True)) == "unknown"


def test_a_delete_that_finds_the_item_gone_after_a_lost_answer_did_its_job() -> None:
    delete = building.delete(MODEL, WORKSPACE, WORKSPACE_IDS, expected_version=2)
    assert building.outcome_of(delete, _refused(None, True)) == "applied"
    assert building.outcome_of(delete, _refused(None, False)) == "refused"
    assert building.outcome_of(delete, _refused(_workspace(3, "theirs"), True)) == "refused"


def test_recount_sets_a_counter_only_if_it_still_holds_what_was_counted() -> None:
    op = building.recount(MODEL, COURSE, {"courseId": "c"}, {"enrolledCount": 7}, {"enrolledCount": None})
    assert op.update == "SET #n0 = :v0"
    assert op.condition == "attribute_exists(#n1) AND attribute_not_exists(#n0)"


def test_data_loaded_in_bulk_gets_the_counters_its_members_imply() -> None:
    items = building.with_counters(WRITES, demo_items())
    by_key = {(item["PK"], item["SK"]): item for item in items}
    assert by_key["WS#ws-1", "META"]["projectCount"] == 24
    assert by_key["WS#ws-3", "META"]["projectCount"] == 0
    assert by_key["ORG#umbrella", "METADATA#umbrella"]["userCount"] == 2
    for item in items:
        if item["SK"] == "PROFILE":
            edges = [i for i in items if i["PK"] == item["PK"] and i["SK"].startswith("ENROLL#")]
            assert item["courseCount"] == len(edges)
        if item["PK"].startswith("ORG#") and item["SK"].startswith("USER#"):
            tickets = [i for i in items if i.get("GSI1PK") == f"{item['PK']}#{item['SK']}" and i["SK"] != item["SK"]]
            assert item["ticketCount"] == len(tickets)
    enrolled = sum(item.get("enrolledCount", 0) for item in items)
    assert enrolled == sum(1 for item in items if item["SK"].startswith("ENROLL#"))


def test_a_member_with_variant_shapes_is_counted_where_its_shape_is_listed() -> None:
    """A copy counts on the original it names, a draft on the document it drafts; neither on the other's counter."""
    copy = COPIES_DESK.entity("Copy")
    assert copy is not None
    for ids, counter in [
        ({"copyId": "c1", "originalId": "d"}, "copyCount"),
        ({"copyId": "c2", "draftOf": "d"}, "draftCount"),
    ]:
        ops = building.counter_ops(COPIES_DESK.writes, [(copy, ids)], +1)
        assert [(op.key, op.names["#n0"]) for op in ops] == [({"PK": "DOC#d", "SK": "DOC"}, counter)]
    assert building.counter_ops(COPIES_DESK.writes, [(copy, {"copyId": "c3"})], +1) == []
