"""Each mutation through a real gateway: its answer, its cost, and the items it leaves, read back with boto3."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import boto3
import pytest

from tests.support.contract import student_id
from tests.support.gateway import Gateway
from tests.support.identity import Issuer
from tests.support.mutations import mutate


class _WriteId:
    """Equal to any write id: every create and update stores a fresh one on the item (``writes.WRITE_ID``)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and re.fullmatch("[0-9a-f]{16}", other) is not None

    def __repr__(self) -> str:
        return "<a write id>"

    __hash__ = None  # type: ignore[assignment]


WRITE_ID = _WriteId()


@pytest.fixture(scope="module")
def writable(served: Callable[..., Gateway]) -> Gateway:
    return served()


@pytest.fixture(scope="module")
def stored(endpoint: str, writable: Gateway) -> Callable[[str, str], dict[str, Any] | None]:
    """An item as DynamoDB holds it, read with plain boto3 (strongly consistent)."""
    resource = boto3.resource(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    items = resource.Table(writable.table)

    def get(pk: str, sk: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = items.get_item(Key={"PK": pk, "SK": sk}, ConsistentRead=True).get("Item")
        return found

    return get


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def new_workspace(gateway: Gateway, **extra: Any) -> str:
    ws = unique("ws")
    result, _ = mutate(
        gateway, "createWorkspace", {"workspaceId": ws, "displayName": "W", **extra}, "... on Workspace { workspaceId }"
    )
    assert result["__typename"] == "Workspace"
    return ws


def new_project(gateway: Gateway, ws: str, title: str = "P") -> str:
    result, _ = mutate(gateway, "createProject", {"workspaceId": ws, "title": title}, "... on Project { projectId }")
    assert result["__typename"] == "Project", result
    return str(result["projectId"])


# --- workspaces and projects --------------------------------------------------------------------------------------


def test_create_workspace_stores_the_key_design_item_with_version_and_counter(writable: Gateway, stored: Any) -> None:
    ws = unique("ws")
    result, operations = mutate(
        writable,
        "createWorkspace",
        {"workspaceId": ws, "displayName": "Acme", "region": "eu-west-1", "seatLimit": 5},
        "... on Workspace { workspaceId displayName region seatLimit projectCount version }",
    )
    assert result == {
        "__typename": "Workspace",
        "workspaceId": ws,
        "displayName": "Acme",
        "region": "eu-west-1",
        "seatLimit": 5,
        "projectCount": 0,
        "version": 1,
    }
    assert operations == {"PutItem": 1}
    assert stored(f"WS#{ws}", "META") == {
        "PK": f"WS#{ws}",
        "SK": "META",
        "displayName": "Acme",
        "region": "eu-west-1",
        "seatLimit": Decimal(5),
        "projectCount": Decimal(0),
        "version": Decimal(1),
        "writeId": WRITE_ID,
    }


def test_creating_what_exists_is_a_conflict_that_changes_nothing(writable: Gateway, stored: Any) -> None:
    ws = new_workspace(writable)
    result, _ = mutate(writable, "createWorkspace", {"workspaceId": ws, "displayName": "Other"}, "")
    assert result["__typename"] == "ConflictError"
    assert (result["reason"], result["currentVersion"]) == ("ALREADY_EXISTS", 1)
    assert stored(f"WS#{ws}", "META")["displayName"] == "W"


def test_create_project_mints_a_time_ordered_id_and_counts_it_in_the_same_transaction(
    writable: Gateway, stored: Any
) -> None:
    ws = new_workspace(writable)
    result, operations = mutate(
        writable,
        "createProject",
        {"workspaceId": ws, "title": "First", "status": "active", "createdBy": "ann"},
        "... on Project { projectId workspaceId title status createdBy version }",
    )
    assert operations == {"TransactWriteItems": 1}
    first = result["projectId"]
    assert "#" not in first and result["version"] == 1
    assert stored(f"WS#{ws}", f"PROJ#{first}") == {
        "PK": f"WS#{ws}",
        "SK": f"PROJ#{first}",
        "title": "First",
        "status": "active",
        "createdBy": "ann",
        "version": Decimal(1),
        "writeId": WRITE_ID,
    }
    second = new_project(writable, ws, "Second")
    assert second > first
    assert stored(f"WS#{ws}", "META")["projectCount"] == 2

    body = writable.query(
        f'{{ workspace(workspaceId: "{ws}") {{ projectCount'
        " projects(first: 1) { totalCount nodes { projectId } } } }"
    )
    workspace = body["data"]["workspace"]
    assert workspace == {"projectCount": 2, "projects": {"totalCount": 2, "nodes": [{"projectId": second}]}}
    # The count comes from the workspace item that was read anyway: no Query counts anything.
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1, "Query": 1}


def test_a_project_needs_its_workspace(writable: Gateway, stored: Any) -> None:
    result, _ = mutate(writable, "createProject", {"workspaceId": "ws-nowhere", "title": "P"}, "")
    assert result == {
        "__typename": "NotFoundError",
        "message": "Workspace 'ws-nowhere' does not exist",
        "entity": "Workspace",
    }
    assert stored("WS#ws-nowhere", "META") is None


def test_update_is_compare_and_set_and_a_stale_version_tells_the_current_one(writable: Gateway, stored: Any) -> None:
    ws = new_workspace(writable, region="us-east-1")
    created_by = stored(f"WS#{ws}", "META")["writeId"]
    selection = "... on Workspace { displayName region version }"
    result, operations = mutate(
        writable,
        "updateWorkspace",
        {"workspaceId": ws, "expectedVersion": 1, "displayName": "New", "region": None},
        selection,
    )
    assert result == {"__typename": "Workspace", "displayName": "New", "region": None, "version": 2}
    assert operations == {"UpdateItem": 1}
    assert stored(f"WS#{ws}", "META") == {
        "PK": f"WS#{ws}",
        "SK": "META",
        "displayName": "New",
        "projectCount": Decimal(0),
        "version": Decimal(2),
        "writeId": WRITE_ID,
    }
    # Each write leaves its own id: the one the item carries tells which write made its current version.
    assert stored(f"WS#{ws}", "META")["writeId"] != created_by
    stale, _ = mutate(writable, "updateWorkspace", {"workspaceId": ws, "expectedVersion": 1, "displayName": "Lost"}, "")
    assert (stale["__typename"], stale["reason"], stale["currentVersion"]) == ("ConflictError", "VERSION_MISMATCH", 2)
    assert stored(f"WS#{ws}", "META")["displayName"] == "New"


def test_updating_what_does_not_exist_is_not_found(writable: Gateway) -> None:
    result, _ = mutate(
        writable, "updateProject", {"workspaceId": "w", "projectId": "p", "expectedVersion": 1, "title": "T"}, ""
    )
    assert (result["__typename"], result["entity"]) == ("NotFoundError", "Project")


def test_bad_input_is_a_validation_error_and_sends_nothing(writable: Gateway) -> None:
    cases = [
        ("createWorkspace", {"workspaceId": "a#b", "displayName": "W"}, "workspaceId"),
        ("createWorkspace", {"workspaceId": "ok", "displayName": "  "}, "displayName"),
        ("updateWorkspace", {"workspaceId": "ok", "expectedVersion": 1, "displayName": None}, "displayName"),
        ("updateWorkspace", {"workspaceId": "ok", "expectedVersion": -1}, "expectedVersion"),
        ("createStudent", {"studentId": "s", "name": "N", "year": 40}, "year"),
    ]
    for field, data, argument in cases:
        result, operations = mutate(writable, field, data, "")
        assert (result["__typename"], result["field"]) == ("ValidationFailedError", argument)
        assert operations == {}
    result, operations = mutate(
        writable, "createWorkspace", {"workspaceId": "ok", "displayName": "W"}, "", token="bad#token"
    )
    assert (result["__typename"], result["field"], operations) == ("ValidationFailedError", "clientToken", {})


def test_deleting_a_workspace_with_projects_needs_cascade_which_reports_what_it_deleted(
    writable: Gateway, stored: Any, dynamodb: Any
) -> None:
    ws = new_workspace(writable)
    projects = [new_project(writable, ws) for _ in range(3)]
    refused, operations = mutate(writable, "deleteWorkspace", {"workspaceId": ws}, "")
    assert (refused["__typename"], refused["reason"]) == ("ConflictError", "HAS_CHILDREN")
    assert "cascade" in refused["message"]
    assert operations == {"DeleteItem": 1}
    assert stored(f"WS#{ws}", f"PROJ#{projects[0]}") is not None

    deleted, operations = mutate(
        writable, "deleteWorkspace", {"workspaceId": ws, "cascade": True}, "... on Deleted { items { type count } }"
    )
    assert deleted["items"] == [{"type": "Project", "count": 3}, {"type": "Workspace", "count": 1}]
    assert operations == {"DeleteItem": 2, "Query": 1, "TransactWriteItems": 1}
    left = dynamodb.query(
        TableName=writable.table,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": f"WS#{ws}"}},
    )
    assert left["Items"] == []


def test_delete_project_counts_it_out(writable: Gateway, stored: Any) -> None:
    ws = new_workspace(writable)
    project = new_project(writable, ws)
    stale, _ = mutate(writable, "deleteProject", {"workspaceId": ws, "projectId": project, "expectedVersion": 7}, "")
    assert (stale["reason"], stale["currentVersion"]) == ("VERSION_MISMATCH", 1)
    result, operations = mutate(
        writable, "deleteProject", {"workspaceId": ws, "projectId": project}, "... on Deleted { items { type count } }"
    )
    assert result["items"] == [{"type": "Project", "count": 1}]
    assert operations == {"TransactWriteItems": 1}
    assert stored(f"WS#{ws}", f"PROJ#{project}") is None
    assert stored(f"WS#{ws}", "META")["projectCount"] == 0
    again, _ = mutate(writable, "deleteProject", {"workspaceId": ws, "projectId": project}, "")
    assert again["__typename"] == "NotFoundError"
    emptied, operations = mutate(writable, "deleteWorkspace", {"workspaceId": ws}, "... on Deleted { items { type } }")
    assert emptied["items"] == [{"type": "Workspace"}]
    assert operations == {"DeleteItem": 1}


# --- organizations, users, tickets --------------------------------------------------------------------------------


def test_organization_user_and_ticket_items_follow_the_key_design(writable: Gateway, stored: Any) -> None:
    org = unique("org")
    result, _ = mutate(
        writable,
        "createOrganization",
        {"orgName": org, "name": "Org Display", "subscriptionLevel": "pro"},
        "... on Organization { orgName name }",
    )
    assert (result["orgName"], result["name"]) == (org, "Org Display")
    assert stored(f"ORG#{org}", f"METADATA#{org}") == {
        "PK": f"ORG#{org}",
        "SK": f"METADATA#{org}",
        "name": "Org Display",
        "subscriptionLevel": "pro",
        "userCount": Decimal(0),
        "version": Decimal(1),
        "writeId": WRITE_ID,
    }
    mutate(writable, "createUser", {"orgName": org, "username": "ann", "name": "Ann", "role": "admin"}, "")
    assert stored(f"ORG#{org}", "USER#ann") == {
        "PK": f"ORG#{org}",
        "SK": "USER#ann",
        "GSI1PK": f"ORG#{org}#USER#ann",
        "GSI1SK": "USER#ann",
        "username": "ann",
        "name": "Ann",
        "role": "admin",
        "ticketCount": Decimal(0),
        "version": Decimal(1),
        "writeId": WRITE_ID,
    }
    assert stored(f"ORG#{org}", f"METADATA#{org}")["userCount"] == 1

    ticket, _ = mutate(
        writable,
        "createTicket",
        {"orgName": org, "username": "ann", "title": "Broken"},
        "... on Ticket { ticketId title status version user { username } }",
    )
    tid = ticket["ticketId"]
    assert ticket == {
        "__typename": "Ticket",
        "ticketId": tid,
        "title": "Broken",
        "status": "open",
        "version": 1,
        "user": {"username": "ann"},
    }
    assert stored(f"TICKET#{tid}", f"TICKET#{tid}") == {
        "PK": f"TICKET#{tid}",
        "SK": f"TICKET#{tid}",
        "GSI1PK": f"ORG#{org}#USER#ann",
        "GSI1SK": f"TICKET#{tid}",
        "title": "Broken",
        "status": "open",
        "version": Decimal(1),
        "writeId": WRITE_ID,
    }
    assert stored(f"ORG#{org}", "USER#ann")["ticketCount"] == 1

    later = mutate(
        writable, "createTicket", {"orgName": org, "username": "ann", "title": "Again"}, "... on Ticket { ticketId }"
    )[0]
    body = writable.query(f'{{ user(orgName: "{org}", username: "ann") {{ tickets {{ nodes {{ ticketId }} }} }} }}')
    assert [t["ticketId"] for t in body["data"]["user"]["tickets"]["nodes"]] == [later["ticketId"], tid]


def test_a_ticket_is_changed_and_deleted_by_its_id_alone(writable: Gateway, stored: Any) -> None:
    org = unique("org")
    mutate(writable, "createOrganization", {"orgName": org}, "")
    mutate(writable, "createUser", {"orgName": org, "username": "bob"}, "")
    tid = mutate(
        writable, "createTicket", {"orgName": org, "username": "bob", "title": "T"}, "... on Ticket { ticketId }"
    )[0]["ticketId"]

    result, operations = mutate(
        writable,
        "updateTicket",
        {"ticketId": tid, "expectedVersion": 1, "status": "closed"},
        "... on Ticket { status version }",
    )
    assert (result["status"], result["version"]) == ("closed", 2)
    # The ticket's user is only in its index keys, which the update does not move: no read, one UpdateItem.
    assert operations == {"UpdateItem": 1}

    result, operations = mutate(writable, "deleteTicket", {"ticketId": tid}, "... on Deleted { items { type count } }")
    assert result["items"] == [{"type": "Ticket", "count": 1}]
    assert operations == {"GetItem": 1, "TransactWriteItems": 1}
    assert stored(f"TICKET#{tid}", f"TICKET#{tid}") is None
    assert stored(f"ORG#{org}", "USER#bob")["ticketCount"] == 0


def test_a_user_needs_its_organization(writable: Gateway) -> None:
    result, _ = mutate(writable, "createUser", {"orgName": "org-nowhere", "username": "u"}, "")
    assert (result["__typename"], result["entity"]) == ("NotFoundError", "Organization")
    result, _ = mutate(writable, "createTicket", {"orgName": "org-nowhere", "username": "u", "title": "T"}, "")
    assert (result["__typename"], result["entity"]) == ("NotFoundError", "User")


# --- students, courses, enrolments --------------------------------------------------------------------------------


def new_pair(gateway: Gateway) -> tuple[str, str]:
    student, course = unique("stu"), unique("crs")
    mutate(gateway, "createStudent", {"studentId": student, "name": "S", "year": 2, "major": "physics"}, "")
    mutate(gateway, "createCourse", {"courseId": course, "title": "C", "credits": 5, "term": "fall"}, "")
    return student, course


def test_each_mutation_of_a_document_reads_what_the_ones_before_it_wrote(writable: Gateway) -> None:
    first, course = new_pair(writable)
    second, _ = new_pair(writable)
    selection = "... on Enrollment { course { enrolledCount } }"
    body = writable.query(
        f'mutation {{ a: enroll(input: {{studentId: "{first}", courseId: "{course}"}}) {{ {selection} }}'
        f' b: enroll(input: {{studentId: "{second}", courseId: "{course}"}}) {{ {selection} }} }}'
    )
    assert body["data"] == {"a": {"course": {"enrolledCount": 1}}, "b": {"course": {"enrolledCount": 2}}}


def test_enroll_writes_one_edge_with_its_inverted_keys_and_counts_both_sides(writable: Gateway, stored: Any) -> None:
    student, course = new_pair(writable)
    result, operations = mutate(
        writable,
        "enroll",
        {"studentId": student, "courseId": course, "grade": "A"},
        "... on Enrollment { studentId courseId grade enrolledOn version }",
    )
    assert operations == {"TransactWriteItems": 1}
    edge = stored(f"STU#{student}", f"ENROLL#CRS#{course}")
    assert edge == {
        "PK": f"STU#{student}",
        "SK": f"ENROLL#CRS#{course}",
        "GSI1PK": f"CRS#{course}",
        "GSI1SK": f"STU#{student}",
        "grade": "A",
        "enrolledOn": result["enrolledOn"],
        "version": Decimal(1),
        "writeId": WRITE_ID,
    }
    assert stored(f"STU#{student}", "PROFILE")["courseCount"] == 1
    assert stored(f"CRS#{course}", "METADATA")["enrolledCount"] == 1

    twice, _ = mutate(writable, "enroll", {"studentId": student, "courseId": course}, "")
    assert (twice["__typename"], twice["reason"]) == ("ConflictError", "ALREADY_EXISTS")
    assert stored(f"CRS#{course}", "METADATA")["enrolledCount"] == 1

    body = writable.query(
        f'{{ student(studentId: "{student}") {{ courseCount courses {{ totalCount edges {{ grade version }} }} }}'
        f' course(courseId: "{course}") {{ enrolledCount students {{ totalCount nodes {{ studentId }} }} }} }}'
    )
    assert body["data"] == {
        "student": {"courseCount": 1, "courses": {"totalCount": 1, "edges": [{"grade": "A", "version": 1}]}},
        "course": {"enrolledCount": 1, "students": {"totalCount": 1, "nodes": [{"studentId": student}]}},
    }


def test_enrolling_needs_both_sides(writable: Gateway, stored: Any) -> None:
    student, _ = new_pair(writable)
    result, _ = mutate(writable, "enroll", {"studentId": student, "courseId": "crs-nowhere"}, "")
    assert (result["__typename"], result["entity"]) == ("NotFoundError", "Course")
    assert stored(f"STU#{student}", "ENROLL#CRS#crs-nowhere") is None
    assert stored(f"STU#{student}", "PROFILE")["courseCount"] == 0


def test_update_enrollment_and_drop_remove_exactly_that_edge(writable: Gateway, stored: Any) -> None:
    student, course = new_pair(writable)
    _, other = new_pair(writable)
    for each in (course, other):
        mutate(writable, "enroll", {"studentId": student, "courseId": each}, "")
    result, operations = mutate(
        writable,
        "updateEnrollment",
        {"studentId": student, "courseId": course, "expectedVersion": 1, "grade": "B"},
        "... on Enrollment { grade version }",
    )
    assert (result["grade"], result["version"], operations) == ("B", 2, {"UpdateItem": 1})

    result, operations = mutate(
        writable, "drop", {"studentId": student, "courseId": course}, "... on Deleted { items { type count } }"
    )
    assert result["items"] == [{"type": "Enrollment", "count": 1}]
    assert operations == {"TransactWriteItems": 1}
    assert stored(f"STU#{student}", f"ENROLL#CRS#{course}") is None
    assert stored(f"STU#{student}", f"ENROLL#CRS#{other}") is not None
    assert stored(f"STU#{student}", "PROFILE")["courseCount"] == 1
    assert stored(f"CRS#{course}", "METADATA")["enrolledCount"] == 0
    assert stored(f"CRS#{other}", "METADATA")["enrolledCount"] == 1
    again, _ = mutate(writable, "drop", {"studentId": student, "courseId": course}, "")
    assert again["__typename"] == "NotFoundError"


def test_deleting_a_course_with_cascade_drops_its_enrolments_on_the_students_side(
    writable: Gateway, stored: Any
) -> None:
    course = unique("crs")
    mutate(writable, "createCourse", {"courseId": course, "title": "C"}, "")
    students = [unique("stu") for _ in range(3)]
    for student in students:
        mutate(writable, "createStudent", {"studentId": student, "name": "S"}, "")
        mutate(writable, "enroll", {"studentId": student, "courseId": course}, "")
    refused, _ = mutate(writable, "deleteCourse", {"courseId": course}, "")
    assert refused["reason"] == "HAS_CHILDREN"
    result, _ = mutate(
        writable, "deleteCourse", {"courseId": course, "cascade": True}, "... on Deleted { items { type count } }"
    )
    assert result["items"] == [{"type": "Course", "count": 1}, {"type": "Enrollment", "count": 3}]
    for student in students:
        assert stored(f"STU#{student}", f"ENROLL#CRS#{course}") is None
        assert stored(f"STU#{student}", "PROFILE")["courseCount"] == 0


def test_deleting_an_organization_with_cascade_deletes_users_and_their_tickets(
    writable: Gateway, stored: Any, dynamodb: Any
) -> None:
    org = unique("org")
    mutate(writable, "createOrganization", {"orgName": org}, "")
    tickets = []
    for name in ("u1", "u2"):
        mutate(writable, "createUser", {"orgName": org, "username": name}, "")
        for _ in range(2):
            data = {"orgName": org, "username": name, "title": "T"}
            tickets.append(mutate(writable, "createTicket", data, "... on Ticket { ticketId }")[0]["ticketId"])
    result, _ = mutate(
        writable, "deleteOrganization", {"orgName": org, "cascade": True}, "... on Deleted { items { type count } }"
    )
    assert result["items"] == [
        {"type": "Organization", "count": 1},
        {"type": "Ticket", "count": 4},
        {"type": "User", "count": 2},
    ]
    assert all(stored(f"TICKET#{t}", f"TICKET#{t}") is None for t in tickets)
    left = dynamodb.query(
        TableName=writable.table,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": f"ORG#{org}"}},
    )
    assert left["Items"] == []


# --- idempotency --------------------------------------------------------------------------------------------------


def test_a_retried_create_with_a_token_applies_once_and_answers_the_same(
    writable: Gateway, stored: Any, dynamodb: Any
) -> None:
    ws = new_workspace(writable)
    token = str(uuid.uuid4())
    data = {"workspaceId": ws, "title": "Once"}
    first, operations = mutate(writable, "createProject", data, "... on Project { projectId version }", token=token)
    assert operations == {"TransactWriteItems": 1}
    again, operations = mutate(writable, "createProject", data, "... on Project { projectId version }", token=token)
    assert again == first
    assert operations == {"TransactWriteItems": 1, "GetItem": 1}
    projects = dynamodb.query(
        TableName=writable.table,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :p)",
        ExpressionAttributeValues={":pk": {"S": f"WS#{ws}"}, ":p": {"S": "PROJ#"}},
    )
    assert len(projects["Items"]) == 1
    assert stored(f"WS#{ws}", "META")["projectCount"] == 1

    other, _ = mutate(writable, "createProject", {**data, "title": "Twice"}, "", token=token)
    assert (other["__typename"], other["reason"]) == ("ConflictError", "TOKEN_REUSED")
    assert stored(f"WS#{ws}", "META")["projectCount"] == 1


