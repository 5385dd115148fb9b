"""Subscriptions fed by the table's stream: writes made with plain boto3 reach subscribers over WebSocket and SSE."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket as socketlib
import sys
import time
from collections.abc import Callable, Iterator
from subprocess import DEVNULL, PIPE
from typing import Any
from urllib.parse import urlencode

import httpx
import psutil
import pytest
import uvicorn
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from benchmarks import servers
from gateway.config import Settings
from gateway.design import global_ids
from gateway.dynamo import streams
from gateway.errors import FellBehind
from gateway.live.fanout import WATCH_LIMIT, Change, Feed, Watch
from gateway.server.app import create_app
from gateway.server.serving import websocket_options
from schema.model import TICKET, WORKSPACE
from tests.support.browser import LAUNCH
from tests.support.gateway import Gateway
from tests.support.identity import Issuer
from tests.support.live import (
    PROJECTS,
    Socket,
    delete_project,
    listening,
    put_project,
    put_ticket,
    put_workspace,
    socket,
)
from tests.support.paths import ROOT


@pytest.fixture
def streamed(fresh_table: str) -> str:
    """A table made as ``create-table`` makes it: with its stream."""
    return fresh_table


@pytest.fixture
def streaming(gateway_factory: Callable[..., Gateway], streamed: str) -> Iterator[Gateway]:
    with gateway_factory(streamed) as gateway:
        yield gateway


def test_create_table_enables_the_stream_with_both_images(dynamodb: Any, streamed: str) -> None:
    spec = dynamodb.describe_table(TableName=streamed)["Table"]["StreamSpecification"]
    assert spec == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


async def test_a_plain_boto3_write_reaches_a_subscriber(streaming: Gateway, dynamodb: Any, streamed: str) -> None:
    put_workspace(dynamodb, streamed, "ws-1")
    async with socket(streaming) as client:
        await client.subscribe(PROJECTS, ws="ws-1")
        await listening(streaming)
        put_project(dynamodb, streamed, "ws-1", "p-1", "First")
        put_project(dynamodb, streamed, "ws-2", "p-9", "Elsewhere")  # another workspace: not delivered
        put_project(dynamodb, streamed, "ws-1", "p-1", "Renamed")
        delete_project(dynamodb, streamed, "ws-1", "p-1")
        events = [await client.event() for _ in range(3)]
    assert [(e["kind"], e["node"]["title"]) for e in events] == [
        ("CREATED", "First"),
        ("UPDATED", "Renamed"),
        ("DELETED", "Renamed"),  # as it was
    ]
    # The related workspace is read through the normal reader, like a query's.
    assert {e["node"]["workspace"]["displayName"] for e in events} == {"Space ws-1"}
    assert len({e["position"] for e in events}) == 3


async def test_a_changed_object_is_followed_by_its_global_id(streaming: Gateway, dynamodb: Any, streamed: str) -> None:
    query = "subscription($id: ID!) { nodeChanged(id: $id) { kind node { ... on Workspace { displayName } } } }"
    async with socket(streaming) as client:
        await client.subscribe(query, id=global_ids.encode(WORKSPACE, {"workspaceId": "ws-1"}))
        await listening(streaming)
        put_workspace(dynamodb, streamed, "ws-1")
        put_project(dynamodb, streamed, "ws-1", "p-1", "A member, not the workspace")
        dynamodb.update_item(
            TableName=streamed,
            Key={"PK": {"S": "WS#ws-1"}, "SK": {"S": "META"}},
            UpdateExpression="SET displayName = :name",
            ExpressionAttributeValues={":name": {"S": "Renamed"}},
        )
        events = [await client.event() for _ in range(2)]
    assert events == [
        {"kind": "CREATED", "node": {"displayName": "Space ws-1"}},
        {"kind": "UPDATED", "node": {"displayName": "Renamed"}},
    ]
    assert streaming.query('{ workspace(workspaceId: "ws-1") { id } }')["data"]["workspace"]["id"] == global_ids.encode(
        WORKSPACE, {"workspaceId": "ws-1"}
    )


async def test_resuming_from_the_last_position_loses_nothing(streaming: Gateway, dynamodb: Any, streamed: str) -> None:
    put_workspace(dynamodb, streamed, "ws-1")
    async with socket(streaming) as client:
        await client.subscribe(PROJECTS, ws="ws-1")
        await listening(streaming)
        put_project(dynamodb, streamed, "ws-1", "p-1", "v1")
        last = (await client.event())["position"]
    # Disconnected: these happen while nobody listens.
    for title in ("v2", "v3"):
        put_project(dynamodb, streamed, "ws-1", "p-1", title)
    put_project(dynamodb, streamed, "ws-1", "p-2", "other")
    delete_project(dynamodb, streamed, "ws-1", "p-1")
    async with socket(streaming) as client:
        await client.subscribe(PROJECTS, ws="ws-1", after=last)
        events = [await client.event() for _ in range(4)]
        put_project(dynamodb, streamed, "ws-1", "p-3", "live again")
        live = await client.event()
    assert [(e["kind"], e["node"]["projectId"], e["node"]["title"]) for e in events] == [
        ("UPDATED", "p-1", "v2"),
        ("UPDATED", "p-1", "v3"),
        ("CREATED", "p-2", "other"),
        ("DELETED", "p-1", "v3"),
    ]
    assert live["node"]["title"] == "live again"


async def test_a_position_the_stream_no_longer_holds_is_refused_plainly(streaming: Gateway) -> None:
    gone = streams.position({"shardId-00000001000000000000-deadbeef": "1" * 21}, 1_700_000_000)
    async with socket(streaming) as client:
        await client.subscribe(PROJECTS, ws="ws-1", after=gone)
        expired = await client.receive()
        await client.subscribe(PROJECTS, op_id="2", ws="ws-1", after="not a position")
        malformed = await client.receive()
    assert expired["type"] == "error"
    assert expired["payload"][0]["extensions"]["code"] == "POSITION_EXPIRED"
    assert "no longer holds" in expired["payload"][0]["message"]
    assert malformed["type"] == "error"
    assert malformed["payload"][0]["extensions"]["code"] == "BAD_USER_INPUT"


async def test_a_subscription_over_server_sent_events(streaming: Gateway, dynamodb: Any, streamed: str) -> None:
    put_workspace(dynamodb, streamed, "ws-1")
    async with httpx.AsyncClient(base_url=streaming.url, timeout=20) as http:
        body = {"query": PROJECTS, "variables": {"ws": "ws-1"}}
        headers = {"Accept": "text/event-stream"}
        async with http.stream("POST", "/graphql", json=body, headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            await listening(streaming)
            put_project(dynamodb, streamed, "ws-1", "p-1", "Over SSE")
            lines = response.aiter_lines()
            event = await anext(line async for line in lines if line.startswith("event:"))
            data = await anext(lines)
    assert event == "event: next"
    payload = json.loads(data.removeprefix("data: "))
    assert payload["data"]["workspaceProjectsChanged"]["node"]["title"] == "Over SSE"


async def test_a_query_runs_over_the_socket_too(streaming: Gateway, dynamodb: Any, streamed: str) -> None:
    put_workspace(dynamodb, streamed, "ws-1")
    async with socket(streaming) as client:
        await client.subscribe('{ workspace(workspaceId: "ws-1") { displayName } }')
        answer = await client.event()
        done = await client.receive()
    assert answer == {"displayName": "Space ws-1"}
    assert done == {"id": "1", "type": "complete"}


async def test_a_costly_selection_is_refused_as_a_query_would_be(
    gateway_factory: Callable[..., Gateway], streamed: str
) -> None:
    query = """subscription { studentCoursesChanged(studentId: "s") {
      node { course { students(first: 100) { nodes { courses(first: 100) { nodes { title } } } } } } } }"""
    with gateway_factory(streamed, max_calls=5) as gateway:
        async with socket(gateway) as client:
            await client.subscribe(query)
            refused = await client.receive()
    assert refused["type"] == "error"
    assert refused["payload"][0]["extensions"]["code"] == "COST_LIMIT"


async def test_events_are_resolved_in_one_batch_across_subscribers(
    streaming: Gateway, dynamodb: Any, streamed: str
) -> None:
    dynamodb.put_item(TableName=streamed, Item={"PK": {"S": "CRS#c-1"}, "SK": {"S": "METADATA"}, "title": {"S": "Go"}})
    query = """subscription { studentCoursesChanged(studentId: "s-1") {
      kind node { grade course { title } student { studentId } } } }"""
    async with socket(streaming) as a, socket(streaming) as b, socket(streaming) as c:
        for client in (a, b, c):
            await client.subscribe(query)
        await listening(streaming, watches=3)
        streaming.sent.clear()
        enrolment = {
            "PK": {"S": "STU#s-1"},
            "SK": {"S": "ENROLL#CRS#c-1"},
            "GSI1PK": {"S": "CRS#c-1"},
            "GSI1SK": {"S": "STU#s-1"},
            "grade": {"S": "A"},
        }
        dynamodb.put_item(TableName=streamed, Item=enrolment)
        events = [await client.event() for client in (a, b, c)]
    assert all(e["node"]["course"] == {"title": "Go"} for e in events)
    assert all(e["node"]["student"] is None for e in events)  # no such student item: null, as for a query
    # The course and the student of the enrolment, for three subscribers: one BatchGetItem.
    assert streaming.sent == {"BatchGetItem": 1}


# --- credentials and tenancy --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


@pytest.fixture
def guarded(gateway_factory: Callable[..., Gateway], streamed: str, issuer: Issuer) -> Iterator[Gateway]:
    with gateway_factory(streamed, **issuer.settings()) as gateway:
        yield gateway


def bearer(issuer: Issuer, subject: str, workspaces: list[str], **claims: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {issuer.token(subject, {'workspaces': workspaces}, **claims)}"}


async def test_another_tenants_subscriber_receives_nothing(
    guarded: Gateway, dynamodb: Any, streamed: str, issuer: Issuer
) -> None:
    for ws in ("ws-a", "ws-b"):
        put_workspace(dynamodb, streamed, ws)
    async with (
        socket(guarded, bearer(issuer, "alice", ["ws-a"])) as alice,
        socket(guarded, headers := bearer(issuer, "bob", ["ws-b"])) as bob,
    ):
        await bob.subscribe(PROJECTS, ws="ws-a")
        refused = await bob.receive()
        await alice.subscribe(PROJECTS, ws="ws-a")
        await bob.subscribe(PROJECTS, op_id="2", ws="ws-b")
        await listening(guarded, watches=2)
        put_project(dynamodb, streamed, "ws-a", "p-1", "Alice's")
        put_project(dynamodb, streamed, "ws-b", "p-2", "Bob's")
        seen_by_alice = await alice.event()
        seen_by_bob = await bob.event()
    assert headers  # bob authenticated by the upgrade request's headers, alice by connection_init
    assert refused["type"] == "error" and refused["id"] == "1"
    assert refused["payload"][0]["extensions"]["code"] == "FORBIDDEN"
    assert seen_by_alice["node"]["title"] == "Alice's"
    assert seen_by_bob["node"]["title"] == "Bob's"


async def test_each_change_passes_the_guard_of_each_subscriber(
    guarded: Gateway, dynamodb: Any, streamed: str, issuer: Issuer
) -> None:
    # A ticket's table key names no tenant: anyone may subscribe to it by id, and each change is judged on arrival.
    query = "subscription($id: ID!) { nodeChanged(id: $id) { kind node { ... on Ticket { title } } } }"
    theirs, mine = (global_ids.encode(TICKET, {"ticketId": one}) for one in ("t-o1", "t-o2"))
    bob_token = issuer.token("bob", {"organizations": ["o2"]})
    async with socket(guarded, {"Authorization": f"Bearer {bob_token}"}) as bob:
        await bob.subscribe(query, id=theirs)
        await bob.subscribe(query, op_id="2", id=mine)
        await listening(guarded, watches=2)
        put_ticket(dynamodb, streamed, "o1", "t-o1", "Not for bob")
        put_ticket(dynamodb, streamed, "o2", "t-o2", "Bob's")
        first = await bob.receive()
    assert first["id"] == "2"
    assert first["payload"]["data"]["nodeChanged"]["node"] == {"title": "Bob's"}


async def test_credentials_are_checked_before_any_subscription(guarded: Gateway, issuer: Issuer) -> None:
    url = guarded.url.replace("http://", "ws://") + "/graphql"
    async with connect(url, subprotocols=["graphql-transport-ws"]) as connection:  # type: ignore[list-item]
        await connection.send(json.dumps({"type": "connection_init", "payload": {"Authorization": "Bearer forged"}}))
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(connection.recv(), 10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403


async def test_an_expired_token_ends_the_subscription_with_a_coded_error(
    guarded: Gateway, dynamodb: Any, streamed: str, issuer: Issuer
) -> None:
    expires = int(time.time()) + 2
    async with socket(guarded, bearer(issuer, "alice", ["ws-a"], exp=expires)) as alice:
        await alice.subscribe(PROJECTS, ws="ws-a")
        ended = await alice.receive()
    assert ended["type"] == "error"
    assert ended["payload"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert time.time() >= expires


# --- shutdown -----------------------------------------------------------------------------------------------------


async def test_shutdown_ends_each_subscription_with_complete(endpoint: str, dynamodb: Any, streamed: str) -> None:
    with socketlib.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = ["-m", "gateway", "serve", "--endpoint-url", endpoint, "--table", streamed, "--port", str(port)]
    server = await asyncio.create_subprocess_exec(
        sys.executable, *command, "--auth-open", env={**os.environ, "PYTHONPATH": os.getcwd()}, stderr=DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, timeout=20) as http:
            for _ in range(300):
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get("/healthz")).status_code == 200:
                        break
                await asyncio.sleep(0.2)
            streaming = Gateway.__new__(Gateway)
            streaming.url = url
            body = {"query": PROJECTS, "variables": {"ws": "ws-1"}}
            async with (
                socket(streaming) as client,
                http.stream("POST", "/graphql", json=body, headers={"Accept": "text/event-stream"}) as events,
            ):
                await client.subscribe(PROJECTS, ws="ws-1")
                lines = events.aiter_lines()
                # Written until both subscriptions see a change: the server reads the stream, both are running.
                for n in range(100):
                    put_project(dynamodb, streamed, "ws-1", f"p-{n}", "warming up")
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(client.event(), 0.5)
                        break
                assert await anext(line async for line in lines if line.startswith("event:")) == "event: next"
                server.send_signal(signal.SIGTERM)
                ws_messages = []
                with contextlib.suppress(ConnectionClosed):
                    while True:
                        ws_messages.append(await client.receive())
                sse_events = [line async for line in lines if line.startswith("event:")]
        assert await asyncio.wait_for(server.wait(), 30) == 0
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    assert ws_messages[-1] == {"id": "1", "type": "complete"}
    assert sse_events[-1] == "event: complete"


async def test_shutdown_waits_for_subscriptions_that_end_late(
    endpoint: str, dynamodb: Any, streamed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server closes its sockets only once their subscriptions have sent their ``complete``, however late the
    subscriptions end after the signal (here half a second: the feed closes them late)."""
    closing = Feed.close

    def late(feed: Feed) -> None:
        asyncio.get_running_loop().call_later(0.5, closing, feed)

    monkeypatch.setattr(Feed, "close", late)
    settings = Settings.from_env({}, table=streamed, endpoint_url=endpoint, cursor_secret="test-secret", auth_open=True)
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=0, log_level="warning", **websocket_options(settings)
    )
    server = uvicorn.Server(config)
    # The server raises the signal again once it has stopped, for whoever runs it: here, the test.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not serving.done(), serving
            await asyncio.sleep(0.02)
        streaming = Gateway.__new__(Gateway)
        streaming.url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        async with socket(streaming) as client:
            await client.subscribe(PROJECTS, ws="ws-1")
            for n in range(100):  # until the subscription sees a change: it is running
                put_project(dynamodb, streamed, "ws-1", f"p-{n}", "warming up")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(client.event(), 0.5)
                    break
            signal.raise_signal(signal.SIGTERM)
            messages = []
            with contextlib.suppress(ConnectionClosed):
                while True:
                    messages.append(await client.receive())
        await asyncio.wait_for(serving, 30)
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 30)
        signal.signal(signal.SIGTERM, previous)
    assert messages[-1] == {"id": "1", "type": "complete"}


