"""Hand-written fields beside the derived ones, for the special cases a declaration cannot express."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import strawberry

from gateway.surface.graph import build
from schema.demo import DEMO
from schema.model import WORKSPACE
from tests.conftest import Gateway


def _initials(root: Any) -> str:
    return "".join(word[0] for word in (root.displayName or "").split())


async def _workspace_label(info: strawberry.Info, workspace_id: strawberry.ID) -> str | None:
    item = await info.context.reader.get(WORKSPACE, {"workspaceId": workspace_id})
    return None if item is None else f"{item['displayName']} ({item['region']})"


WITH_FIELDS = dataclasses.replace(
    DEMO,
    fields={
        "Workspace": {"initials": strawberry.field(resolver=_initials, description="The name's initials.")},
        "Query": {"workspaceLabel": strawberry.field(resolver=_workspace_label)},
    },
)


@pytest.fixture(scope="module")
def served(gateway_factory: Callable[..., Gateway], contract_table: str) -> Iterator[Gateway]:
    with gateway_factory(contract_table, declaration=WITH_FIELDS) as gateway:
        yield gateway


def test_a_hand_written_field_sits_beside_the_derived_ones(served: Gateway) -> None:
    body = served.query(
        '{ workspace(workspaceId: "ws-main") { displayName initials projects(first: 1) { nodes { projectId } } } }'
    )
    workspace = body["data"]["workspace"]
    assert (workspace["displayName"], workspace["initials"], len(workspace["projects"]["nodes"])) == ("Main", "M", 1)


def test_a_hand_written_root_field_reads_through_the_request_reader(served: Gateway) -> None:
    body = served.query('{ workspaceLabel(workspaceId: "ws-main") }')
    assert body["data"] == {"workspaceLabel": "Main (eu-west-1)"}
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}


def test_a_hand_written_field_may_not_take_a_derived_name() -> None:
    clash = dataclasses.replace(DEMO, fields={"Workspace": {"displayName": strawberry.field(resolver=_initials)}})
    with pytest.raises(ValueError, match=r"Workspace\.displayName: two fields of the same name"):
        build(clash)