def test_a_retried_update_and_enrolment_with_tokens_apply_once(writable: Gateway, stored: Any) -> None:
    student, course = new_pair(writable)
    token = str(uuid.uuid4())
    data = {"courseId": course, "expectedVersion": 1, "title": "Renamed"}
    results = [mutate(writable, "updateCourse", data, "... on Course { title version }", token=token)[0] for _ in "ab"]
    assert results[0] == results[1] == {"__typename": "Course", "title": "Renamed", "version": 2}
    assert stored(f"CRS#{course}", "METADATA")["version"] == 2

    token = str(uuid.uuid4())
    pair = {"studentId": student, "courseId": course}
    results = [mutate(writable, "enroll", pair, "... on Enrollment { version }", token=token)[0] for _ in "ab"]
    assert results[0] == results[1] == {"__typename": "Enrollment", "version": 1}
    assert stored(f"CRS#{course}", "METADATA")["enrolledCount"] == 1
    assert stored(f"STU#{student}", "PROFILE")["courseCount"] == 1


# --- a table another tool wrote -----------------------------------------------------------------------------------


def test_a_foreign_table_is_served_with_null_counts_and_refuses_counted_writes_until_recounted(
    gateway: Gateway,
) -> None:
    body = gateway.query(
        f'{{ student(studentId: "{student_id(2)}") {{ courseCount version courses {{ totalCount }} }}'
        ' workspace(workspaceId: "ws-main") { projectCount projects(first: 1) { totalCount } } }'
    )
    assert body["data"] == {
        "student": {"courseCount": None, "version": 0, "courses": {"totalCount": None}},
        "workspace": {"projectCount": None, "projects": {"totalCount": None}},
    }
    result, _ = mutate(gateway, "enroll", {"studentId": student_id(2), "courseId": "crs-0002"}, "")
    assert (result["__typename"], result["reason"]) == ("ConflictError", "NOT_COUNTED")
    assert "tablegraph recount" in result["message"]