# --- GraphiQL -----------------------------------------------------------------------------------------------------

# Opens GraphiQL with a subscription in its URL, starts it, and prints the result pane once a change has arrived.
_GRAPHIQL = (
    """
const { chromium } = require("playwright-core");
const [url, expected] = process.argv.slice(1);
(async () => {"""
    + LAUNCH
    + """  const seen = { problems: [], sockets: [] };
  try {
    const page = await browser.newPage();
    page.on("pageerror", (error) => seen.problems.push("page error: " + error.message));
    page.on("console", (message) => {
      if (message.type() === "error") seen.problems.push("console: " + message.text());
    });
    page.on("websocket", (socket) => seen.sockets.push(socket.url()));
    await page.goto(url, { waitUntil: "load" });
    await page.locator(".graphiql-execute-button").click();
    process.stdout.write("started\\n");
    const result = page.locator(".result-window");
    await result.getByText(expected).first().waitFor({ timeout: 60000 });
    seen.shown = await result.innerText();
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(seen) + "\\n");
})();
"""
)


async def test_graphiql_shows_a_subscription_as_changes_arrive(
    streaming: Gateway, dynamodb: Any, streamed: str
) -> None:
    chromium, node = shutil.which("chromium"), shutil.which("node")
    if chromium is None or node is None:
        pytest.skip("Chromium and Node.js drive GraphiQL here")
    put_workspace(dynamodb, streamed, "ws-1")
    query = 'subscription { workspaceProjectsChanged(workspaceId: "ws-1") { kind node { title } } }'
    driver = await asyncio.create_subprocess_exec(
        node,
        "-e",
        _GRAPHIQL,
        f"{streaming.url}/graphql?{urlencode({'q': query})}",
        "Shown in GraphiQL",
        cwd=ROOT,
        env={**os.environ, "CHROMIUM": chromium},
        stdout=PIPE,
    )
    assert driver.stdout is not None
    assert await asyncio.wait_for(driver.stdout.readline(), 60) == b"started\n"
    await listening(streaming)
    put_project(dynamodb, streamed, "ws-1", "p-1", "Shown in GraphiQL")
    output, _ = await asyncio.wait_for(driver.communicate(), 90)
    seen = json.loads(output)
    assert seen["problems"] == []
    assert seen["sockets"] == [streaming.url.replace("http://", "ws://") + "/graphql"]
    assert '"kind": "CREATED"' in seen["shown"]


