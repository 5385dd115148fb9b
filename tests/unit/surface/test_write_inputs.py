"""The mutation inputs a design's write rules give: no input for a minted id, set members added and removed."""

from __future__ import annotations

from graphql import GraphQLInputObjectType, build_schema

from gateway.surface.graph import build
from tests.support.helpdesk import HELPDESK

SCHEMA = build_schema(build(HELPDESK).schema.as_str())


def fields_of(name: str) -> set[str]:
    found = SCHEMA.get_type(name)
    assert isinstance(found, GraphQLInputObjectType)
    return set(found.fields)


def test_a_minted_number_or_ulid_is_no_input_of_a_create() -> None:
    assert fields_of("CreateTicketInput") == {"projectId", "title", "labels", "points"}
    assert fields_of("CreateRequestInput") == {"projectId", "title"}
    assert fields_of("CreateEventInput") == {"projectId", "what"}


def test_an_update_adds_to_and_removes_from_each_set_and_only_sets() -> None:
    assert fields_of("UpdateTicketInput") == {
        "projectId",
        "ticketNumber",
        "expectedVersion",
        "title",
        "labels",
        "addToLabels",
        "removeFromLabels",
        "points",
        "addToPoints",
        "removeFromPoints",
    }
    assert fields_of("UpdateRequestInput") == {"projectId", "requestNumber", "expectedVersion", "title"}
