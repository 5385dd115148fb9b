"""``tablegraph recount``: a table another tool wrote gets exact counters, and the gateway can then write to it."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from gateway.config import Settings
from gateway.design.model import Item
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.requests import WriteOp
from gateway.dynamo.store import Store
from gateway.server.cli import main
from gateway.writes.recount import recount
from schema.model import MODEL, WRITES
from tests.conftest import Gateway
from tests.contract import (
    COURSES,
    PROJECTS,
    STUDENTS,
    USERS,
    course_id,
    create_table,
    load_contract_data,
    student_id,
    tickets_of,
    username,
)


@pytest.fixture(scope="module")
def foreign(dynamodb: Any) -> Iterator[str]:
    """The contract data, written by plain boto3 without any counter."""
    name = f"r-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    load_contract_data(dynamodb, name)
    yield name
    dynamodb.delete_table(TableName=name)


def counter(dynamodb: Any, table: str, pk: str, sk: str, attribute: str) -> int | None:
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": pk}, "SK": {"S": sk}}, ConsistentRead=True)["Item"]
    return int(item[attribute]["N"]) if attribute in item else None


def test_recount_sets_every_counter_with_a_progress_bar_then_the_gateway_serves_and_keeps_them(
    dynamodb: Any,
    endpoint: str,
    foreign: str,
    gateway_factory: Callable[..., Gateway],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert counter(dynamodb, foreign, "WS#ws-main", "META", "projectCount") is None

    assert main(["recount", "--endpoint-url", endpoint, "--table", foreign]) == 0
    err = capsys.readouterr().err
    assert "scanning" in err and "writing" in err and "100%" in err
    parents = 3 + 2 + USERS + STUDENTS + COURSES
    assert f"{parents} parents, {parents} with counters set" in err

    expected = [
        ("WS#ws-main", "META", "projectCount", PROJECTS),
        ("WS#ws-big", "META", "projectCount", PROJECTS),
        ("WS#ws-empty", "META", "projectCount", 0),
        ("ORG#o1", "METADATA#o1", "userCount", USERS),
        ("ORG#o-empty", "METADATA#o-empty", "userCount", 0),
        ("ORG#o1", f"USER#{username(7)}", "ticketCount", len(tickets_of(7))),
        ("ORG#o1", f"USER#{username(8)}", "ticketCount", 0),
        (f"STU#{student_id(1)}", "PROFILE", "courseCount", COURSES),
        (f"STU#{student_id(STUDENTS)}", "PROFILE", "courseCount", 0),
        (f"CRS#{course_id(1)}", "METADATA", "enrolledCount", STUDENTS - 1),
        (f"CRS#{course_id(2)}", "METADATA", "enrolledCount", 1),
    ]
    for pk, sk, attribute, count in expected:
        assert counter(dynamodb, foreign, pk, sk, attribute) == count, (pk, sk, attribute)

    with gateway_factory(foreign) as gateway:
        body = gateway.query(
            f'{{ course(courseId: "{course_id(2)}") {{ enrolledCount students(first: 1) {{ totalCount }} }} }}'
        )
        assert body["data"]["course"] == {"enrolledCount": 1, "students": {"totalCount": 1}}
        body = gateway.query(
            f'mutation {{ enroll(input: {{studentId: "{student_id(STUDENTS)}", courseId: "{course_id(2)}"}}) '
            "{ __typename } }"
        )
        assert body["data"]["enroll"] == {"__typename": "Enrollment"}
    assert counter(dynamodb, foreign, f"CRS#{course_id(2)}", "METADATA", "enrolledCount") == 2
    assert counter(dynamodb, foreign, f"STU#{student_id(STUDENTS)}", "PROFILE", "courseCount") == 1

    # Counters already right are not written again; a wrong one is corrected.
    dynamodb.update_item(
        TableName=foreign,
        Key={"PK": {"S": "WS#ws-empty"}, "SK": {"S": "META"}},
        UpdateExpression="SET projectCount = :n",
        ExpressionAttributeValues={":n": {"N": "99"}},
    )
    assert main(["recount", "--endpoint-url", endpoint, "--table", foreign]) == 0
    assert f"{parents} parents, 1 with counters set" in capsys.readouterr().err
    assert counter(dynamodb, foreign, "WS#ws-empty", "META", "projectCount") == 0


async def test_recount_leaves_a_counter_written_meanwhile_and_says_so(
    dynamodb: Any, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"r-{uuid.uuid4().hex[:8]}"
    create_table(dynamodb, name)
    dynamodb.put_item(TableName=name, Item={"PK": {"S": "CRS#c"}, "SK": {"S": "METADATA"}, "title": {"S": "C"}})
    edge = {"PK": {"S": "STU#s"}, "SK": {"S": "ENROLL#CRS#c"}, "GSI1PK": {"S": "CRS#c"}, "GSI1SK": {"S": "STU#s"}}
    dynamodb.put_item(TableName=name, Item=edge)
    try:
        async with Store.open(Settings(endpoint_url=endpoint, table=name), MODEL) as store:
            real_write = store.write

            async def gateway_writes_first(ops: Sequence[WriteOp], ledger: Ledger) -> Item | None:
                # A write through the gateway lands between the Scan and the recount's own write.
                dynamodb.update_item(
                    TableName=name,
                    Key={"PK": {"S": "CRS#c"}, "SK": {"S": "METADATA"}},
                    UpdateExpression="SET enrolledCount = :n",
                    ExpressionAttributeValues={":n": {"N": "5"}},
                )
                return await real_write(ops, ledger)

            monkeypatch.setattr(store, "write", gateway_writes_first)
            seen: list[tuple[str, int, int]] = []
            report = await recount(store, WRITES, lambda *step: seen.append(step))
    finally:
        dynamodb.delete_table(TableName=name)
    assert report.changed_meanwhile == ["Course c"]
    assert report.corrected == 0
    assert seen[-1] == ("writing", 1, 1)
