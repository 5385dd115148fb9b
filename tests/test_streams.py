"""One reader per table: the lease, its takeover when the holder dies, and the records it passes on."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.config import Settings
from gateway.dynamo import streams
from gateway.errors import BadUserInput
from gateway.live.relay import Relay, cancelled, replay_starts
from schema.model import MODEL

LEASE = 1.5

HOLDER = """
import asyncio, sys
from gateway.config import Settings
from gateway.dynamo.streams import StreamClient
from gateway.live.relay import Relay
from schema.model import MODEL

async def main():
    settings = Settings(endpoint_url=sys.argv[1], table=sys.argv[2], cursor_secret="x", auth_open=True)
    async with StreamClient.open(settings, MODEL) as client:
        relay = Relay(client, await client.stream_arn(), lambda record: None, lease_seconds=float(sys.argv[3]))
        await relay.run()

asyncio.run(main())
"""


@pytest.fixture
def streamed(fresh_table: str) -> str:
    """A table made as ``create-table`` makes it: with its stream."""
    return fresh_table


@asynccontextmanager
async def relay_on(
    endpoint: str, table: str, publish: streams.Publish = lambda record: None, **options: Any
) -> AsyncIterator[tuple[streams.StreamClient, Relay]]:
    """A relay of this process on ``table``'s stream, running until the block ends."""
    settings = Settings(endpoint_url=endpoint, table=table, cursor_secret="x", auth_open=True)
    async with streams.StreamClient.open(settings, MODEL) as client:
        arn = await client.stream_arn()
        assert arn is not None
        relay = Relay(client, arn, publish, **options)
        running = asyncio.create_task(relay.run())
        try:
            yield client, relay
        finally:
            await cancelled(running)


def put(dynamodb: Any, table: str, ws: str) -> None:
    dynamodb.put_item(TableName=table, Item={"PK": {"S": f"WS#{ws}"}, "SK": {"S": "META"}})


async def until(check: Any, what: str) -> None:
    for _ in range(1500):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never: {what}")


def lease_holder(dynamodb: Any, table: str) -> str | None:
    item = dynamodb.get_item(
        TableName=table, Key={"PK": {"S": "TABLEGRAPH#STREAM-LEASE"}, "SK": {"S": "LEASE"}}, ConsistentRead=True
    ).get("Item")
    return item["holder"]["S"] if item else None


async def test_the_lease_moves_when_its_holder_dies_and_no_record_is_lost(
    endpoint: str, dynamodb: Any, streamed: str
) -> None:
    environment = {**os.environ, "PYTHONPATH": os.getcwd()}
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLDER, endpoint, streamed, str(LEASE), env=environment
    )
    try:
        await until(lambda: lease_holder(dynamodb, streamed) is not None, "the other process took the lease")
        first = lease_holder(dynamodb, streamed)
        received: list[str] = []

        def publish(record: streams.Record) -> None:
            received.append(record["keys"]["PK"]["S"])

        async with relay_on(endpoint, streamed, publish, lease_seconds=LEASE, retry=0.1) as (_, relay):
            await until(relay.connected.is_set, "this process follows the holder")
            await asyncio.sleep(1)  # the holder's reader has its shard iterators
            put(dynamodb, streamed, "before")
            await until(lambda: "WS#before" in received, "the holder passed the record on")
            assert relay.reader is None  # only the holder reads the stream

            holder.send_signal(signal.SIGKILL)
            await holder.wait()
            put(dynamodb, streamed, "meanwhile")  # nobody reads the stream now
            await until(lambda: lease_holder(dynamodb, streamed) == relay.holder, "the lease moved")
            put(dynamodb, streamed, "after")
            await until(lambda: "WS#after" in received, "the new holder reads the stream")
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.wait()
    assert first != relay.holder
    # At least once, in order: the new holder read on from the checkpoint the lease kept.
    assert list(dict.fromkeys(one for one in received if one.startswith("WS#"))) == [
        "WS#before",
        "WS#meanwhile",
        "WS#after",
    ]


