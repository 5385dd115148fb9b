"""The honest peer: the gateway a competent Python team writes by hand with the same stack, over the same table.

Hand-written strawberry types and resolvers for the demo design, a DataLoader per entity that batches its point
reads into BatchGetItem (100 keys a call, unprocessed keys sent again), one Query per connection, and the stock
aioboto3 client with ``TypeDeserializer``; served by uvicorn. What it does not do is look ahead: a resolver reads
when GraphQL reaches it, so each level of a nested operation waits for the one above. It answers the benchmark's
operations with the gateway's field names and global ids, and shares no code with the gateway: its keys are
written out here, as a team would write them. Only what the benchmark reads is there: no mutations, no ``node``,
no cursors (pages are read from the start).

``python -m benchmarks.peer --endpoint-url URL --table NAME --port N``
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import enum
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import strawberry
import uvicorn
from aiodataloader import DataLoader
from boto3.dynamodb.types import TypeDeserializer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.extensions import ParserCache, SchemaExtension, ValidationCache

from benchmarks import engine

ACCOUNTING_HEADER = "X-Tablegraph-Accounting"
"""Asked with this header set to 1, the peer reports its DynamoDB calls as the gateway does."""

_BATCH = 100
_ATTEMPTS = 8

_deserializer = TypeDeserializer()

Item = dict[str, Any]
Key = tuple[str, str]
N = TypeVar("N")


def _decode(raw: dict[str, Any]) -> Item:
    return {name: _deserializer.deserialize(value) for name, value in raw.items()}


def global_id(type_name: str, *ids: str) -> strawberry.ID:
    """The gateway's id format, ``<Type>#<id>...`` in unpadded base64url, computed here on our own."""
    return strawberry.ID(base64.urlsafe_b64encode("#".join((type_name, *ids)).encode()).rstrip(b"=").decode())


@dataclass
class Wire:
    """The DynamoDB calls one GraphQL request made: how many of each, and in how many waves one after another
    (a call sent while none is in flight starts a new wave)."""

    operations: Counter[str] = field(default_factory=Counter)
    rounds: int = 0
    _in_flight: int = 0

    @asynccontextmanager
    async def call(self, operation: str) -> AsyncIterator[None]:
        if not self._in_flight:
            self.rounds += 1
        self._in_flight += 1
        self.operations[operation] += 1
        try:
            yield
        finally:
            self._in_flight -= 1

    def summary(self) -> dict[str, Any]:
        return {"calls": sum(self.operations.values()), "rounds": self.rounds, "operations": dict(self.operations)}


class Table:
    """The three requests the resolvers need, on the stock client."""

    def __init__(self, client: Any, name: str, wire: Wire) -> None:
        self._client, self._name, self.wire = client, name, wire

    async def batch_get(self, keys: Sequence[Key]) -> dict[Key, Item]:
        """The items at ``keys`` (at most 100), by key; missing ones are absent."""
        request: dict[str, Any] = {self._name: {"Keys": [{"PK": {"S": pk}, "SK": {"S": sk}} for pk, sk in keys]}}
        found: dict[Key, Item] = {}
        for attempt in range(_ATTEMPTS):
            async with self.wire.call("BatchGetItem"):
                response = await self._client.batch_get_item(RequestItems=request)
            for raw in response["Responses"].get(self._name, []):
                item = _decode(raw)
                found[item["PK"], item["SK"]] = item
            request = response.get("UnprocessedKeys") or {}
            if not request:
                return found
            await asyncio.sleep(0.02 * 2**attempt)
        raise RuntimeError("DynamoDB kept keys unprocessed")

    async def query(
        self, pk: str, prefix: str, first: int, *, ascending: bool, index: bool = False
    ) -> tuple[list[Item], bool]:
        """The first ``first`` items of the partition whose sort key starts with ``prefix``, and whether more
        follow (one more is asked for)."""
        pk_name, sk_name = ("GSI1PK", "GSI1SK") if index else ("PK", "SK")
        params: dict[str, Any] = {
            "TableName": self._name,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :sk)",
            "ExpressionAttributeNames": {"#pk": pk_name, "#sk": sk_name},
            "ExpressionAttributeValues": {":pk": {"S": pk}, ":sk": {"S": prefix}},
            "ScanIndexForward": ascending,
            "Limit": first + 1,
        }
        if index:
            params["IndexName"] = "GSI1"
        async with self.wire.call("Query"):
            response = await self._client.query(**params)
        items = [_decode(raw) for raw in response["Items"]]
        return items[:first], len(items) > first


