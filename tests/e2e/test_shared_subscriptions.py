"""Subscribers of one selection share one resolution of each change; different selections, variables or tenants
never do."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest

from gateway.design import global_ids
from gateway.execution.reader import Reader
from schema.model import TICKET
from tests.support.gateway import Gateway
from tests.support.identity import Issuer
from tests.support.live import PROJECTS, Socket, listening, put_project, put_ticket, put_workspace, socket


@pytest.fixture
def streaming(gateway_factory: Callable[..., Gateway], fresh_table: str) -> Iterator[Gateway]:
    with gateway_factory(fresh_table) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entity of each event resolution: a spy around the reader's real walk of an event's node."""
    seen: list[str] = []
    real = Reader.expand_field

    async def spy(self: Reader, entity: Any, *arguments: Any, **options: Any) -> Any:
        seen.append(entity.name)
        return await real(self, entity, *arguments, **options)

    monkeypatch.setattr(Reader, "expand_field", spy)
    return seen


@asynccontextmanager
async def sockets(gateway: Gateway, count: int, payload: dict[str, Any] | None = None) -> AsyncIterator[list[Socket]]:
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(socket(gateway, payload)) for _ in range(count)]


async def test_subscribers_of_one_selection_cost_one_resolution_per_change(
    streaming: Gateway, dynamodb: Any, fresh_table: str, resolutions: list[str]
) -> None:
    put_workspace(dynamodb, fresh_table, "ws-1")
    async with sockets(streaming, 5) as clients:
        for n, client in enumerate(clients):
            await client.subscribe(PROJECTS, op_id=f"op-{n}", ws="ws-1")
        await listening(streaming, watches=5)
        streaming.sent.clear()
        put_project(dynamodb, fresh_table, "ws-1", "p-1", "First")
        put_project(dynamodb, fresh_table, "ws-1", "p-2", "Second")
        received = [[await client.receive() for _ in range(2)] for client in clients]
    for n, messages in enumerate(received):
        assert [one["id"] for one in messages] == [f"op-{n}", f"op-{n}"]  # each frame names its own operation
        titles = [one["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"] for one in messages]
        assert titles == ["First", "Second"]
        assert messages[0]["payload"]["data"]["workspaceProjectsChanged"]["node"]["workspace"] == {
            "displayName": "Space ws-1"
        }
    assert resolutions == ["Project", "Project"]  # two changes, five subscribers
    assert streaming.sent == {"BatchGetItem": 2}  # the workspace of each change, read once for all


async def test_distinct_selections_each_cost_a_resolution(
    streaming: Gateway, dynamodb: Any, fresh_table: str, resolutions: list[str]
) -> None:
    put_workspace(dynamodb, fresh_table, "ws-1")
    async with sockets(streaming, 3) as clients:
        for n, client in enumerate(clients):
            query = PROJECTS.replace("kind position", f"kind position at{n}: position")
            await client.subscribe(query, ws="ws-1")
        await listening(streaming, watches=3)
        put_project(dynamodb, fresh_table, "ws-1", "p-1", "First")
        events = [await client.event() for client in clients]
    assert [event[f"at{n}"] == event["position"] for n, event in enumerate(events)] == [True, True, True]
    assert resolutions == ["Project"] * 3


async def test_subscribers_with_different_variables_do_not_share(
    streaming: Gateway, dynamodb: Any, fresh_table: str, resolutions: list[str]
) -> None:
    for ws in ("ws-1", "ws-2"):
        put_workspace(dynamodb, fresh_table, ws)
    async with sockets(streaming, 2) as (first, second):
        await first.subscribe(PROJECTS, ws="ws-1")
        await second.subscribe(PROJECTS, ws="ws-2")
        await listening(streaming, watches=2)
        put_project(dynamodb, fresh_table, "ws-1", "p-1", "In one")
        put_project(dynamodb, fresh_table, "ws-2", "p-2", "In two")
        seen_by_first, seen_by_second = await first.event(), await second.event()
    assert seen_by_first["node"]["title"] == "In one"
    assert seen_by_second["node"]["title"] == "In two"
    assert resolutions == ["Project", "Project"]