async def test_a_process_that_stops_gives_the_lease_up(endpoint: str, dynamodb: Any, streamed: str) -> None:
    async with relay_on(endpoint, streamed, lease_seconds=30) as (_, relay):
        await until(lambda: lease_holder(dynamodb, streamed) == relay.holder, "it took the lease")
    assert lease_holder(dynamodb, streamed) is None  # the next process need not wait 30 seconds


def test_positions_are_opaque_and_checked() -> None:
    places = {f"shardId-00000001795434804417-8cfcb5a{n}": f"{n:021d}" for n in range(8)}
    text = streams.position(places, 1_795_434_804)
    assert streams.parse_position(text) == streams.Position(places, 1_795_434_804)
    assert "shardId" not in text and len(text) < 200  # compressed: eight shards in a few dozen bytes each
    not_a_number = streams.position({"shardId-1": "x1"}, 1)
    for bad in ("", "abc", not_a_number, streams.position({}, 1), "eJzLSM3JyVcozy_KSQEAGgQEXQ"):
        with pytest.raises(BadUserInput):
            streams.parse_position(bad)


# A stream's shards form a forest: each shard may split (two children) as its partition grows, and closes then.
@st.composite
def shard_forests(draw: st.DrawFn) -> list[streams.Shard]:
    open_ = [f"root{n}" for n in range(draw(st.integers(1, 3)))]
    parents: dict[str, str | None] = dict.fromkeys(open_)
    for step in range(draw(st.integers(0, 6))):
        splitting = draw(st.sampled_from(open_))
        open_.remove(splitting)
        for side in range(draw(st.integers(1, 2))):
            child = f"{splitting}.{step}{side}"
            parents[child] = splitting
            open_.append(child)
    closed = set(parents) - set(open_)
    return [streams.Shard(name, parents[name], name in closed) for name in parents]


@given(shards=shard_forests(), data=st.data())
def test_a_replay_reads_every_shard_a_change_may_still_come_from_parents_first(
    shards: list[streams.Shard], data: st.DataObject
) -> None:
    """Whatever shards the position holds places in (the reader drops a parent once its child has a place), a
    replay reads each of them after its place, and from its start every shard that descends from one or that is
    open and unrelated to all; never a shard read to its end before, nor history closed before; parents first."""
    by_id = {one.id: one for one in shards}

    def ancestors(name: str) -> list[str]:
        out, parent = [], by_id[name].parent
        while parent is not None:
            out.append(parent)
            parent = by_id[parent].parent
        return out

    held = data.draw(st.sets(st.sampled_from(sorted(by_id))), label="shards with a place")
    held = {name for name in held if not any(ancestor in held for ancestor in ancestors(name))} or held
    at = streams.Position({name: "1" for name in held}, 0)
    starts = replay_starts(shards, at)
    for name, one in by_id.items():
        below_a_place = any(ancestor in held for ancestor in ancestors(name))
        above_a_place = any(name in ancestors(other) for other in held)
        if name in held:
            assert starts[name] == ("AFTER_SEQUENCE_NUMBER", "1")
        elif below_a_place or (not above_a_place and not one.closed):
            assert starts[name] == ("TRIM_HORIZON", None), name
        else:
            assert name not in starts, name
    order = list(starts)
    for name in order:
        assert all(order.index(ancestor) < order.index(name) for ancestor in ancestors(name) if ancestor in starts)


async def test_the_holders_socket_passes_records_only_to_readers_of_the_table(
    endpoint: str, dynamodb: Any, streamed: str
) -> None:
    async with relay_on(endpoint, streamed, lease_seconds=30) as (client, relay):
        await until(lambda: relay.reader is not None and relay.reader.reading, "it reads the stream")
        lease = await client.lease()
        assert lease is not None
        host, _, port = lease.address.rpartition(":")
        stranger_in, stranger_out = await asyncio.open_connection(host, int(port))
        stranger_out.write(b"a guess\n")
        member_in, member_out = await asyncio.open_connection(host, int(port))
        member_out.write(lease.secret.encode() + b"\n")
        await asyncio.sleep(0.5)
        put(dynamodb, streamed, "secret")
        while b"WS#secret" not in (line := await asyncio.wait_for(member_in.readline(), 20)):
            assert line
        assert await asyncio.wait_for(stranger_in.read(), 20) == b""  # closed, nothing passed on
        for writer in (stranger_out, member_out):
            writer.close()
