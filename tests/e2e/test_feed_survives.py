"""The live feed survives whatever a record holds, and a crash of its relay: every other subscriber keeps receiving."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gateway.live.fanout import Feed
from tests.support.gateway import Gateway
from tests.support.live import PROJECTS, listening, put_project, put_workspace, socket

LEASE = {"PK": {"S": "TABLEGRAPH#STREAM-LEASE"}, "SK": {"S": "LEASE"}}


@pytest.fixture
def feeding(gateway_factory: Callable[..., Gateway], fresh_table: str) -> Iterator[Gateway]:
    with gateway_factory(fresh_table) as gateway:
        yield gateway


def put_raw_project(dynamodb: Any, table: str, ws: str, project: str, title: dict[str, Any]) -> None:
    """A project written by another tool: its title as given, whatever DynamoDB accepts."""
    item = {"PK": {"S": f"WS#{ws}"}, "SK": {"S": f"PROJ#{project}"}, "title": title}
    dynamodb.put_item(TableName=table, Item=item)


def codes(message: dict[str, Any]) -> set[str]:
    return {error["extensions"]["code"] for error in message["payload"].get("errors", [])}


async def test_poison_records_reach_their_subscriber_as_errors_and_stop_nobody(
    feeding: Gateway, dynamodb: Any, fresh_table: str
) -> None:
    put_workspace(dynamodb, fresh_table, "ws-1")
    put_workspace(dynamodb, fresh_table, "ws-2")
    async with socket(feeding) as poisoned, socket(feeding) as other:
        await poisoned.subscribe(PROJECTS, ws="ws-1")
        await other.subscribe(PROJECTS, ws="ws-2")
        await listening(feeding, watches=2)
        put_project(dynamodb, fresh_table, "ws-1", "p-1", "before")
        put_raw_project(dynamodb, fresh_table, "ws-1", "p-2", {"S": "lone \ud800 surrogate"})
        put_project(dynamodb, fresh_table, "ws-2", "q-1", "other one")
        put_raw_project(dynamodb, fresh_table, "ws-1", "p-3", {"N": "5"})
        put_raw_project(dynamodb, fresh_table, "ws-1", "p-4", {"M": {"a": {"S": "b\udc00"}}})
        put_raw_project(dynamodb, fresh_table, "ws-1", "p-5", {"S": "x" * 390_000})
        put_project(dynamodb, fresh_table, "ws-1", "p-6", "after")
        put_project(dynamodb, fresh_table, "ws-2", "q-2", "other two")
        seen = [await poisoned.receive() for _ in range(6)]
        theirs = [await other.event() for _ in range(2)]
    assert [m["type"] for m in seen] == ["next"] * 6, seen
    events = [m["payload"]["data"]["workspaceProjectsChanged"] for m in seen]
    assert [e["node"]["projectId"] for e in events] == ["p-1", "p-2", "p-3", "p-4", "p-5", "p-6"]
    # Text that is not valid Unicode, at the top or deep in a map: the event comes, with the error that says why.
    assert [e["node"]["title"] for e in events[1:4]] == [None, None, None]
    # A number where text was declared is a DATA_MISMATCH at its field, as a query answers it.
    assert [codes(m) for m in seen[1:4]] == [{"UNREADABLE_ITEM"}, {"DATA_MISMATCH"}, {"UNREADABLE_ITEM"}]
    assert events[4]["node"]["title"] == "x" * 390_000
    assert events[5]["node"]["title"] == "after"
    assert [e["node"]["title"] for e in theirs] == ["other one", "other two"]
    positions = [e["position"] for e in events]
    assert len(set(positions)) == 6


async def test_a_crashed_relay_is_restarted_from_its_checkpoint_and_reported(
    feeding: Gateway, dynamodb: Any, fresh_table: str, caplog: pytest.LogCaptureFixture
) -> None:
    feed: Feed = feeding.app.state.feed
    put_workspace(dynamodb, fresh_table, "ws-1")
    async with socket(feeding) as client:
        await client.subscribe(PROJECTS, ws="ws-1")
        await listening(feeding)
        assert feeding.http.get("/readyz").status_code == 200
        put_project(dynamodb, fresh_table, "ws-1", "p-1", "before")
        assert (await client.event())["node"]["title"] == "before"
        # Another tool overwrites the lease with an item the relay cannot read: it crashes when it next reads it.
        with caplog.at_level(logging.ERROR, logger="gateway.live.supervise"):
            dynamodb.put_item(TableName=fresh_table, Item={**LEASE, "until": {"N": str(2**53)}})
            for _ in range(500):
                if feed.down:
                    break
                await asyncio.sleep(0.02)
            assert feed.down
            ready = feeding.http.get("/readyz")
            assert ready.status_code == 503
            assert ready.json()["feed"] == "restarting"
            # Written while the relay is down: delivered once it is back, from where it stopped.
            put_project(dynamodb, fresh_table, "ws-1", "p-2", "while down")
            put_project(dynamodb, fresh_table, "ws-1", "p-3", "while down too")
            dynamodb.delete_item(TableName=fresh_table, Key=LEASE)
            events = [await client.event() for _ in range(2)]
        crash = feed.supervised.last_crash if feed.supervised else None
    assert [e["node"]["title"] for e in events] == ["while down", "while down too"]
    assert crash is not None
    assert any(crash in record.getMessage() and record.exc_info for record in caplog.records)
    metrics = feeding.http.get("/metrics").text
    assert 'tablegraph_task_crashes_total{task="stream-relay"}' in metrics
    for _ in range(500):
        if not feed.down:
            break
        await asyncio.sleep(0.02)
    assert feeding.http.get("/readyz").status_code == 200


async def test_a_lone_surrogate_is_refused_over_every_transport(feeding: Gateway, fresh_table: str) -> None:
    mutation = 'mutation($t: String!) { createProject(input: {workspaceId: "ws-1", title: $t}) { __typename } }'
    raw = json.dumps({"query": mutation, "variables": {"t": "lone \ud800"}})
    over_http = feeding.http.post("/graphql", content=raw, headers={"Content-Type": "application/json"})
    over_sse = feeding.http.post(
        "/graphql", content=raw, headers={"Content-Type": "application/json", "Accept": "text/event-stream"}
    )
    async with socket(feeding) as client:
        await client.connection.send(json.dumps({"id": "1", "type": "subscribe", "payload": json.loads(raw)}))
        refused = await client.receive()
    assert over_http.status_code == 400
    assert over_http.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert over_sse.status_code == 400
    assert over_sse.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert refused["type"] == "error"
    assert refused["payload"][0]["extensions"]["code"] == "BAD_USER_INPUT"


async def test_after_a_crash_a_new_subscriber_receives_only_what_happens_after_it_subscribed(
    gateway_factory: Callable[..., Gateway], dynamodb: Any, fresh_table: str
) -> None:
    put_workspace(dynamodb, fresh_table, "ws-1")
    with gateway_factory(fresh_table) as first:
        async with socket(first) as client:
            await client.subscribe(PROJECTS, ws="ws-1")
            await listening(first)
            put_project(dynamodb, fresh_table, "ws-1", "p-1", "seen")
            seen = await client.event()
            lease: dict[str, Any] = {}
            for _ in range(500):  # renewed every few seconds, with the reader's checkpoint
                lease = dynamodb.get_item(TableName=fresh_table, Key=LEASE, ConsistentRead=True).get("Item", {})
                if lease.get("checkpoint", {}).get("M"):
                    break
                await asyncio.sleep(0.02)
    # The process dies: its lease stays behind with its checkpoint and lapses; changes go on meanwhile.
    put_project(dynamodb, fresh_table, "ws-1", "p-2", "while nobody feeding")
    put_project(dynamodb, fresh_table, "ws-1", "p-3", "while nobody feeding")
    dynamodb.put_item(TableName=fresh_table, Item={**lease, "holder": {"S": "crashed"}, "until": {"N": "0"}})
    with gateway_factory(fresh_table) as second:
        feed: Feed = second.app.state.feed
        async with socket(second) as fresh, socket(second) as resuming:
            await fresh.subscribe(PROJECTS, ws="ws-1")
            await resuming.subscribe(PROJECTS, ws="ws-1", after=seen["position"])
            await listening(second, watches=2)
            for _ in range(500):
                relay = feed.relay
                if relay is not None and relay.reader is not None and not relay.reader.catching_up:
                    break
                await asyncio.sleep(0.02)
            put_project(dynamodb, fresh_table, "ws-1", "p-4", "after subscribing")
            first_new = await fresh.event()
            resumed = [await resuming.event() for _ in range(3)]
    assert first_new["node"]["projectId"] == "p-4"
    # One that passes its last position loses nothing, and gets nothing twice.
    assert [e["node"]["projectId"] for e in resumed] == ["p-2", "p-3", "p-4"]