# --- several workers ----------------------------------------------------------------------------------------------


async def test_with_two_workers_one_reads_the_stream_and_every_subscriber_is_served(
    endpoint: str, dynamodb: Any, streamed: str
) -> None:
    port = servers.free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEGRAPH_")}
    command = servers.gateway_command(endpoint, streamed, port, workers=2)
    put_workspace(dynamodb, streamed, "ws-1")
    with servers.serve(command, port, {**env, "TABLEGRAPH_AUTH_OPEN": "1"}) as server:
        await asyncio.to_thread(server.wait_until_ready)
        for _ in range(300):  # both workers up
            workers = _workers(server.process.pid)
            if len(workers) == 2 and all(_serves(pid, port) for pid in workers):
                break
            await asyncio.sleep(0.1)
        target = Gateway.__new__(Gateway)
        target.url = server.url
        async with contextlib.AsyncExitStack() as stack:
            # New connections land on either worker: opened until each worker serves some.
            clients: list[Socket] = []
            while len(clients) < 40 and (len(clients) < 4 or len(_serving(workers, port)) < 2):
                clients.append(await stack.enter_async_context(socket(target)))
                await clients[-1].subscribe(PROJECTS, ws="ws-1")
            assert len(_serving(workers, port)) == 2
            for n in range(100):
                put_project(dynamodb, streamed, "ws-1", f"p-{n}", "to all")
                try:
                    await asyncio.wait_for(asyncio.gather(*(client.event() for client in clients)), 1.0)
                    break
                except TimeoutError:
                    continue
            else:
                raise AssertionError("not every subscriber received a change")
            _, listening_on, following = _lease_sockets(dynamodb, streamed, server.process.pid)
    # One worker holds the lease and reads the stream; the other receives its records over the local socket.
    assert len(workers) == 2
    assert len(listening_on) == 1 and len(following) == 1 and listening_on != following