async def test_two_tenants_with_one_document_never_share(
    gateway_factory: Callable[..., Gateway], dynamodb: Any, fresh_table: str, issuer: Issuer
) -> None:
    # A ticket's table key names no tenant: both may subscribe to it by id, and only its own organisation sees it.
    query = "subscription($id: ID!) { nodeChanged(id: $id) { kind node { ... on Ticket { title } } } }"
    o1_ticket, o2_ticket = (global_ids.encode(TICKET, {"ticketId": one}) for one in ("t-o1", "t-o2"))
    alice = {"Authorization": f"Bearer {issuer.token('alice', {'organizations': ['o1']})}"}
    bob = {"Authorization": f"Bearer {issuer.token('bob', {'organizations': ['o2']})}"}
    with gateway_factory(fresh_table, **issuer.settings()) as guarded:
        async with socket(guarded, alice) as for_alice, socket(guarded, bob) as for_bob:
            await for_alice.subscribe(query, id=o1_ticket)
            await for_bob.subscribe(query, id=o1_ticket)  # the same document and variables as alice's
            await for_bob.subscribe(query, op_id="2", id=o2_ticket)
            await listening(guarded, watches=3)
            put_ticket(dynamodb, fresh_table, "o1", "t-o1", "Alice's")
            put_ticket(dynamodb, fresh_table, "o2", "t-o2", "Bob's")
            seen_by_alice = await for_alice.receive()
            seen_by_bob = await for_bob.receive()
    assert seen_by_alice["payload"]["data"]["nodeChanged"]["node"] == {"title": "Alice's"}
    assert seen_by_bob["id"] == "2"  # alice's ticket never reached bob, though their subscriptions were equal
    assert seen_by_bob["payload"]["data"]["nodeChanged"]["node"] == {"title": "Bob's"}


def _tasks(gateway: Gateway) -> int:
    """The tasks alive in the gateway's event loop, counted in that loop."""

    async def count() -> int:
        return len(asyncio.all_tasks())

    loop = next(iter(gateway.server.server_state.connections)).loop
    return asyncio.run_coroutine_threadsafe(count(), loop).result(timeout=10)


async def test_an_idle_subscription_holds_no_task_of_its_own(
    streaming: Gateway, dynamodb: Any, fresh_table: str
) -> None:
    put_workspace(dynamodb, fresh_table, "ws-1")
    async with socket(streaming) as client:
        await client.subscribe(PROJECTS, op_id="op-0", ws="ws-1")
        await listening(streaming, watches=1)
        one = _tasks(streaming)
        for n in range(1, 21):
            await client.subscribe(PROJECTS, op_id=f"op-{n}", ws="ws-1")
        await listening(streaming, watches=21)
        assert _tasks(streaming) == one  # twenty more subscriptions of the run, not one task more
        put_project(dynamodb, fresh_table, "ws-1", "p-1", "First")
        received = [await client.receive() for _ in range(21)]
        for n in range(1, 21):
            await client.connection.send(json.dumps({"id": f"op-{n}", "type": "complete"}))
        put_project(dynamodb, fresh_table, "ws-1", "p-2", "Second")
        after_complete = await client.receive()
        assert streaming.app.state.feed.subscribers() == 1
    assert sorted(message["id"] for message in received) == sorted(f"op-{n}" for n in range(21))
    assert {message["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"] for message in received} == {
        "First"
    }
    assert after_complete["id"] == "op-0"  # the completed ones were sent nothing more
    assert after_complete["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"] == "Second"


@pytest.mark.parametrize("compression", [False, True])
async def test_compression_is_negotiated_only_when_the_settings_ask(
    gateway_factory: Callable[..., Gateway], fresh_table: str, compression: bool
) -> None:
    with gateway_factory(fresh_table, ws_compression=compression) as gateway:
        async with socket(gateway) as client:  # the client offers permessage-deflate, as browsers do
            await client.connection.send(json.dumps({"type": "ping"}))
            pong = await client.receive()
            extensions = [type(one).__name__ for one in client.connection.protocol.extensions]
    assert pong == {"type": "pong"}
    assert extensions == (["PerMessageDeflate"] if compression else [])
