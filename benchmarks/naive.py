"""The hand-written alternative: strawberry resolvers that each load their own object (N+1), over the same table.

It answers the canonical operations with the same data as the gateway, the way a first version usually looks:
every object is read by its own resolver with GetItem, every list by its own Query, no batching and no
look-ahead. Sibling resolvers still run concurrently (graphql-core gathers them), so it is not a straw man.
Served by its own Starlette app: ``python -m benchmarks.naive --endpoint-url URL --table NAME --port N``.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import strawberry
import uvicorn
from boto3.dynamodb.types import TypeDeserializer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.extensions import SchemaExtension

from benchmarks import engine
from gateway import accounting
from gateway.accounting import Ledger
from gateway.app import ACCOUNTING_HEADER

_deserializer = TypeDeserializer()


@dataclass
class Context:
    client: Any
    table: str
    ledger: Ledger
    accounting: bool

    async def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        response = await self.client.get_item(TableName=self.table, Key={"PK": {"S": pk}, "SK": {"S": sk}})
        self.ledger.record("GetItem")
        raw = response.get("Item")
        return {name: _deserializer.deserialize(value) for name, value in raw.items()} if raw else None

    async def query(self, pk: str, prefix: str, first: int, *, ascending: bool, index: bool = False) -> list[Any]:
        """Up to ``first + 1`` items whose sort key starts with ``prefix``: one more tells if a next page exists."""
        pk_name, sk_name = ("GSI1PK", "GSI1SK") if index else ("PK", "SK")
        params: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :sk)",
            "ExpressionAttributeNames": {"#pk": pk_name, "#sk": sk_name},
            "ExpressionAttributeValues": {":pk": {"S": pk}, ":sk": {"S": prefix}},
            "ScanIndexForward": ascending,
            "Limit": first + 1,
        }
        if index:
            params["IndexName"] = "GSI1"
        response = await self.client.query(**params)
        self.ledger.record("Query")
        return [{name: _deserializer.deserialize(value) for name, value in raw.items()} for raw in response["Items"]]


Info = strawberry.Info[Context, None]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


@strawberry.type
class PageInfo:
    has_next_page: bool


@strawberry.type
class Workspace:
    workspace_id: strawberry.ID
    display_name: str | None
    region: str | None
    seat_limit: int | None

    @classmethod
    def of(cls, ws: str, item: dict[str, Any]) -> Workspace:
        return cls(
            workspace_id=strawberry.ID(ws),
            display_name=item.get("displayName"),
            region=item.get("region"),
            seat_limit=_int(item.get("seatLimit")),
        )

    @strawberry.field
    async def projects(self, info: Info, first: int = 20) -> WorkspaceProjectsConnection:
        items = await info.context.query(f"WS#{self.workspace_id}", "PROJ#", first, ascending=False)
        nodes = [Project.of(self.workspace_id, item) for item in items[:first]]
        return WorkspaceProjectsConnection(nodes=nodes, page_info=PageInfo(has_next_page=len(items) > first))


@strawberry.type
class Project:
    workspace_id: strawberry.ID
    project_id: strawberry.ID
    title: str | None
    status: str | None
    created_by: str | None

    @classmethod
    def of(cls, ws: str, item: dict[str, Any]) -> Project:
        return cls(
            workspace_id=strawberry.ID(ws),
            project_id=strawberry.ID(str(item["SK"]).removeprefix("PROJ#")),
            title=item.get("title"),
            status=item.get("status"),
            created_by=item.get("createdBy"),
        )

    @strawberry.field
    async def workspace(self, info: Info) -> Workspace | None:
        item = await info.context.get(f"WS#{self.workspace_id}", "META")
        return Workspace.of(self.workspace_id, item) if item else None


@strawberry.type
class WorkspaceProjectsConnection:
    nodes: list[Project]
    page_info: PageInfo


@strawberry.type
class Organization:
    org_name: strawberry.ID
    name: str | None
    subscription_level: str | None

    @strawberry.field
    async def users(self, info: Info, first: int = 20) -> OrganizationUsersConnection:
        items = await info.context.query(f"ORG#{self.org_name}", "USER#", first, ascending=True)
        nodes = [User.of(self.org_name, item) for item in items[:first]]
        return OrganizationUsersConnection(nodes=nodes, page_info=PageInfo(has_next_page=len(items) > first))


@strawberry.type
class User:
    org_name: strawberry.ID
    username: strawberry.ID
    name: str | None
    role: str | None

    @classmethod
    def of(cls, org: str, item: dict[str, Any]) -> User:
        return cls(
            org_name=strawberry.ID(org),
            username=strawberry.ID(str(item["SK"]).removeprefix("USER#")),
            name=item.get("name"),
            role=item.get("role"),
        )

    @strawberry.field
    async def tickets(self, info: Info, first: int = 20) -> UserTicketsConnection:
        partition = f"ORG#{self.org_name}#USER#{self.username}"
        items = await info.context.query(partition, "TICKET#", first, ascending=False, index=True)
        nodes = [
            Ticket(
                ticket_id=strawberry.ID(str(item["SK"]).removeprefix("TICKET#")),
                org_name=self.org_name,
                username=self.username,
                title=item.get("title"),
                status=item.get("status"),
            )
            for item in items[:first]
        ]
        return UserTicketsConnection(nodes=nodes, page_info=PageInfo(has_next_page=len(items) > first))


@strawberry.type
class OrganizationUsersConnection:
    nodes: list[User]
    page_info: PageInfo


@strawberry.type
class Ticket:
    ticket_id: strawberry.ID
    org_name: strawberry.ID
    username: strawberry.ID
    title: str | None
    status: str | None


@strawberry.type
class UserTicketsConnection:
    nodes: list[Ticket]
    page_info: PageInfo


@strawberry.type
class Student:
    student_id: strawberry.ID
    name: str | None
    year: int | None
    major: str | None

    @classmethod
    def of(cls, student: str, item: dict[str, Any]) -> Student:
        return cls(
            student_id=strawberry.ID(student),
            name=item.get("name"),
            year=_int(item.get("year")),
            major=item.get("major"),
        )

    @strawberry.field
    async def courses(self, info: Info, first: int = 20) -> StudentCoursesConnection:
        items = await info.context.query(f"STU#{self.student_id}", "ENROLL#CRS#", first, ascending=False)
        edges = [
            StudentCoursesEdge(
                course_id=str(item["SK"]).removeprefix("ENROLL#CRS#"),
                grade=item.get("grade"),
                enrolled_on=item.get("enrolledOn"),
            )
            for item in items[:first]
        ]
        return StudentCoursesConnection(edges=edges, page_info=PageInfo(has_next_page=len(items) > first))


@strawberry.type
class Course:
    course_id: strawberry.ID
    title: str | None
    credits: int | None
    term: str | None

    @classmethod
    def of(cls, course: str, item: dict[str, Any]) -> Course:
        return cls(
            course_id=strawberry.ID(course),
            title=item.get("title"),
            credits=_int(item.get("credits")),
            term=item.get("term"),
        )

    @strawberry.field
    async def students(self, info: Info, first: int = 20) -> CourseStudentsConnection:
        items = await info.context.query(f"CRS#{self.course_id}", "STU#", first, ascending=True, index=True)
        edges = [
            CourseStudentsEdge(
                student_id=str(item["GSI1SK"]).removeprefix("STU#"),
                grade=item.get("grade"),
                enrolled_on=item.get("enrolledOn"),
            )
            for item in items[:first]
        ]
        return CourseStudentsConnection(edges=edges, page_info=PageInfo(has_next_page=len(items) > first))


@strawberry.type
class StudentCoursesEdge:
    course_id: strawberry.Private[str]
    grade: str | None
    enrolled_on: str | None

    @strawberry.field
    async def node(self, info: Info) -> Course | None:
        return await _course(info, self.course_id)


@strawberry.type
class StudentCoursesConnection:
    edges: list[StudentCoursesEdge]
    page_info: PageInfo


@strawberry.type
class CourseStudentsEdge:
    student_id: strawberry.Private[str]
    grade: str | None
    enrolled_on: str | None

    @strawberry.field
    async def node(self, info: Info) -> Student | None:
        return await _student(info, self.student_id)


@strawberry.type
class CourseStudentsConnection:
    edges: list[CourseStudentsEdge]
    page_info: PageInfo


async def _student(info: Info, student: str) -> Student | None:
    item = await info.context.get(f"STU#{student}", "PROFILE")
    return Student.of(student, item) if item else None


async def _course(info: Info, course: str) -> Course | None:
    item = await info.context.get(f"CRS#{course}", "METADATA")
    return Course.of(course, item) if item else None


@strawberry.type
class Query:
    """The root fields of the gateway's API 0.2 that the canonical operations use, with the same arguments."""

    @strawberry.field
    async def workspace(self, info: Info, workspace_id: strawberry.ID) -> Workspace | None:
        item = await info.context.get(f"WS#{workspace_id}", "META")
        return Workspace.of(workspace_id, item) if item else None

    @strawberry.field
    async def project(self, info: Info, workspace_id: strawberry.ID, project_id: strawberry.ID) -> Project | None:
        item = await info.context.get(f"WS#{workspace_id}", f"PROJ#{project_id}")
        return Project.of(workspace_id, item) if item else None

    @strawberry.field
    async def organization(self, info: Info, org_name: strawberry.ID) -> Organization | None:
        item = await info.context.get(f"ORG#{org_name}", f"METADATA#{org_name}")
        if not item:
            return None
        return Organization(org_name=org_name, name=item.get("name"), subscription_level=item.get("subscriptionLevel"))

    @strawberry.field
    async def user(self, info: Info, org_name: strawberry.ID, username: strawberry.ID) -> User | None:
        item = await info.context.get(f"ORG#{org_name}", f"USER#{username}")
        return User.of(org_name, item) if item else None

    @strawberry.field
    async def student(self, info: Info, student_id: strawberry.ID) -> Student | None:
        return await _student(info, student_id)

    @strawberry.field
    async def course(self, info: Info, course_id: strawberry.ID) -> Course | None:
        return await _course(info, course_id)

    @strawberry.field
    async def students(self, info: Info, student_ids: list[strawberry.ID]) -> list[Student | None]:
        return list(await accounting.gather(*(_student(info, one) for one in student_ids)))


