"""Lost answers, throttling and 500s between the gateway and DynamoDB: writes tell the truth, counters stay exact.

A fault-injecting proxy (tests/faults.py) sits between a real gateway and DynamoDB Local. What DynamoDB applied is
read from the proxy's record of DynamoDB's own answers and from the table with plain boto3, never from the gateway.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from gateway.config import Settings
from tests.conftest import Gateway
from tests.contract import create_table
from tests.faults import KINDS, WRITES, FaultProxy, Kind, Rule, Write

SEED = 20260315
CLIENTS = 20
MUTATIONS_PER_CLIENT = 15
LOST: list[Kind] = ["drop_after", "error_after"]
"""The two ways an answer is lost after DynamoDB applied the write."""

ERRORS = """
  ... on MutationError { message }
  ... on NotFoundError { entity }
  ... on ConflictError { reason currentVersion }
"""


@pytest.fixture(scope="module")
def table(dynamodb: Any) -> Iterator[str]:
    name = f"faults-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def proxy(endpoint: str) -> Iterator[FaultProxy]:
    with FaultProxy(endpoint, seed=SEED) as running:
        yield running


@pytest.fixture(scope="module")
def gateway(proxy: FaultProxy, table: str) -> Iterator[Gateway]:
    settings = Settings(endpoint_url=proxy.url, table=table, cursor_secret="test-secret", auth_open=True)
    with Gateway(settings) as running:
        yield running


@pytest.fixture
def faults(proxy: FaultProxy, gateway: Gateway) -> Iterator[FaultProxy]:
    """The proxy in front of the gateway; the rules a test sets end with it."""
    yield proxy
    proxy.set_rules([])


@pytest.fixture(scope="module")
def stored(dynamodb: Any, table: str) -> Callable[[str, str], dict[str, Any] | None]:
    """An item as DynamoDB holds it, read with plain boto3 around the proxy (strongly consistent)."""

    def get(pk: str, sk: str) -> dict[str, Any] | None:
        key = {"PK": {"S": pk}, "SK": {"S": sk}}
        found: dict[str, Any] | None = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        return found

    return get


def ask(http: httpx.Client, query: str, variables: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    response = http.post("/graphql", json={"query": query, "variables": variables or {}})
    body: dict[str, Any] = response.json() if response.status_code < 500 else {}
    return response.status_code, body


def mutation(field: str, selection: str = "") -> str:
    special = {"enroll": "EnrollInput", "drop": "DropInput"}
    input_type = special.get(field, field[0].upper() + field[1:] + "Input")
    return (
        f"mutation($input: {input_type}!, $token: String) "
        f"{{ {field}(input: $input, clientToken: $token) {{ __typename {selection} {ERRORS} }} }}"
    )


def mutate(gateway: Gateway, field: str, data: dict[str, Any], selection: str = "", token: str | None = None) -> Any:
    """The mutation's result, or its GraphQL errors when it has none."""
    status, body = ask(gateway.http, mutation(field, selection), {"input": data, "token": token})
    assert status == 200, body
    return body["data"][field] if body.get("data") and body["data"][field] else body["errors"]


def new_workspace(gateway: Gateway) -> str:
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    assert mutate(gateway, "createWorkspace", {"workspaceId": ws, "displayName": "W"})["__typename"] == "Workspace"
    return ws


def sent(proxy: FaultProxy, start: int, operation: str) -> list[tuple[str | None, int | None]]:
    """Each request of ``operation`` since exchange ``start``: the fault it got, and DynamoDB's status."""
    return [(e.fault, e.status) for e in proxy.exchanges[start:] if e.operation == operation]


