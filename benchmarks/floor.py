"""The floor: each canonical operation's optimal plan as plain aioboto3 requests, with no GraphQL and no HTTP.

Written the way an application would call the stock client: the request, then ``TypeDeserializer`` on the items.
It is what the gateway's latency is divided by; its CPU per request is the stock client's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from benchmarks import data
from benchmarks.operations import FIRST_PROJECTS, PAGE, SMALL_PAGE
from gateway.dynamo import accounting
from gateway.dynamo.accounting import Ledger

_deserializer = TypeDeserializer()

Items = list[dict[str, Any]]


def _decode(raw: dict[str, Any]) -> dict[str, Any]:
    return {name: _deserializer.deserialize(value) for name, value in raw.items()}


class Floor:
    """The requests of one canonical operation against ``table``, recorded in a ledger like the gateway's."""

    def __init__(self, client: Any, table: str, ledger: Ledger) -> None:
        self._client = client
        self._table = table
        self._ledger = ledger

    async def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        response = await self._client.get_item(TableName=self._table, Key={"PK": {"S": pk}, "SK": {"S": sk}})
        self._ledger.record("GetItem")
        raw = response.get("Item")
        return _decode(raw) if raw else None

    async def query(
        self, pk: str, sk: tuple[str, str], *, limit: int, ascending: bool, index: str | None = None
    ) -> Items:
        operator, value = sk
        pk_name, sk_name = ("GSI1PK", "GSI1SK") if index else ("PK", "SK")
        condition = "begins_with(#sk, :sk)" if operator == "begins_with" else f"#sk {operator} :sk"
        params: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": f"#pk = :pk AND {condition}",
            "ExpressionAttributeNames": {"#pk": pk_name, "#sk": sk_name},
            "ExpressionAttributeValues": {":pk": {"S": pk}, ":sk": {"S": value}},
            "ScanIndexForward": ascending,
            "Limit": limit,
        }
        if index:
            params["IndexName"] = index
        response = await self._client.query(**params)
        self._ledger.record("Query")
        return [_decode(raw) for raw in response["Items"]]

    async def batch_get(self, keys: list[tuple[str, str]]) -> Items:
        chunks = [keys[i : i + 100] for i in range(0, len(keys), 100)]
        found = await accounting.gather(*(self._batch_get_chunk(chunk) for chunk in chunks))
        return [item for chunk in found for item in chunk]

    async def _batch_get_chunk(self, keys: list[tuple[str, str]]) -> Items:
        request: dict[str, Any] = {self._table: {"Keys": [{"PK": {"S": pk}, "SK": {"S": sk}} for pk, sk in keys]}}
        items: Items = []
        while request:
            response = await self._client.batch_get_item(RequestItems=request)
            self._ledger.record("BatchGetItem")
            items.extend(_decode(raw) for raw in response["Responses"][self._table])
            request = response.get("UnprocessedKeys") or {}
        return items


async def _workspace_projects(floor: Floor) -> Any:
    return await accounting.gather(
        floor.get(f"WS#{data.WS}", "META"),
        floor.query(f"WS#{data.WS}", ("begins_with", "PROJ#"), limit=FIRST_PROJECTS + 1, ascending=False),
    )


async def _organization_users(floor: Floor) -> Any:
    return await floor.query(f"ORG#{data.ORG}", (">=", f"METADATA#{data.ORG}"), limit=PAGE + 2, ascending=True)


async def _users_tickets(floor: Floor) -> Any:
    items = await floor.query(
        f"ORG#{data.TEAM}", (">=", f"METADATA#{data.TEAM}"), limit=data.TEAM_USERS + 2, ascending=True
    )
    users = [item["username"] for item in items if str(item["SK"]).startswith("USER#")][: data.TEAM_USERS]
    return await accounting.gather(
        *(
            floor.query(
                f"ORG#{data.TEAM}#USER#{user}",
                ("begins_with", "TICKET#"),
                limit=SMALL_PAGE + 1,
                ascending=False,
                index="GSI1",
            )
            for user in users
        )
    )


