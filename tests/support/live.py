"""Subscribing as a client does: a graphql-transport-ws socket, waiting for the gateway to read the stream, and
items written with plain boto3 in the demo design's key shapes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from gateway.live.fanout import Feed
from tests.support.gateway import Gateway

PROJECTS = """subscription($ws: ID!, $after: String) {
  workspaceProjectsChanged(workspaceId: $ws, after: $after) {
    kind position node { projectId title workspace { displayName } }
  }
}"""


class Socket:
    """A graphql-transport-ws client."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    async def subscribe(self, query: str, op_id: str = "1", **variables: Any) -> None:
        payload = {"query": query, "variables": variables}
        await self.connection.send(json.dumps({"id": op_id, "type": "subscribe", "payload": payload}))

    async def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.connection.recv(), 20))
        return message

    async def event(self) -> dict[str, Any]:
        """The next ``next`` message's single field."""
        message = await self.receive()
        assert message["type"] == "next", message
        (value,) = message["payload"]["data"].values()
        result: dict[str, Any] = value
        return result


@asynccontextmanager
async def socket(gateway: Gateway, payload: dict[str, Any] | None = None, **headers: str) -> AsyncIterator[Socket]:
    url = gateway.url.replace("http://", "ws://") + "/graphql"
    async with connect(url, subprotocols=["graphql-transport-ws"], additional_headers=headers) as connection:  # type: ignore[list-item]
        await connection.send(json.dumps({"type": "connection_init", "payload": payload or {}}))
        ack = json.loads(await asyncio.wait_for(connection.recv(), 10))
        assert ack == {"type": "connection_ack"}
        yield Socket(connection)


async def listening(gateway: Gateway, watches: int = 1) -> None:
    """Until the gateway reads the stream and holds ``watches`` subscriptions: what is written next reaches them."""
    feed: Feed = gateway.app.state.feed
    for _ in range(1000):
        relay = feed.relay
        if relay is not None and relay.reader is not None and relay.reader.reading and feed.subscribers() >= watches:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the gateway never started reading the stream")


def put_workspace(dynamodb: Any, table: str, ws: str) -> None:
    item = {"PK": {"S": f"WS#{ws}"}, "SK": {"S": "META"}, "displayName": {"S": f"Space {ws}"}}
    dynamodb.put_item(TableName=table, Item=item)


def put_ticket(dynamodb: Any, table: str, org: str, ticket: str, title: str) -> None:
    """A ticket of user ``u`` of ``org``, written as another tool would."""
    item = {
        "PK": {"S": f"TICKET#{ticket}"},
        "SK": {"S": f"TICKET#{ticket}"},
        "GSI1PK": {"S": f"ORG#{org}#USER#u"},
        "GSI1SK": {"S": f"TICKET#{ticket}"},
        "title": {"S": title},
    }
    dynamodb.put_item(TableName=table, Item=item)


def put_project(dynamodb: Any, table: str, ws: str, project: str, title: str) -> None:
    item = {"PK": {"S": f"WS#{ws}"}, "SK": {"S": f"PROJ#{project}"}, "title": {"S": title}}
    dynamodb.put_item(TableName=table, Item=item)


def delete_project(dynamodb: Any, table: str, ws: str, project: str) -> None:
    dynamodb.delete_item(TableName=table, Key={"PK": {"S": f"WS#{ws}"}, "SK": {"S": f"PROJ#{project}"}})
