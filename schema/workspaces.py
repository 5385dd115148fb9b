"""Workspaces and their projects: one partition per workspace, projects newest first."""

from __future__ import annotations

from typing import Any

import strawberry

from gateway.context import Context
from gateway.keys import validate_id
from gateway.model import attribute_values
from schema.model import PROJECT, PROJECT_COUNT, WORKSPACE, WORKSPACE_PROJECTS
from schema.relay import VERSION, CountedConnection, lookahead

Info = strawberry.Info[Context, None]


@strawberry.type
class Workspace:
    id: strawberry.ID
    display_name: str | None
    region: str | None
    seat_limit: int | None
    project_count: int | None = strawberry.field(
        description="How many projects the workspace has; null until `tablegraph recount` counted a foreign table."
    )
    version: int = strawberry.field(description=VERSION)
    ids: strawberry.Private[dict[str, str]]

    @classmethod
    def from_item(cls, ids: dict[str, str], item: dict[str, Any]) -> Workspace:
        values = attribute_values(WORKSPACE, item)
        return cls(
            id=strawberry.ID(ids["workspaceId"]),
            display_name=values["displayName"],
            region=values["region"],
            seat_limit=values["seatLimit"],
            project_count=values["projectCount"],
            version=values["version"] or 0,
            ids=ids,
        )

    @strawberry.field(description="Projects, newest first.")
    async def projects(self, info: Info, first: int | None = None, after: str | None = None) -> ProjectConnection:
        page = await info.context.reader.page(WORKSPACE_PROJECTS, self.ids, first, after)
        return ProjectConnection.counting(page, Project.from_item, PROJECT_COUNT, self.ids)


@strawberry.type
class Project:
    id: strawberry.ID
    workspace_id: strawberry.ID
    title: str | None
    status: str | None
    created_by: str | None
    version: int = strawberry.field(description=VERSION)
    ids: strawberry.Private[dict[str, str]]

    @classmethod
    def from_item(cls, ids: dict[str, str], item: dict[str, Any]) -> Project:
        values = attribute_values(PROJECT, item)
        return cls(
            id=strawberry.ID(ids["projectId"]),
            workspace_id=strawberry.ID(ids["workspaceId"]),
            title=values["title"],
            status=values["status"],
            created_by=values["createdBy"],
            version=values["version"] or 0,
            ids=ids,
        )

    @strawberry.field
    async def workspace(self, info: Info) -> Workspace | None:
        item = await info.context.reader.get(WORKSPACE, self.ids)
        return Workspace.from_item(self.ids, item) if item else None


@strawberry.type
class ProjectConnection(CountedConnection[Project]):
    pass


@strawberry.type
class WorkspaceQueries:
    @strawberry.field
    async def workspace(self, info: Info, id: strawberry.ID) -> Workspace | None:
        ids = {"workspaceId": validate_id(id, "id")}
        reader = info.context.reader
        item = await reader.fetch(WORKSPACE, ids, lookahead(info), {"projects": WORKSPACE_PROJECTS})
        return Workspace.from_item(ids, item) if item else None

    @strawberry.field
    async def project(self, info: Info, workspace_id: strawberry.ID, id: strawberry.ID) -> Project | None:
        ids = {"workspaceId": validate_id(workspace_id, "workspaceId"), "projectId": validate_id(id, "id")}
        item = await info.context.reader.fetch(PROJECT, ids, lookahead(info), {}, {"workspace": WORKSPACE})
        return Project.from_item(ids, item) if item else None