# --- one lost answer ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", LOST)
def test_an_update_whose_answer_was_lost_after_it_applied_is_reported_with_its_new_version(
    gateway: Gateway, faults: FaultProxy, stored: Any, kind: Kind
) -> None:
    ws = new_workspace(gateway)
    faults.set_rules([Rule(kind, operations=frozenset({"UpdateItem"}), times=1)])
    start = len(faults.exchanges)
    data = {"workspaceId": ws, "expectedVersion": 1, "displayName": "Renamed"}
    result = mutate(gateway, "updateWorkspace", data, "... on Workspace { displayName version }")
    assert result == {"__typename": "Workspace", "displayName": "Renamed", "version": 2}
    # DynamoDB applied the first attempt; its retry was refused by its own condition.
    assert sent(faults, start, "UpdateItem") == [(kind, 200), (None, 400)]
    item = stored(f"WS#{ws}", "META")
    assert (item["displayName"], item["version"]) == ({"S": "Renamed"}, {"N": "2"})


@pytest.mark.parametrize("kind", LOST)
def test_a_root_create_whose_answer_was_lost_after_it_applied_is_reported_as_created(
    gateway: Gateway, faults: FaultProxy, stored: Any, kind: Kind
) -> None:
    faults.set_rules([Rule(kind, operations=frozenset({"PutItem"}), times=1)])
    start = len(faults.exchanges)
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    data = {"workspaceId": ws, "displayName": "Lost"}
    result = mutate(gateway, "createWorkspace", data, "... on Workspace { workspaceId displayName version }")
    assert result == {"__typename": "Workspace", "workspaceId": ws, "displayName": "Lost", "version": 1}
    assert sent(faults, start, "PutItem") == [(kind, 200), (None, 400)]
    assert stored(f"WS#{ws}", "META") is not None


@pytest.mark.parametrize("kind", LOST)
def test_a_plain_delete_whose_answer_was_lost_after_it_applied_is_reported_as_deleted(
    gateway: Gateway, faults: FaultProxy, stored: Any, kind: Kind
) -> None:
    ws = new_workspace(gateway)
    faults.set_rules([Rule(kind, operations=frozenset({"DeleteItem"}), times=1)])
    start = len(faults.exchanges)
    result = mutate(gateway, "deleteWorkspace", {"workspaceId": ws}, "... on Deleted { items { type count } }")
    assert result == {"__typename": "Deleted", "items": [{"type": "Workspace", "count": 1}]}
    assert sent(faults, start, "DeleteItem") == [(kind, 200), (None, 400)]
    assert stored(f"WS#{ws}", "META") is None


@pytest.mark.parametrize("kind", LOST)
def test_a_transaction_whose_answer_was_lost_is_answered_by_its_request_token(
    gateway: Gateway, faults: FaultProxy, dynamodb: Any, table: str, stored: Any, kind: Kind
) -> None:
    ws = new_workspace(gateway)
    faults.set_rules([Rule(kind, operations=frozenset({"TransactWriteItems"}), times=1)])
    start = len(faults.exchanges)
    result = mutate(gateway, "createProject", {"workspaceId": ws, "title": "Once"}, "... on Project { title }")
    assert result == {"__typename": "Project", "title": "Once"}
    assert sent(faults, start, "TransactWriteItems") == [(kind, 200), (None, 200)]
    tokens = {e.body["ClientRequestToken"] for e in faults.exchanges[start:] if e.operation == "TransactWriteItems"}
    assert len(tokens) == 1
    assert len(projects(dynamodb, table, ws)) == 1
    assert stored(f"WS#{ws}", "META")["projectCount"] == {"N": "1"}


def test_a_conflict_behind_a_lost_answer_is_still_a_conflict(
    gateway: Gateway, faults: FaultProxy, dynamodb: Any, table: str
) -> None:
    ws = new_workspace(gateway)
    another_update(dynamodb, table, ws, version=2)
    faults.set_rules([Rule("drop_after", operations=frozenset({"UpdateItem"}), times=1)])
    start = len(faults.exchanges)
    result = mutate(gateway, "updateWorkspace", {"workspaceId": ws, "expectedVersion": 1, "displayName": "Mine"}, "")
    # Version 2 was written by another write than this one: its retry's refusal is the truth.
    assert (result["__typename"], result["reason"], result["currentVersion"]) == (
        "ConflictError",
        "VERSION_MISMATCH",
        2,
    )
    assert sent(faults, start, "UpdateItem") == [("drop_after", 400), (None, 400)]