def _lease_sockets(dynamodb: Any, table: str, server: int) -> tuple[list[int], set[int], set[int]]:
    """The worker processes, those listening on the lease's address, and those connected to it."""
    key = {"PK": {"S": "TABLEGRAPH#STREAM-LEASE"}, "SK": {"S": "LEASE"}}
    item = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    lease_port = int(item["address"]["S"].rpartition(":")[2]) if item else -1
    workers = _workers(server)
    listening_on, following = set(), set()
    for worker in workers:
        for connection in psutil.Process(worker).net_connections("tcp"):
            if connection.status == psutil.CONN_LISTEN and connection.laddr.port == lease_port:
                listening_on.add(worker)
            if connection.raddr and connection.raddr.port == lease_port:
                following.add(worker)
    return workers, listening_on, following


def _workers(server: int) -> list[int]:
    children = psutil.Process(server).children()
    return [child.pid for child in children if "spawn_main" in " ".join(child.cmdline())]


def _serves(worker: int, port: int) -> bool:
    """Whether the worker listens on the server's port (it has started)."""
    return any(
        one.status == psutil.CONN_LISTEN and one.laddr.port == port
        for one in psutil.Process(worker).net_connections("tcp")
    )


def _serving(workers: list[int], port: int) -> set[int]:
    """The workers that hold a client's connection on ``port``."""
    return {
        pid
        for pid in workers
        for connection in psutil.Process(pid).net_connections("tcp")
        if connection.status == psutil.CONN_ESTABLISHED and connection.laddr.port == port
    }