class _Accounting(SchemaExtension):
    def get_results(self) -> dict[str, Any]:
        context = self.execution_context.context
        return {"dynamodb": context.ledger.summary()} if context.accounting else {}


SCHEMA = strawberry.Schema(query=Query, extensions=[_Accounting])


class _GraphQL(GraphQL[Context, None]):
    def __init__(self, table: str) -> None:
        super().__init__(SCHEMA, graphql_ide=None)
        self._table = table

    async def get_context(self, request: Request | WebSocket, response: Response | WebSocket) -> Context:
        accounting = request.headers.get(ACCOUNTING_HEADER, "") == "1"
        return Context(request.app.state.client, self._table, Ledger(), accounting)


def create_app(endpoint_url: str, table: str) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with engine.client(endpoint_url) as client:
            app.state.client = client
            yield

    graphql: Any = _GraphQL(table)
    return Starlette(routes=[Route("/graphql", graphql, methods=["POST"])], lifespan=lifespan)


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the N+1 baseline schema at /graphql.")
    parser.add_argument("--endpoint-url", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    arguments = parser.parse_args()
    app = create_app(arguments.endpoint_url, arguments.table)
    uvicorn.run(app, host=arguments.host, port=arguments.port, log_level="warning")


if __name__ == "__main__":
    main()