def test_a_throttled_attempt_is_no_lost_answer(gateway: Gateway, faults: FaultProxy, dynamodb: Any, table: str) -> None:
    ws = new_workspace(gateway)
    another_update(dynamodb, table, ws, version=5)
    faults.set_rules([Rule("throttle", operations=frozenset({"UpdateItem"}), times=1)])
    start = len(faults.exchanges)
    result = mutate(gateway, "updateWorkspace", {"workspaceId": ws, "expectedVersion": 1, "displayName": "Mine"}, "")
    assert (result["__typename"], result["reason"], result["currentVersion"]) == (
        "ConflictError",
        "VERSION_MISMATCH",
        5,
    )
    assert sent(faults, start, "UpdateItem") == [("throttle", None), (None, 400)]


def test_a_lost_answer_and_another_write_before_the_retry_is_an_unknown_outcome_not_a_conflict(
    gateway: Gateway, faults: FaultProxy, dynamodb: Any, table: str
) -> None:
    ws = new_workspace(gateway)
    # The update is applied (version 2), its answer is lost, and another client updates the item (version 3)
    # before the retry: the item no longer shows whether this write was applied.
    overtaken = Rule(
        "drop_after",
        operations=frozenset({"UpdateItem"}),
        times=1,
        after=lambda: another_update(dynamodb, table, ws, 3),
    )
    faults.set_rules([overtaken])
    start = len(faults.exchanges)
    errors = mutate(gateway, "updateWorkspace", {"workspaceId": ws, "expectedVersion": 1, "displayName": "Mine"}, "")
    assert isinstance(errors, list), errors
    assert [(e["extensions"]["code"], e["extensions"]["outcome"]) for e in errors] == [("UNAVAILABLE", "UNKNOWN")]
    assert sent(faults, start, "UpdateItem") == [("drop_after", 200), (None, 400)]


def another_update(dynamodb: Any, table: str, ws: str, version: int) -> None:
    """Another client's update of a workspace, to ``version``, written around the proxy."""
    dynamodb.update_item(
        TableName=table,
        Key={"PK": {"S": f"WS#{ws}"}, "SK": {"S": "META"}},
        UpdateExpression="SET version = :v, writeId = :w, displayName = :d",
        ExpressionAttributeValues={":v": {"N": str(version)}, ":w": {"S": "another-writer"}, ":d": {"S": "Theirs"}},
    )


def projects(dynamodb: Any, table: str, ws: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = query_all(
        dynamodb,
        TableName=table,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :p)",
        ExpressionAttributeValues={":pk": {"S": f"WS#{ws}"}, ":p": {"S": "PROJ#"}},
    )
    return found