# --- refusals -----------------------------------------------------------------------------------------------------


async def test_a_socket_without_the_protocol_or_an_event_stream_without_credentials_is_refused(
    guarded: Gateway, issuer: Issuer
) -> None:
    url = guarded.url.replace("http://", "ws://") + "/graphql"
    with pytest.raises(InvalidStatus) as refused:
        async with connect(url, subprotocols=["graphql-ws"]):  # type: ignore[list-item]  # the legacy protocol
            pass
    assert refused.value.response.status_code == 403
    async with httpx.AsyncClient(base_url=guarded.url, timeout=20) as http:
        body = {"query": PROJECTS, "variables": {"ws": "ws-a"}}
        answer = await http.post("/graphql", json=body, headers={"Accept": "text/event-stream"})
        over_http = await http.post(
            "/graphql", json=body, headers={"Authorization": bearer(issuer, "alice", ["ws-a"])["Authorization"]}
        )
    assert answer.status_code == 401
    assert answer.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert over_http.json()["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert "text/event-stream" in over_http.json()["errors"][0]["message"]


async def test_a_socket_anywhere_but_at_graphql_is_refused(streaming: Gateway) -> None:
    base = streaming.url.replace("http://", "ws://")
    for path in ("/", "/graphql/", "/graphql/x", "/healthz"):
        with pytest.raises(InvalidStatus) as refused:
            async with connect(base + path, subprotocols=["graphql-transport-ws"]):  # type: ignore[list-item]
                pass
        assert refused.value.response.status_code == 403, path
    served = base + "/graphql?with=a-query"  # a query string is no other path
    async with connect(served, subprotocols=["graphql-transport-ws"]) as ws:  # type: ignore[list-item]
        await ws.send(json.dumps({"type": "connection_init"}))
        assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "connection_ack"}


def test_a_subscriber_that_falls_behind_is_told_to_resume() -> None:
    async def run() -> list[str]:
        watch = Watch([("node", "Workspace", "WS#ws-1", "META")])
        change = Change("UPDATED", WORKSPACE, {"workspaceId": "ws-1"}, {}, "p", None)  # type: ignore[arg-type]
        for _ in range(WATCH_LIMIT + 1):
            watch.put(change)
        received = []
        with pytest.raises(FellBehind):
            async for one in watch:
                received.append(one.position)
        return received

    assert len(asyncio.run(run())) == WATCH_LIMIT  # what it had, then the error