class _Loader(DataLoader[Key, Item | None]):
    """Items by (PK, SK), one entity's: what a tick of the event loop asks for goes out as one BatchGetItem."""

    def __init__(self, table: Table) -> None:
        super().__init__(max_batch_size=_BATCH)
        self._table = table

    async def batch_load_fn(self, keys: Iterable[Key]) -> list[Item | None]:
        wanted = list(keys)
        found = await self._table.batch_get(wanted)
        return [found.get(key) for key in wanted]


@dataclass
class Context:
    table: Table
    accounting: bool
    workspaces: _Loader
    projects: _Loader
    organizations: _Loader
    users: _Loader
    tickets: _Loader
    students: _Loader
    courses: _Loader

    @classmethod
    def of(cls, table: Table, accounting: bool) -> Context:
        return cls(table, accounting, *(_Loader(table) for _ in range(7)))


Info = strawberry.Info[Context, None]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _after(key: str, prefix: str) -> str:
    return key.removeprefix(prefix)


@strawberry.enum
class ProjectStatus(enum.Enum):
    active = "active"
    paused = "paused"
    archived = "archived"


@strawberry.enum
class TicketStatus(enum.Enum):
    open = "open"
    closed = "closed"


@strawberry.type
class PageInfo:
    has_next_page: bool
    has_previous_page: bool = False


@strawberry.type
class Edge(Generic[N]):
    node: N


@strawberry.type
class Connection(Generic[N]):
    nodes: list[N]
    page_info: PageInfo
    total_count: int | None

    @strawberry.field
    def edges(self) -> list[Edge[N]]:
        return [Edge(node=node) for node in self.nodes]


@strawberry.interface
class Node:
    id: strawberry.ID


@strawberry.type
class Workspace(Node):
    workspace_id: strawberry.ID
    display_name: str | None
    region: str | None
    seat_limit: int | None
    project_count: int | None
    version: int

    @classmethod
    def of(cls, item: Item) -> Workspace:
        ws = _after(item["PK"], "WS#")
        return cls(
            id=global_id("Workspace", ws),
            workspace_id=strawberry.ID(ws),
            display_name=item.get("displayName"),
            region=item.get("region"),
            seat_limit=_int(item.get("seatLimit")),
            project_count=_int(item.get("projectCount")),
            version=int(item.get("version", 0)),
        )

    @strawberry.field
    async def projects(self, info: Info, first: int = 20) -> Connection[Project]:
        items, more = await info.context.table.query(f"WS#{self.workspace_id}", "PROJ#", first, ascending=False)
        nodes = [Project.of(item) for item in items]
        return Connection(nodes=nodes, page_info=PageInfo(has_next_page=more), total_count=self.project_count)


@strawberry.type
class Project(Node):
    workspace_id: strawberry.ID
    project_id: strawberry.ID
    title: str | None
    status: ProjectStatus | None
    created_by: str | None
    version: int

    @classmethod
    def of(cls, item: Item) -> Project:
        ws, project = _after(item["PK"], "WS#"), _after(item["SK"], "PROJ#")
        status = item.get("status")
        return cls(
            id=global_id("Project", ws, project),
            workspace_id=strawberry.ID(ws),
            project_id=strawberry.ID(project),
            title=item.get("title"),
            status=ProjectStatus(status) if status else None,
            created_by=item.get("createdBy"),
            version=int(item.get("version", 0)),
        )

    @strawberry.field
    async def workspace(self, info: Info) -> Workspace | None:
        item = await info.context.workspaces.load((f"WS#{self.workspace_id}", "META"))
        return Workspace.of(item) if item else None


@strawberry.type
class Organization(Node):
    org_name: strawberry.ID
    name: str | None
    subscription_level: str | None
    user_count: int | None
    version: int

    @classmethod
    def of(cls, item: Item) -> Organization:
        org = _after(item["PK"], "ORG#")
        return cls(
            id=global_id("Organization", org),
            org_name=strawberry.ID(org),
            name=item.get("name"),
            subscription_level=item.get("subscriptionLevel"),
            user_count=_int(item.get("userCount")),
            version=int(item.get("version", 0)),
        )

    @strawberry.field
    async def users(self, info: Info, first: int = 20) -> Connection[User]:
        items, more = await info.context.table.query(f"ORG#{self.org_name}", "USER#", first, ascending=True)
        nodes = [User.of(item) for item in items]
        return Connection(nodes=nodes, page_info=PageInfo(has_next_page=more), total_count=self.user_count)