def test_an_unreachable_table_is_a_graphql_error_with_a_code(gateway_factory: Callable[..., Gateway]) -> None:
    with gateway_factory(f"missing-{uuid.uuid4().hex[:6]}") as missing:
        body = missing.query('mutation { createStudent(input: {studentId: "s", name: "N"}) { __typename } }')
    assert body["errors"][0]["extensions"]["code"] == "UNAVAILABLE"


# --- who may write ------------------------------------------------------------------------------------------------


def test_a_caller_writes_only_in_the_tenants_it_was_granted(
    writable: Gateway, gateway_factory: Callable[..., Gateway], stored: Any
) -> None:
    mine, theirs = new_workspace(writable), new_workspace(writable)
    with Issuer() as issuer, gateway_factory(writable.table, **issuer.settings()) as guarded:
        headers = {"Authorization": f"Bearer {issuer.hs256('ann', {'workspaces': [mine]})}"}
        allowed, _ = mutate(guarded, "createProject", {"workspaceId": mine, "title": "P"}, "", **headers)
        assert allowed["__typename"] == "Project"
        body = guarded.query(
            "mutation($i: CreateProjectInput!) { createProject(input: $i) { __typename } }",
            {"i": {"workspaceId": theirs, "title": "P"}},
            **headers,
        )
    assert body["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert body["extensions"]["dynamodb"]["calls"] == 0
    assert stored(f"WS#{theirs}", "META")["projectCount"] == 0


def test_a_retried_delete_with_a_token_answers_as_the_first_time(writable: Gateway, stored: Any) -> None:
    org = unique("org")
    mutate(writable, "createOrganization", {"orgName": org}, "")
    mutate(writable, "createUser", {"orgName": org, "username": "cy"}, "")
    data = {"orgName": org, "username": "cy", "title": "T"}
    tid = mutate(writable, "createTicket", data, "... on Ticket { ticketId }")[0]["ticketId"]
    token = str(uuid.uuid4())
    answers = [
        mutate(writable, "deleteTicket", {"ticketId": tid}, "... on Deleted { items { type count } }", token=token)
        for _ in "ab"
    ]
    assert answers[0][0] == answers[1][0] == {"__typename": "Deleted", "items": [{"type": "Ticket", "count": 1}]}
    # The retry finds the ticket gone (GetItem) and answers from the token's record (GetItem).
    assert answers[1][1] == {"GetItem": 2}
    assert stored(f"ORG#{org}", "USER#cy")["ticketCount"] == 0