def query_all(dynamodb: Any, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in dynamodb.get_paginator("query").paginate(**params, ConsistentRead="IndexName" not in params):
        items.extend(page["Items"])
    return items


# --- DynamoDB failing every attempt -------------------------------------------------------------------------------

FAILING = {
    "an update, 500": ("UpdateItem", "InternalServerError", 500, "update"),
    "a read, 500": ("BatchGetItem", "InternalServerError", 500, "read"),
    "a transaction still in progress": ("TransactWriteItems", "TransactionInProgressException", 400, "create"),
}


@pytest.mark.parametrize("case", FAILING)
def test_dynamodb_failing_every_attempt_is_unavailable_and_a_warning(
    gateway: Gateway, faults: FaultProxy, caplog: pytest.LogCaptureFixture, case: str
) -> None:
    operation, code, status, what = FAILING[case]
    ws = new_workspace(gateway)
    caplog.set_level(logging.WARNING)
    faults.set_rules([Rule("error_before", operations=frozenset({operation}), code=code, status=status)])
    start = len(faults.exchanges)
    if what == "update":
        status_, body = ask(
            gateway.http, mutation("updateWorkspace"), {"input": {"workspaceId": ws, "expectedVersion": 1}}
        )
    elif what == "create":
        status_, body = ask(gateway.http, mutation("createProject"), {"input": {"workspaceId": ws, "title": "T"}})
    else:
        status_, body = ask(gateway.http, f'{{ a: workspace(workspaceId: "{ws}") {{ displayName }} }}')
    assert status_ == 200
    assert [error["extensions"]["code"] for error in body["errors"]] == ["UNAVAILABLE"]
    # Every call is the first attempt and the four retries the store configures (retries={"max_attempts": 4}).
    attempts = sent(faults, start, operation)
    assert set(attempts) == {("error_before", None)} and len(attempts) % 5 == 0
    warned = [r for r in caplog.records if r.name == "gateway.dynamo.client" and r.levelno == logging.WARNING]
    assert warned and code in warned[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# --- twenty clients, every kind of fault ----------------------------------------------------------------------------

WORKLOAD_RULES = [
    Rule("throttle", 0.05),
    Rule("error_before", 0.04),
    Rule("error_after", 0.06, operations=WRITES),
    Rule("drop_after", 0.07, operations=WRITES),
    Rule("drop_after", 0.02, operations=frozenset({"GetItem", "Query", "BatchGetItem"})),
    Rule("delay", 0.05, delay=0.02),
]
SHARED_WORKSPACES = 3
COURSES = 3
USERS = 4
ORG = "org-faults"
SELECTIONS = {
    "createProject": "... on Project { projectId }",
    "createTicket": "... on Ticket { ticketId }",
    "createWorkspace": "... on Workspace { workspaceId }",
    "updateWorkspace": "... on Workspace { version }",
}


@dataclass
class Sent:
    """One mutation a client sent, how the gateway answered, and the span of the proxy's exchanges meanwhile."""

    kind: str
    data: dict[str, Any]
    token: str | None
    marker: str
    """What identifies its write among all applied writes: a unique title, display name or id."""
    replay: bool
    """Sent again with the same client token right after the first time, as a client that heard nothing would."""
    start: int
    stop: int = 0
    outcome: str = ""
    """ok, failed (a typed refusal: nothing was applied) or unknown (a GraphQL error)."""
    code: str = ""
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str] | None:
        """The key of the item the mutation creates or deletes, when it is known."""
        if self.kind == "createProject":
            project = self.result.get("projectId")
            return (f"WS#{self.data['workspaceId']}", f"PROJ#{project}") if project else None
        if self.kind == "deleteProject":
            return f"WS#{self.data['workspaceId']}", f"PROJ#{self.data['projectId']}"
        if self.kind in ("createWorkspace", "deleteWorkspace", "updateWorkspace"):
            return f"WS#{self.data['workspaceId']}", "META"
        if self.kind in ("enroll", "drop"):
            return f"STU#{self.data['studentId']}", f"ENROLL#CRS#{self.data['courseId']}"
        return None

    def wrote(self, write: Write) -> bool:
        """Whether an applied write is this mutation's."""
        if self.kind in ("createProject", "createTicket"):
            return write.action == "Put" and json.dumps(self.marker) in write.text
        if self.kind == "updateWorkspace":
            return write.action == "Update" and write.key == self.key and json.dumps(self.marker) in write.text
        action = "Put" if self.kind in ("createWorkspace", "enroll") else "Delete"
        return write.action == action and write.key == self.key


@dataclass
class Client:
    """One of the concurrent clients. It owns the items it creates and its student's enrolments, and tracks them:
    present, absent, or either (after an unknown outcome)."""

    number: int
    url: str
    proxy: FaultProxy
    read_version: Callable[[str], int]
    student: str
    sent: list[Sent] = field(default_factory=list)
    state: dict[tuple[str, str], str] = field(default_factory=dict)
    http_500: int = 0

    def run(self, workspaces: list[str], users: list[str], courses: list[str]) -> None:
        rng = random.Random(SEED * 1000 + self.number)
        with httpx.Client(base_url=self.url, timeout=60) as http:
            for n in range(MUTATIONS_PER_CLIENT):
                tag = f"{self.number}-{n}"
                token = str(uuid.uuid4()) if rng.random() < 0.5 else None
                owned = {state: [key for key, s in self.state.items() if s == state] for state in ("present", "absent")}
                mine = [key for key in owned["present"] if key[1] == "META"]
                projects = [key for key in owned["present"] if key[1].startswith("PROJ#")]
                enrolled = [key for key in owned["present"] if key[0].startswith("STU#")]
                touched = {key[1].removeprefix("ENROLL#CRS#") for key in self.state if key[0].startswith("STU#")}
                free = [
                    c
                    for c in courses
                    if c not in touched or (f"STU#{self.student}", f"ENROLL#CRS#{c}") in owned["absent"]
                ]
                choices: list[tuple[str, dict[str, Any], str]] = [
                    ("createProject", {"workspaceId": rng.choice(workspaces), "title": f"p-{tag}"}, f"p-{tag}"),
                    ("createTicket", {"orgName": ORG, "username": rng.choice(users), "title": f"t-{tag}"}, f"t-{tag}"),
                    ("createWorkspace", {"workspaceId": f"fw-{tag}", "displayName": "Own"}, f"fw-{tag}"),
                ]
                ws = rng.choice([*workspaces, *(key[0].removeprefix("WS#") for key in mine)])
                update = {"workspaceId": ws, "expectedVersion": self.read_version(ws), "displayName": f"u-{tag}"}
                choices.append(("updateWorkspace", update, f"u-{tag}"))
                pair = {"studentId": self.student}
                if free:
                    choices.append(("enroll", {**pair, "courseId": rng.choice(free)}, f"e-{tag}"))
                if enrolled:
                    choices.append(
                        ("drop", {**pair, "courseId": rng.choice(enrolled)[1].removeprefix("ENROLL#CRS#")}, "")
                    )
                if projects:
                    pk, sk = rng.choice(projects)
                    choices.append(("deleteProject", {"workspaceId": pk[3:], "projectId": sk[5:]}, ""))
                if mine:
                    choices.append(("deleteWorkspace", {"workspaceId": rng.choice(mine)[0][3:]}, ""))
                kind, data, marker = rng.choice(choices)
                self._send(http, kind, data, token, marker, replay=False)
                if token is not None and kind.startswith("create"):
                    self._send(http, kind, data, token, marker, replay=True)

    def _send(
        self, http: httpx.Client, kind: str, data: dict[str, Any], token: str | None, marker: str, replay: bool
    ) -> None:
        one = Sent(kind, data, token, marker, replay, start=len(self.proxy.exchanges))
        status, body = ask(http, mutation(kind, SELECTIONS.get(kind, "")), {"input": data, "token": token})
        one.stop = len(self.proxy.exchanges)
        if status >= 500:
            self.http_500 += 1
            one.outcome, one.code = "unknown", f"HTTP {status}"
        elif body.get("errors"):
            one.outcome, one.code = "unknown", str(body["errors"][0].get("extensions", {}).get("code"))
        else:
            one.result = body["data"][kind]
            one.outcome = "failed" if one.result["__typename"].endswith("Error") else "ok"
            one.code = str(one.result.get("reason") or one.result["__typename"])
        self.sent.append(one)
        key = one.key
        if key is None or kind == "updateWorkspace":
            return
        if one.outcome == "ok":
            self.state[key] = "present" if kind.startswith("create") or kind == "enroll" else "absent"
        elif one.outcome == "unknown":
            self.state[key] = "either"


def test_twenty_clients_under_every_kind_of_fault_hear_the_truth_about_their_writes(
    gateway: Gateway, faults: FaultProxy, dynamodb: Any, table: str
) -> None:
    workspaces = [new_workspace(gateway) for _ in range(SHARED_WORKSPACES)]
    assert mutate(gateway, "createOrganization", {"orgName": ORG})["__typename"] == "Organization"
    users = [f"user-{n}" for n in range(USERS)]
    courses = [f"crs-f{n}" for n in range(COURSES)]
    for user in users:
        assert mutate(gateway, "createUser", {"orgName": ORG, "username": user})["__typename"] == "User"
    for course in courses:
        assert mutate(gateway, "createCourse", {"courseId": course, "title": "C"})["__typename"] == "Course"
    students = [f"stu-f{n:02d}" for n in range(CLIENTS)]
    for student in students:
        assert mutate(gateway, "createStudent", {"studentId": student, "name": "S"})["__typename"] == "Student"

    def read_version(ws: str) -> int:
        item = dynamodb.get_item(
            TableName=table, Key={"PK": {"S": f"WS#{ws}"}, "SK": {"S": "META"}}, ConsistentRead=True
        )
        return int(item["Item"]["version"]["N"]) if "Item" in item else 1

    clients = [Client(n, gateway.url, faults, read_version, students[n]) for n in range(CLIENTS)]
    first = len(faults.exchanges)
    requests_before = sum(faults.requests.values())
    faults_before = Counter(faults.faults)
    faults.set_rules(WORKLOAD_RULES)
    threads = [threading.Thread(target=c.run, args=(workspaces, users, courses), daemon=True) for c in clients]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    elapsed = time.monotonic() - began
    faults.set_rules([])
    assert not any(thread.is_alive() for thread in threads), "the clients did not finish"

    sent = [one for client in clients for one in client.sent]
    applied = list(faults.writes(first))
    violations = check(dynamodb, table, clients, applied, workspaces, users, courses)

    injected = faults.faults - faults_before
    outcomes = Counter(f"{one.kind} {one.outcome} {one.code}" for one in sent)
    lost = [e for e in faults.exchanges[first:] if e.applied and e.fault in LOST]
    unknown = [one for one in sent if one.outcome == "unknown"]
    report = {
        "mutations": len(sent),
        "seconds": round(elapsed, 1),
        "requests": sum(faults.requests.values()) - requests_before,
        "faults": {kind: injected[kind] for kind in KINDS},
        "answers lost after a write was applied": dict(Counter(e.operation for e in lost)),
        "unknown outcomes, of them applied": [len(unknown), sum(bool(applied_in(one, applied)) for one in unknown)],
        "outcomes": dict(sorted(outcomes.items())),
        "invariant violations": len(violations),
        "HTTP 500s": sum(client.http_500 for client in clients),
    }
    print("\nfault injection:", json.dumps(report, indent=2))
    assert violations == []
    assert report["HTTP 500s"] == 0
    assert all(injected[kind] > 0 for kind in KINDS), injected
    assert sum(one.outcome == "ok" for one in sent) > len(sent) // 2


def check(
    dynamodb: Any,
    table: str,
    clients: list[Client],
    applied: list[Write],
    workspaces: list[str],
    users: list[str],
    courses: list[str],
) -> list[str]:
    """Every invariant the table and the proxy's record must meet; a list of what broke."""
    violations: list[str] = []
    sent = [one for client in clients for one in client.sent]

    def applied_by(one: Sent) -> list[Write]:
        return applied_in(one, applied)

    for one in sent:
        if one.code == "INTERNAL":
            violations.append(f"{one.kind} {one.data}: masked as INTERNAL")
        if one.outcome == "failed" and applied_by(one):
            violations.append(f"{one.kind} {one.data}: applied, reported {one.code}")
        if one.outcome == "ok" and not one.replay and not applied_by(one):
            violations.append(f"{one.kind} {one.data}: acknowledged, never applied")

    # Items a client owns are where it last heard they are.
    for client in clients:
        for (pk, sk), state in client.state.items():
            found = "Item" in dynamodb.get_item(
                TableName=table, Key={"PK": {"S": pk}, "SK": {"S": sk}}, ConsistentRead=True
            )
            if state != "either" and found != (state == "present"):
                violations.append(f"{pk}/{sk}: {'present' if found else 'absent'}, the client was told {state}")

    # Every created item once at most, once if acknowledged (and not deleted since), none if refused.
    titles: Counter[str] = Counter()
    for ws in workspaces:
        titles.update(item["title"]["S"] for item in projects(dynamodb, table, ws))
    tickets: list[dict[str, Any]] = []
    for user in users:
        tickets += members(dynamodb, table, f"ORG#{ORG}#USER#{user}", "TICKET#")
    titles.update(item["title"]["S"] for item in tickets)
    creates: dict[str, list[Sent]] = {}
    for one in sent:
        if one.kind in ("createProject", "createTicket", "createWorkspace"):
            creates.setdefault(one.marker, []).append(one)
    deleted = {one.key for one in sent if one.kind.startswith("delete") and one.outcome != "failed"}
    for marker, attempts in creates.items():
        if attempts[0].kind == "createWorkspace":
            key = {"PK": {"S": f"WS#{marker}"}, "SK": {"S": "META"}}
            count = int("Item" in dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True))
        else:
            count = titles[marker]
        acknowledged = [one for one in attempts if one.outcome == "ok"]
        ids = {json.dumps(one.result, sort_keys=True) for one in acknowledged}
        if count > 1 or len(ids) > 1:
            violations.append(f"{marker}: {count} items, answers {sorted(ids)}")
        gone = any(one.key in deleted for one in acknowledged)
        if acknowledged and not gone and count != 1:
            violations.append(f"{marker}: acknowledged, {count} items")
        if all(one.outcome == "failed" for one in attempts) and count:
            violations.append(f"{marker}: refused, yet stored")

    # Counters are the members a Query finds; versions count the updates DynamoDB applied, each once.
    for ws in workspaces:
        violations += counter(dynamodb, table, f"WS#{ws}", "META", "projectCount", len(projects(dynamodb, table, ws)))
    for user in users:
        count = len(members(dynamodb, table, f"ORG#{ORG}#USER#{user}", "TICKET#"))
        violations += counter(dynamodb, table, f"ORG#{ORG}", f"USER#{user}", "ticketCount", count)
    for course in courses:
        count = len(members(dynamodb, table, f"CRS#{course}", "STU#"))
        violations += counter(dynamodb, table, f"CRS#{course}", "METADATA", "enrolledCount", count)
    for client in clients:
        count = len(
            query_all(
                dynamodb,
                TableName=table,
                KeyConditionExpression="PK = :pk AND begins_with(SK, :e)",
                ExpressionAttributeValues={":pk": {"S": f"STU#{client.student}"}, ":e": {"S": "ENROLL#"}},
            )
        )
        violations += counter(dynamodb, table, f"STU#{client.student}", "PROFILE", "courseCount", count)
    updates = [one for one in sent if one.kind == "updateWorkspace"]
    for ws in {one.data["workspaceId"] for one in updates}:
        key = {"PK": {"S": f"WS#{ws}"}, "SK": {"S": "META"}}
        item = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        if item is None:
            continue
        made = {one.marker for one in updates if one.data["workspaceId"] == ws and any(map(one.wrote, applied))}
        if int(item["version"]["N"]) != 1 + len(made):
            violations.append(f"WS#{ws}: version {item['version']['N']} after {len(made)} applied updates")
    return violations


def applied_in(one: Sent, applied: list[Write]) -> list[Write]:
    """The applied writes that are this mutation's: DynamoDB answered them while its request was being served."""
    return [write for write in applied if one.start <= write.index < one.stop and one.wrote(write)]


def members(dynamodb: Any, table: str, partition: str, prefix: str) -> list[dict[str, Any]]:
    """The members of a partition of GSI1."""
    return query_all(
        dynamodb,
        TableName=table,
        IndexName="GSI1",
        KeyConditionExpression="GSI1PK = :pk AND begins_with(GSI1SK, :m)",
        ExpressionAttributeValues={":pk": {"S": partition}, ":m": {"S": prefix}},
    )


def counter(dynamodb: Any, table: str, pk: str, sk: str, attribute: str, members: int) -> list[str]:
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": pk}, "SK": {"S": sk}}, ConsistentRead=True)["Item"]
    value = int(item[attribute]["N"])
    return [] if value == members else [f"{pk}/{sk}: {attribute} {value}, {members} members"]
