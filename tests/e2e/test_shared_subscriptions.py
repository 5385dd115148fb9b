"""Subscribers of one selection share one resolution of each change; different selections, variables or tenants
never do."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest

from gateway.design import global_ids
from gateway.execution.reader import Reader
from gateway.live import fanout
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
        received: list[list[dict[str, Any]]] = [[] for _ in clients]
        # One change at a time: changes that arrive together share their reads too (see the next test).
        for project, title in (("p-1", "First"), ("p-2", "Second")):
            put_project(dynamodb, fresh_table, "ws-1", project, title)
            for client, messages in zip(clients, received, strict=True):
                messages.append(await client.receive())
    for n, messages in enumerate(received):
        assert [one["id"] for one in messages] == [f"op-{n}", f"op-{n}"]  # each frame names its own operation
        titles = [one["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"] for one in messages]
        assert titles == ["First", "Second"]
        assert messages[0]["payload"]["data"]["workspaceProjectsChanged"]["node"]["workspace"] == {
            "displayName": "Space ws-1"
        }
    assert resolutions == ["Project", "Project"]  # two changes, five subscribers
    assert streaming.sent == {"BatchGetItem": 2}  # the workspace of each change, read once for all


async def test_changes_that_arrive_together_share_their_reads_across_runs(
    streaming: Gateway, dynamodb: Any, fresh_table: str
) -> None:
    """Forty subscribers of their own workspaces, whose items all change in one page of the stream: the workspace
    each event selects is read in one BatchGetItem of forty keys, not forty calls."""
    for n in range(40):
        put_workspace(dynamodb, fresh_table, f"ws-{n}")
    async with socket(streaming) as client:
        for n in range(40):
            await client.subscribe(PROJECTS, op_id=f"op-{n}", ws=f"ws-{n}")
        await listening(streaming, watches=40)
        streaming.sent.clear()
        feed = streaming.app.state.feed
        records = [
            {
                "event": "INSERT",
                "keys": {"PK": {"S": f"WS#ws-{n}"}, "SK": {"S": "PROJ#p-1"}},
                "new": {"PK": {"S": f"WS#ws-{n}"}, "SK": {"S": "PROJ#p-1"}, "title": {"S": f"In {n}"}},
                "position": f"position-{n}",
            }
            for n in range(40)
        ]
        _in_the_gateway(streaming, lambda: [feed.publish(record) for record in records])  # one page, at once
        received = [await client.receive() for _ in range(40)]
    seen = {one["id"]: one["payload"]["data"]["workspaceProjectsChanged"]["node"] for one in received}
    assert seen == {
        f"op-{n}": {"projectId": "p-1", "title": f"In {n}", "workspace": {"displayName": f"Space ws-{n}"}}
        for n in range(40)
    }
    assert streaming.sent == {"BatchGetItem": 1}


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


def _in_the_gateway(gateway: Gateway, call: Callable[[], Any]) -> None:
    """Run ``call`` in the gateway's event loop, in one turn of it (as records read together are delivered)."""

    async def once() -> None:
        call()

    loop = next(iter(gateway.server.server_state.connections)).loop
    asyncio.run_coroutine_threadsafe(once(), loop).result(timeout=10)


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


async def _settled_tasks(gateway: Gateway, expected: int) -> int:
    """The gateway's tasks once the ones that resolve changes have ended (a few moments at most), or what is left."""
    for _ in range(50):
        if (alive := _tasks(gateway)) <= expected:
            return alive
        await asyncio.sleep(0.1)
    return alive