@strawberry.type
class User(Node):
    org_name: strawberry.ID
    username: strawberry.ID
    name: str | None
    role: str | None
    ticket_count: int | None
    version: int

    @classmethod
    def of(cls, item: Item) -> User:
        org, user = _after(item["PK"], "ORG#"), _after(item["SK"], "USER#")
        return cls(
            id=global_id("User", org, user),
            org_name=strawberry.ID(org),
            username=strawberry.ID(user),
            name=item.get("name"),
            role=item.get("role"),
            ticket_count=_int(item.get("ticketCount")),
            version=int(item.get("version", 0)),
        )

    @strawberry.field
    async def tickets(self, info: Info, first: int = 20) -> Connection[Ticket]:
        partition = f"ORG#{self.org_name}#USER#{self.username}"
        items, more = await info.context.table.query(partition, "TICKET#", first, ascending=False, index=True)
        nodes = [Ticket.of(item) for item in items]
        return Connection(nodes=nodes, page_info=PageInfo(has_next_page=more), total_count=self.ticket_count)

    @strawberry.field
    async def organization(self, info: Info) -> Organization | None:
        item = await info.context.organizations.load((f"ORG#{self.org_name}", f"METADATA#{self.org_name}"))
        return Organization.of(item) if item else None


@strawberry.type
class Ticket(Node):
    ticket_id: strawberry.ID
    org_name: strawberry.ID
    username: strawberry.ID
    title: str | None
    status: TicketStatus | None
    version: int

    @classmethod
    def of(cls, item: Item) -> Ticket:
        ticket = _after(item["PK"], "TICKET#")
        # The owner's keys are on the ticket, in its GSI1 partition key: ORG#<orgName>#USER#<username>.
        _, org, _, user = item["GSI1PK"].split("#")
        status = item.get("status")
        return cls(
            id=global_id("Ticket", ticket),
            ticket_id=strawberry.ID(ticket),
            org_name=strawberry.ID(org),
            username=strawberry.ID(user),
            title=item.get("title"),
            status=TicketStatus(status) if status else None,
            version=int(item.get("version", 0)),
        )

    @strawberry.field
    async def user(self, info: Info) -> User | None:
        item = await info.context.users.load((f"ORG#{self.org_name}", f"USER#{self.username}"))
        return User.of(item) if item else None


@strawberry.type
class StudentCoursesEdge:
    course_id: strawberry.Private[str]
    grade: str | None
    enrolled_on: datetime.date | None
    version: int

    @strawberry.field
    async def node(self, info: Info) -> Course | None:
        return await _course(info, self.course_id)


@strawberry.type
class StudentCoursesConnection:
    edges: list[StudentCoursesEdge]
    page_info: PageInfo
    total_count: int | None

    @strawberry.field
    async def nodes(self, info: Info) -> list[Course | None]:
        return list(await asyncio.gather(*(_course(info, edge.course_id) for edge in self.edges)))


@strawberry.type
class CourseStudentsEdge:
    student_id: strawberry.Private[str]
    grade: str | None
    enrolled_on: datetime.date | None
    version: int

    @strawberry.field
    async def node(self, info: Info) -> Student | None:
        return await _student(info, self.student_id)


@strawberry.type
class CourseStudentsConnection:
    edges: list[CourseStudentsEdge]
    page_info: PageInfo
    total_count: int | None

    @strawberry.field
    async def nodes(self, info: Info) -> list[Student | None]:
        return list(await asyncio.gather(*(_student(info, edge.student_id) for edge in self.edges)))


def _date(value: Any) -> datetime.date | None:
    return datetime.date.fromisoformat(value) if value else None


@strawberry.type
class Student(Node):
    student_id: strawberry.ID
    name: str | None
    year: int | None
    major: str | None
    course_count: int | None
    version: int

    @classmethod
    def of(cls, item: Item) -> Student:
        student = _after(item["PK"], "STU#")
        return cls(
            id=global_id("Student", student),
            student_id=strawberry.ID(student),
            name=item.get("name"),
            year=_int(item.get("year")),
            major=item.get("major"),
            course_count=_int(item.get("courseCount")),
            version=int(item.get("version", 0)),
        )

    @strawberry.field
    async def courses(self, info: Info, first: int = 20) -> StudentCoursesConnection:
        items, more = await info.context.table.query(f"STU#{self.student_id}", "ENROLL#CRS#", first, ascending=False)
        edges = [
            StudentCoursesEdge(
                course_id=_after(item["SK"], "ENROLL#CRS#"),
                grade=item.get("grade"),
                enrolled_on=_date(item.get("enrolledOn")),
                version=int(item.get("version", 0)),
            )
            for item in items
        ]
        return StudentCoursesConnection(
            edges=edges, page_info=PageInfo(has_next_page=more), total_count=self.course_count
        )