async def _user_tickets(floor: Floor) -> Any:
    user = data.username(1)
    return await floor.query(
        f"ORG#{data.TEAM}#USER#{user}", ("<=", f"USER#{user}"), limit=SMALL_PAGE + 2, ascending=False, index="GSI1"
    )


async def _student_courses(floor: Floor) -> Any:
    items = await floor.query(f"STU#{data.STUDENT}", ("<=", "PROFILE"), limit=PAGE + 2, ascending=False)
    courses = [str(item["SK"]).removeprefix("ENROLL#") for item in items if str(item["SK"]).startswith("ENROLL#")]
    return await floor.batch_get([(course, "METADATA") for course in courses[:PAGE]])


async def _course_students(floor: Floor) -> Any:
    found: list[Any] = await accounting.gather(
        floor.get(f"CRS#{data.COURSE}", "METADATA"),
        floor.query(f"CRS#{data.COURSE}", ("begins_with", "STU#"), limit=PAGE + 1, ascending=True, index="GSI1"),
    )
    course, edges = found
    return course, await floor.batch_get([(str(edge["GSI1SK"]), "PROFILE") for edge in edges[:PAGE]])


async def _students_by_id(floor: Floor) -> Any:
    return await floor.batch_get([(f"STU#{data.edge_id('stu', n)}", "PROFILE") for n in range(1, PAGE + 1)])


async def _project_workspace(floor: Floor) -> Any:
    project = f"PROJ#{data.project_id(data.PROJECTS)}"
    return await floor.batch_get([(f"WS#{data.WS}", project), (f"WS#{data.WS}", "META")])


async def _project_workspace_projects(floor: Floor) -> Any:
    project = f"PROJ#{data.project_id(data.PROJECTS - 5)}"
    return await accounting.gather(
        floor.batch_get([(f"WS#{data.WS}", project), (f"WS#{data.WS}", "META")]),
        floor.query(f"WS#{data.WS}", ("begins_with", "PROJ#"), limit=FIRST_PROJECTS + 1, ascending=False),
    )


async def _ticket_user_organization_users(floor: Floor) -> Any:
    ticket = f"TICKET#{data.ticket_id(1, 0)}"
    (found,) = await floor.batch_get([(ticket, ticket)])
    # The ticket's GSI1 partition key names its user: ORG#<orgName>#USER#<username>.
    _, org, _, user = str(found["GSI1PK"]).split("#")
    return await accounting.gather(
        floor.batch_get([(f"ORG#{org}", f"USER#{user}")]),
        floor.query(f"ORG#{org}", (">=", f"METADATA#{org}"), limit=SMALL_PAGE + 2, ascending=True),
    )


async def _course_students_courses(floor: Floor) -> Any:
    course = data.class_id("crs", 1)
    found: list[Any] = await accounting.gather(
        floor.batch_get([(f"CRS#{course}", "METADATA")]),
        floor.query(f"CRS#{course}", ("begins_with", "STU#"), limit=SMALL_PAGE + 1, ascending=True, index="GSI1"),
    )
    _, edges = found
    # Each student's Query brings its profile (PROFILE sorts after ENROLL#) with its newest enrolments.
    students: list[Items] = await accounting.gather(
        *(
            floor.query(str(edge["GSI1SK"]), ("<=", "PROFILE"), limit=SMALL_PAGE + 2, ascending=False)
            for edge in edges[:SMALL_PAGE]
        )
    )
    enrolled = {
        str(item["SK"]).removeprefix("ENROLL#")
        for items in students
        for item in items[: SMALL_PAGE + 1]
        if str(item["SK"]).startswith("ENROLL#")
    }
    # The course the operation starts at was read in the first round.
    courses = sorted(enrolled - {f"CRS#{course}"})
    return students, await floor.batch_get([(one, "METADATA") for one in courses])


PLANS: dict[int, Callable[[Floor], Awaitable[Any]]] = {
    1: _workspace_projects,
    2: _organization_users,
    3: _users_tickets,
    4: _user_tickets,
    5: _student_courses,
    6: _course_students,
    7: _students_by_id,
    8: _project_workspace,
    9: _project_workspace_projects,
    10: _ticket_user_organization_users,
    11: _course_students_courses,
}
"""Each operation's plan, by its number in ``benchmarks.operations``."""