async def test_subscriptions_of_their_own_stand_idle_without_a_task_or_an_execution(
    streaming: Gateway, dynamodb: Any, fresh_table: str
) -> None:
    """A run per subscription (a workspace each) holds its watch and how to resolve a change, not an open GraphQL
    execution with a task: twenty more idle runs are not one task more; a change starts a task that ends with it."""
    for n in range(21):
        put_workspace(dynamodb, fresh_table, f"ws-{n}")
    async with socket(streaming) as client:
        await client.subscribe(PROJECTS, op_id="op-0", ws="ws-0")
        await listening(streaming, watches=1)
        one = _tasks(streaming)
        for n in range(1, 21):
            await client.subscribe(PROJECTS, op_id=f"op-{n}", ws=f"ws-{n}")
        await listening(streaming, watches=21)
        idle = _tasks(streaming)
        put_project(dynamodb, fresh_table, "ws-7", "p-1", "Seventh")
        put_project(dynamodb, fresh_table, "ws-0", "p-2", "First")
        received = [await client.receive() for _ in range(2)]
        after_changes = await _settled_tasks(streaming, one)
        for n in range(1, 21):
            await client.connection.send(json.dumps({"id": f"op-{n}", "type": "complete"}))
        for _ in range(50):  # each completed run lets go of its watch
            if streaming.app.state.feed.subscribers() == 1:
                break
            await asyncio.sleep(0.1)
        assert streaming.app.state.feed.subscribers() == 1
        put_project(dynamodb, fresh_table, "ws-7", "p-3", "Not sent")
        put_project(dynamodb, fresh_table, "ws-0", "p-4", "Second")
        last = await client.receive()
    assert idle == one  # twenty more runs of their own, not one task more
    assert after_changes == one  # what resolved the changes ended with them
    # Two runs: each delivers its own change, in whichever order they resolve.
    assert sorted(
        (one["id"], one["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"]) for one in received
    ) == [("op-0", "First"), ("op-7", "Seventh")]
    assert (last["id"], last["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"]) == ("op-0", "Second")


async def test_an_event_leaves_nothing_for_the_garbage_collector(
    streaming: Gateway, dynamodb: Any, fresh_table: str
) -> None:
    """An event's executor, context and reader are freed when it has been delivered, not at the collector's next
    pass: a burst of events, one per run, would otherwise hold them all until then."""
    put_workspace(dynamodb, fresh_table, "ws-1")
    async with socket(streaming) as client:
        await client.subscribe(PROJECTS, ws="ws-1")
        await listening(streaming)
        gc.collect()
        gc.disable()
        try:
            put_project(dynamodb, fresh_table, "ws-1", "p-1", "First")
            event = await client.event()
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            left = {type(one).__name__ for one in gc.garbage}
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    assert event["node"]["title"] == "First"
    assert not left & {"CompiledExecutor", "Context", "Reader", "ProjectChange"}


async def test_a_standing_run_that_falls_behind_tells_its_subscribers_to_resume(
    streaming: Gateway, dynamodb: Any, fresh_table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More changes than a run may leave unresolved, arriving at once (as a page of the stream does): what it holds
    is delivered, then every subscriber of the run is told FELL_BEHIND; a run of another selection goes on."""
    monkeypatch.setattr(fanout, "WATCH_LIMIT", 3)
    titles_only = "subscription($ws: ID!) { workspaceProjectsChanged(workspaceId: $ws) { node { title } } }"
    put_workspace(dynamodb, fresh_table, "ws-1")
    put_workspace(dynamodb, fresh_table, "ws-2")
    async with socket(streaming) as first, socket(streaming) as second, socket(streaming) as other:
        await first.subscribe(titles_only, ws="ws-1")
        await second.subscribe(titles_only, ws="ws-1")
        await other.subscribe(titles_only, ws="ws-2")
        await listening(streaming, watches=3)
        feed = streaming.app.state.feed
        records = [
            {
                "event": "INSERT",
                "keys": {"PK": {"S": "WS#ws-1"}, "SK": {"S": f"PROJ#p-{n}"}},
                "new": {"PK": {"S": "WS#ws-1"}, "SK": {"S": f"PROJ#p-{n}"}, "title": {"S": f"t-{n}"}},
                "position": f"position-{n}",
            }
            for n in range(5)
        ]
        _in_the_gateway(streaming, lambda: [feed.publish(record) for record in records])
        received = [[await client.receive() for _ in range(4)] for client in (first, second)]
        put_project(dynamodb, fresh_table, "ws-2", "p-9", "Still served")
        still = await other.event()
    for messages in received:
        titles = [one["payload"]["data"]["workspaceProjectsChanged"]["node"]["title"] for one in messages[:3]]
        assert titles == ["t-0", "t-1", "t-2"]  # what the run held, in order
        assert messages[3]["type"] == "error"
        assert [error["extensions"]["code"] for error in messages[3]["payload"]] == ["FELL_BEHIND"]
    assert still["node"] == {"title": "Still served"}


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
