"""Organizations, their users (one partition) and each user's tickets (GSI1, newest first)."""

from __future__ import annotations

from typing import Any

import strawberry

from gateway.context import Context
from gateway.keys import validate_id
from gateway.model import attribute_values
from schema.model import ORGANIZATION, ORGANIZATION_USERS, TICKET, USER, USER_TICKETS
from schema.relay import VERSION, Connection, lookahead

Info = strawberry.Info[Context, None]


@strawberry.type
class Organization:
    name: strawberry.ID
    subscription_level: str | None
    version: int = strawberry.field(description=VERSION)
    ids: strawberry.Private[dict[str, str]]

    @classmethod
    def from_item(cls, ids: dict[str, str], item: dict[str, Any]) -> Organization:
        values = attribute_values(ORGANIZATION, item)
        return cls(
            name=strawberry.ID(ids["orgName"]),
            subscription_level=values["subscriptionLevel"],
            version=values["version"] or 0,
            ids=ids,
        )

    @strawberry.field(description="Users, by username.")
    async def users(self, info: Info, first: int | None = None, after: str | None = None) -> Connection[User]:
        page = await info.context.reader.page(ORGANIZATION_USERS, self.ids, first, after)
        return Connection.of(page, User.from_item)


@strawberry.type
class User:
    username: strawberry.ID
    organization_name: strawberry.ID
    name: str | None
    role: str | None
    version: int = strawberry.field(description=VERSION)
    ids: strawberry.Private[dict[str, str]]

    @classmethod
    def from_item(cls, ids: dict[str, str], item: dict[str, Any]) -> User:
        values = attribute_values(USER, item)
        return cls(
            username=strawberry.ID(ids["username"]),
            organization_name=strawberry.ID(ids["orgName"]),
            name=values["name"],
            role=values["role"],
            version=values["version"] or 0,
            ids=ids,
        )

    @strawberry.field
    async def organization(self, info: Info) -> Organization | None:
        item = await info.context.reader.get(ORGANIZATION, self.ids)
        return Organization.from_item(self.ids, item) if item else None

    @strawberry.field(description="Tickets, newest first.")
    async def tickets(self, info: Info, first: int | None = None, after: str | None = None) -> Connection[Ticket]:
        page = await info.context.reader.page(USER_TICKETS, self.ids, first, after)
        return Connection.of(page, Ticket.from_item)


@strawberry.type
class Ticket:
    id: strawberry.ID
    title: str | None
    status: str | None
    version: int = strawberry.field(description=VERSION)
    ids: strawberry.Private[dict[str, str]]

    @classmethod
    def from_item(cls, ids: dict[str, str], item: dict[str, Any]) -> Ticket:
        values = attribute_values(TICKET, item)
        return cls(
            id=strawberry.ID(ids["ticketId"]),
            title=values["title"],
            status=values["status"],
            version=values["version"] or 0,
            ids=ids,
        )

    @strawberry.field(description="The user the ticket belongs to; its keys are on the ticket, so no Query.")
    async def user(self, info: Info) -> User | None:
        item = await info.context.reader.get(USER, self.ids)
        return User.from_item(self.ids, item) if item else None


@strawberry.type
class OrganizationQueries:
    @strawberry.field
    async def organization(self, info: Info, name: strawberry.ID) -> Organization | None:
        ids = {"orgName": validate_id(name, "name")}
        reader = info.context.reader
        item = await reader.fetch(ORGANIZATION, ids, lookahead(info), {"users": ORGANIZATION_USERS})
        return Organization.from_item(ids, item) if item else None

    @strawberry.field
    async def user(self, info: Info, organization: strawberry.ID, username: strawberry.ID) -> User | None:
        ids = {"orgName": validate_id(organization, "organization"), "username": validate_id(username, "username")}
        reader = info.context.reader
        item = await reader.fetch(USER, ids, lookahead(info), {"tickets": USER_TICKETS}, {"organization": ORGANIZATION})
        return User.from_item(ids, item) if item else None

    @strawberry.field
    async def ticket(self, info: Info, id: strawberry.ID) -> Ticket | None:
        reader = info.context.reader
        item = await reader.get(TICKET, {"ticketId": validate_id(id, "id")})
        ids = reader.model.ids_of(TICKET, item) if item else None
        return Ticket.from_item(ids, item) if item and ids else None