@strawberry.type
class Course(Node):
    course_id: strawberry.ID
    title: str | None
    credits: int | None
    term: str | None
    enrolled_count: int | None
    version: int

    @classmethod
    def of(cls, item: Item) -> Course:
        course = _after(item["PK"], "CRS#")
        return cls(
            id=global_id("Course", course),
            course_id=strawberry.ID(course),
            title=item.get("title"),
            credits=_int(item.get("credits")),
            term=item.get("term"),
            enrolled_count=_int(item.get("enrolledCount")),
            version=int(item.get("version", 0)),
        )

    @strawberry.field
    async def students(self, info: Info, first: int = 20) -> CourseStudentsConnection:
        partition = f"CRS#{self.course_id}"
        items, more = await info.context.table.query(partition, "STU#", first, ascending=True, index=True)
        edges = [
            CourseStudentsEdge(
                student_id=_after(item["GSI1SK"], "STU#"),
                grade=item.get("grade"),
                enrolled_on=_date(item.get("enrolledOn")),
                version=int(item.get("version", 0)),
            )
            for item in items
        ]
        return CourseStudentsConnection(
            edges=edges, page_info=PageInfo(has_next_page=more), total_count=self.enrolled_count
        )


async def _student(info: Info, student: str) -> Student | None:
    item = await info.context.students.load((f"STU#{student}", "PROFILE"))
    return Student.of(item) if item else None


async def _course(info: Info, course: str) -> Course | None:
    item = await info.context.courses.load((f"CRS#{course}", "METADATA"))
    return Course.of(item) if item else None


@strawberry.type
class Query:
    """The gateway's root fields that the benchmark's operations use, with the same arguments."""

    @strawberry.field
    async def workspace(self, info: Info, workspace_id: strawberry.ID) -> Workspace | None:
        item = await info.context.workspaces.load((f"WS#{workspace_id}", "META"))
        return Workspace.of(item) if item else None

    @strawberry.field
    async def project(self, info: Info, workspace_id: strawberry.ID, project_id: strawberry.ID) -> Project | None:
        item = await info.context.projects.load((f"WS#{workspace_id}", f"PROJ#{project_id}"))
        return Project.of(item) if item else None

    @strawberry.field
    async def organization(self, info: Info, org_name: strawberry.ID) -> Organization | None:
        item = await info.context.organizations.load((f"ORG#{org_name}", f"METADATA#{org_name}"))
        return Organization.of(item) if item else None

    @strawberry.field
    async def user(self, info: Info, org_name: strawberry.ID, username: strawberry.ID) -> User | None:
        item = await info.context.users.load((f"ORG#{org_name}", f"USER#{username}"))
        return User.of(item) if item else None

    @strawberry.field
    async def ticket(self, info: Info, ticket_id: strawberry.ID) -> Ticket | None:
        item = await info.context.tickets.load((f"TICKET#{ticket_id}", f"TICKET#{ticket_id}"))
        return Ticket.of(item) if item else None

    @strawberry.field
    async def student(self, info: Info, student_id: strawberry.ID) -> Student | None:
        return await _student(info, student_id)

    @strawberry.field
    async def course(self, info: Info, course_id: strawberry.ID) -> Course | None:
        return await _course(info, course_id)

    @strawberry.field
    async def students(self, info: Info, student_ids: list[strawberry.ID]) -> list[Student | None]:
        items = await info.context.students.load_many([(f"STU#{one}", "PROFILE") for one in student_ids])
        return [Student.of(item) if item else None for item in items]


class _Accounting(SchemaExtension):
    def get_results(self) -> dict[str, Any]:
        context: Context = self.execution_context.context
        return {"dynamodb": context.table.wire.summary()} if context.accounting else {}


SCHEMA = strawberry.Schema(
    query=Query,
    types=[Workspace, Project, Organization, User, Ticket, Student, Course],
    extensions=[ParserCache, ValidationCache, _Accounting],
)


class _GraphQL(GraphQL[Context, None]):
    def __init__(self, table: str) -> None:
        super().__init__(SCHEMA, graphql_ide=None)
        self._table = table

    async def get_context(self, request: Request | WebSocket, response: Response | WebSocket) -> Context:
        table = Table(request.app.state.client, self._table, Wire())
        return Context.of(table, accounting=request.headers.get(ACCOUNTING_HEADER, "") == "1")


def create_app(endpoint_url: str, table: str) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with engine.client(endpoint_url) as client:
            app.state.client = client
            yield

    graphql: Any = _GraphQL(table)
    return Starlette(routes=[Route("/graphql", graphql, methods=["POST"])], lifespan=lifespan)


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the hand-written DataLoader peer at /graphql.")
    parser.add_argument("--endpoint-url", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--port", type=int, default=8002)
    arguments = parser.parse_args()
    app = create_app(arguments.endpoint_url, arguments.table)
    uvicorn.run(app, host="127.0.0.1", port=arguments.port, log_level="warning")


if __name__ == "__main__":
    main()
