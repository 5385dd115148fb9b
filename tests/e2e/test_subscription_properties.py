"""Generated subscriptions against a reference: an event's object is what a query of the same selection answers for
the item once written, whichever subscribers share its run and whichever stand alone."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.gateway import Gateway
from tests.support.live import listening, put_workspace, socket

_LEAVES = ["id", "workspaceId", "projectId", "title", "status", "createdBy", "version", "__typename"]
_WORKSPACE = ["displayName", "workspaceId", "__typename"]


@st.composite
def _field(draw: st.DrawFn, n: int) -> str:
    """One selected field of a Project: a leaf or its workspace, maybe aliased, maybe under a directive that reads
    the operation's variable, maybe in an inline fragment."""
    alias = f"a{n}: " if draw(st.booleans()) else ""
    directive = draw(st.sampled_from(["", " @include(if: $flag)", " @skip(if: $flag)"]))
    if draw(st.integers(0, 3)) == 0:
        picked = draw(st.lists(st.sampled_from(_WORKSPACE), min_size=1, max_size=3, unique=True))
        text = f"{alias}workspace{directive} {{ {' '.join(picked)} }}"
    else:
        text = f"{alias}{draw(st.sampled_from(_LEAVES))}{directive}"
    return "... on Project { " + text + " }" if draw(st.booleans()) else text


_SELECTIONS = st.lists(
    st.lists(st.booleans(), min_size=2, max_size=7).flatmap(
        lambda fields: st.tuples(*(_field(n) for n in range(len(fields)))).map(" ".join)
    ),
    min_size=1,
    max_size=3,
)
_ITEMS = st.fixed_dictionaries(
    {},
    optional={
        "title": st.text(max_size=12),
        "status": st.sampled_from(["active", "paused", "archived"]),
        "createdBy": st.text(min_size=1, max_size=8),
    },
)


def _subscription(selection: str) -> str:
    return (
        "subscription($ws: ID!, $flag: Boolean!) { workspaceProjectsChanged(workspaceId: $ws) "
        "{ kind node { key: id flagged: __typename @include(if: $flag) " + selection + " } } }"
    )


def _reference(selection: str) -> str:
    return (
        "query($id: ID!, $flag: Boolean!) { node(id: $id) { ... on Project "
        "{ key: id flagged: __typename @include(if: $flag) " + selection + " } } }"
    )


@pytest.fixture
def watched(gateway_factory: Callable[..., Gateway], fresh_table: str, dynamodb: Any) -> Iterator[Gateway]:
    put_workspace(dynamodb, fresh_table, "ws-p")
    with gateway_factory(fresh_table) as gateway:
        yield gateway


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(selections=_SELECTIONS, flags=st.lists(st.booleans(), min_size=3, max_size=3), written=_ITEMS)
def test_each_event_is_what_a_query_of_its_selection_answers(
    watched: Gateway, dynamodb: Any, fresh_table: str, selections: list[str], flags: list[bool], written: dict[str, Any]
) -> None:
    """Several subscribers, each a generated selection and variable: equal ones share a run, the others stand
    alone; every event's object equals the query answer, over HTTP, for the same selection and variables."""
    project = f"p-{uuid.uuid4().hex[:8]}"

    async def run() -> list[tuple[str, bool, dict[str, Any]]]:
        async with socket(watched) as client:
            before = watched.app.state.feed.subscribers()
            for n, selection in enumerate(selections):
                await client.subscribe(_subscription(selection), op_id=f"op-{n}", ws="ws-p", flag=flags[n])
            await listening(watched, watches=before + len(selections))
            item = {"PK": {"S": "WS#ws-p"}, "SK": {"S": f"PROJ#{project}"}}
            item |= {name: {"S": value} for name, value in written.items()}
            dynamodb.put_item(TableName=fresh_table, Item=item)
            events: dict[str, dict[str, Any]] = {}
            while len(events) < len(selections):
                message = await client.receive()
                assert message["type"] == "next", message
                events[message["id"]] = message["payload"]["data"]["workspaceProjectsChanged"]
            for n in range(len(selections)):
                await client.connection.send(json.dumps({"id": f"op-{n}", "type": "complete"}))
        return [(selection, flags[n], events[f"op-{n}"]) for n, selection in enumerate(selections)]

    for selection, flag, event in asyncio.run(run()):
        assert event["kind"] == "CREATED"
        answer = watched.query(_reference(selection), {"id": event["node"]["key"], "flag": flag})
        assert "errors" not in answer, (selection, answer)
        assert event["node"] == answer["data"]["node"], selection
