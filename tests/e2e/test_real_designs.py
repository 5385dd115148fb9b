"""Designs the engine did not write: tables filled with plain boto3 as teams keep them, served from a declaration.

Each test writes items with literal key strings (never the gateway's key code), then queries through the gateway
with every DynamoDB request counted on the wire.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Link, Model
from gateway.surface.graph import build
from tests.support.gateway import Gateway, accounted, answered, serve_design
from tests.support.mutations import mutate

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")


# --- entities told apart by a discriminator ---------------------------------------------------------------------

USER = Entity(
    "User",
    {None: KeyShape.of("ACCOUNT#{name}", "ACCOUNT#{name}")},
    {"email": Attribute("S", "Where to write to.")},
    discriminator=("EntityType", "user"),
)
ORGANIZATION = Entity(
    "Organization",
    {None: KeyShape.of("ACCOUNT#{name}", "ACCOUNT#{name}")},
    {"plan": Attribute("S", "What the organization pays for.")},
    discriminator=("EntityType", "org"),
)
ACCOUNTS = Declaration(Model("accounts", (TABLE,), (USER, ORGANIZATION)))
ACCOUNT_ITEMS = [
    {"PK": "ACCOUNT#ann", "SK": "ACCOUNT#ann", "EntityType": "user", "email": "ann@example.com"},
    {"PK": "ACCOUNT#acme", "SK": "ACCOUNT#acme", "EntityType": "org", "plan": "pro"},
    {"PK": "ACCOUNT#bot", "SK": "ACCOUNT#bot", "EntityType": "robot", "email": "bot@example.com"},
    {"PK": "ACCOUNT#old", "SK": "ACCOUNT#old", "email": "no type at all"},
]


@pytest.fixture(scope="module")
def accounts(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, ACCOUNTS, ACCOUNT_ITEMS)


def test_entities_that_share_a_key_shape_are_told_apart_by_their_discriminator(accounts: tuple[Gateway, str]) -> None:
    gateway, _ = accounts
    data, cost = answered(
        gateway,
        '{ user(name: "ann") { name email } organization(name: "acme") { name plan }'
        ' asOrganization: organization(name: "ann") { name } asUser: user(name: "acme") { name } }',
    )
    assert data == {
        "user": {"name": "ann", "email": "ann@example.com"},
        "organization": {"name": "acme", "plan": "pro"},
        "asOrganization": None,
        "asUser": None,
    }
    assert cost == (1, 1)
    # At a user's key, an item whose discriminator is another value, or missing, is no user and no organization:
    # the table contradicts the declaration, an error at its field (it was a silent null before).
    body = gateway.query('{ users(names: ["bot", "old", "ann"]) { name } node(id: "VXNlciNib3Q") { id } }')
    assert body["data"] == {"users": [None, None, {"name": "ann"}], "node": None}
    assert _mismatches(body) == [
        (["users", 0], "User", {"PK": "ACCOUNT#bot", "SK": "ACCOUNT#bot"}),
        (["users", 1], "User", {"PK": "ACCOUNT#old", "SK": "ACCOUNT#old"}),
        (["node"], "User", {"PK": "ACCOUNT#bot", "SK": "ACCOUNT#bot"}),
    ]
    assert "its EntityType holds 'robot' where the declaration has 'user'" in body["errors"][0]["message"]


def _mismatches(body: dict[str, Any]) -> list[tuple[list[Any], str, dict[str, Any]]]:
    """The DATA_MISMATCH errors of a response: their paths, entities and keys."""
    errors = body.get("errors", [])
    assert all(error["extensions"]["code"] == "DATA_MISMATCH" for error in errors), errors
    return [(error["path"], error["extensions"]["entity"], error["extensions"]["key"]) for error in errors]


def test_a_create_writes_the_discriminator_and_an_update_never_changes_another_entity(
    accounts: tuple[Gateway, str], dynamodb: Any
) -> None:
    gateway, table = accounts
    created, sent = mutate(gateway, "createUser", {"name": "cy", "email": "cy@example.com"}, "... on User { name }")
    assert (created["name"], sent) == ("cy", {"PutItem": 1})
    stored = dynamodb.get_item(TableName=table, Key={"PK": {"S": "ACCOUNT#cy"}, "SK": {"S": "ACCOUNT#cy"}})["Item"]
    assert stored["EntityType"] == {"S": "user"}
    taken, _ = mutate(gateway, "createOrganization", {"name": "cy", "plan": "free"})
    assert taken["__typename"] == "ConflictError"
    refused, _ = mutate(gateway, "updateOrganization", {"name": "ann", "expectedVersion": 0, "plan": "free"})
    assert refused["__typename"] != "Organization"
    stored = dynamodb.get_item(TableName=table, Key={"PK": {"S": "ACCOUNT#ann"}, "SK": {"S": "ACCOUNT#ann"}})["Item"]
    assert "plan" not in stored and stored["EntityType"] == {"S": "user"}


def test_an_item_is_one_entity_or_none(caplog: pytest.LogCaptureFixture) -> None:
    model = ACCOUNTS.model
    key = {"PK": "ACCOUNT#ann", "SK": "ACCOUNT#ann"}
    assert model.recognise({**key, "EntityType": "user"}) == (USER, {"name": "ann"})
    assert model.recognise({**key, "EntityType": "org"}) == (ORGANIZATION, {"name": "ann"})
    assert model.recognise({**key, "EntityType": "robot"}) is None
    assert model.recognise(key) is None
    caplog.set_level(logging.WARNING)
    # A key alone (what a write names) could be either: neither, and said so.
    assert model.recognise(key, partial=True) is None
    assert "could be User or Organization" in caplog.text


def test_shared_key_shapes_without_discriminators_are_refused_naming_both_and_the_fix() -> None:
    plain = Entity("Organization", {None: KeyShape.of("ACCOUNT#{name}", "ACCOUNT#{name}")})
    with pytest.raises(ValueError) as refused:
        Model("t", (TABLE,), (USER, plain))
    message = str(refused.value)
    assert "User and Organization" in message and "'ACCOUNT#{name}'" in message and "discriminator=" in message
    same = Entity("Organization", plain.keys, discriminator=("EntityType", "user"))
    with pytest.raises(ValueError, match="mistaken for each other"):
        Model("t", (TABLE,), (USER, same))
    elsewhere = Entity("Organization", plain.keys, discriminator=("Type", "org"))
    with pytest.raises(ValueError, match="same attribute"):
        Model("t", (TABLE,), (USER, elsewhere))
    with pytest.raises(ValueError, match="not a declared attribute"):
        Entity("X", plain.keys, {"EntityType": "S"}, discriminator=("EntityType", "x"))


# --- sparse index keys ------------------------------------------------------------------------------------------

AGENT = Entity(
    "Agent",
    {None: KeyShape.of("AGENT#{agentId}", "AGENT")},
    {"name": Attribute("S", "The agent's name.")},
)
TICKET = Entity(
    "Ticket",
    {
        None: KeyShape.of("TICKET#{ticketId}", "TICKET"),
        "GSI1": KeyShape.of("AGENT#{agentId}", "TICKET#{ticketId}", sparse=True),
    },
    {"title": Attribute("S", "What is wrong.")},
)
AGENT_TICKETS = Collection("Agent.tickets", AGENT, TICKET, index="GSI1")
TICKET_AGENT = Link("Ticket.agent", TICKET, AGENT)
HELPDESK = Declaration(
    Model("helpdesk", (TABLE, GSI1), (AGENT, TICKET), collections=(AGENT_TICKETS,), links=(TICKET_AGENT,))
)
HELPDESK_ITEMS = [
    {"PK": "AGENT#a1", "SK": "AGENT", "name": "Ada"},
    {"PK": "TICKET#t1", "SK": "TICKET", "GSI1PK": "AGENT#a1", "GSI1SK": "TICKET#t1", "title": "assigned"},
    {"PK": "TICKET#t2", "SK": "TICKET", "title": "waiting for an agent"},
    {"PK": "TICKET#t3", "SK": "TICKET", "GSI1PK": "AGENT#a1", "title": "half a key: out of GSI1"},
]


@pytest.fixture(scope="module")
def helpdesk(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, HELPDESK, HELPDESK_ITEMS)


def test_an_item_without_a_sparse_index_keys_is_still_its_entity(helpdesk: tuple[Gateway, str]) -> None:
    gateway, _ = helpdesk
    body = gateway.query(
        '{ tickets(ticketIds: ["t1", "t2", "t3"]) { ticketId agentId title agent { name } }'
        ' agent(agentId: "a1") { tickets(first: 5) { nodes { ticketId } pageInfo { hasNextPage } } } }',
    )
    data, cost = body["data"], accounted(body)[:2]
    assert "errors" not in body
    assert data["tickets"] == [
        {"ticketId": "t1", "agentId": "a1", "title": "assigned", "agent": {"name": "Ada"}},
        {"ticketId": "t2", "agentId": None, "title": "waiting for an agent", "agent": None},
        # Half of GSI1's keys: out of GSI1 (DynamoDB's rule), still a ticket, its agent read from the key it holds.
        {"ticketId": "t3", "agentId": "a1", "title": "half a key: out of GSI1", "agent": {"name": "Ada"}},
    ]
    assert data["agent"]["tickets"] == {"nodes": [{"ticketId": "t1"}], "pageInfo": {"hasNextPage": False}}
    assert cost == (2, 1)  # one BatchGetItem for the tickets and the agent, beside one GSI1 Query


def test_a_create_writes_a_sparse_index_keys_only_when_given(helpdesk: tuple[Gateway, str], dynamodb: Any) -> None:
    gateway, table = helpdesk
    created, sent = mutate(gateway, "createTicket", {"ticketId": "t8", "title": "new"}, "... on Ticket { agentId }")
    assert (created["agentId"], sent) == (None, {"PutItem": 1})
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": "TICKET#t8"}, "SK": {"S": "TICKET"}})["Item"]
    assert "GSI1PK" not in item and "GSI1SK" not in item
    created, _ = mutate(gateway, "createTicket", {"ticketId": "t9", "agentId": "a1"}, "... on Ticket { agentId }")
    assert created["agentId"] == "a1"
    data, _ = answered(gateway, '{ agent(agentId: "a1") { tickets { nodes { ticketId } } } }')
    assert [n["ticketId"] for n in data["agent"]["tickets"]["nodes"]] == ["t1", "t9"]


def test_an_update_puts_an_item_in_a_sparse_index_moves_it_and_takes_it_out(
    helpdesk: tuple[Gateway, str], dynamodb: Any
) -> None:
    # An id only a sparse index's keys hold is set by an update: the item enters the index, moves in it when it
    # changes, and leaves it when removed (an escalation, an assignment); its table key stays.
    gateway, table = helpdesk
    mutate(gateway, "createAgent", {"agentId": "a2", "name": "Bea"})
    mutate(gateway, "createTicket", {"ticketId": "t20", "title": "unassigned"})
    key = {"PK": {"S": "TICKET#t20"}, "SK": {"S": "TICKET"}}

    def listed() -> dict[str, list[str]]:
        data, _ = answered(
            gateway,
            '{ a1: agent(agentId: "a1") { tickets { nodes { ticketId } } }'
            ' a2: agent(agentId: "a2") { tickets { nodes { ticketId } } } }',
        )
        return {name: [n["ticketId"] for n in data[name]["tickets"]["nodes"]] for name in ("a1", "a2")}

    assert "t20" not in listed()["a1"]
    for version, agent, index_keys in ((1, "a1", ("AGENT#a1", "TICKET#t20")), (2, "a2", ("AGENT#a2", "TICKET#t20"))):
        result, sent = mutate(
            gateway,
            "updateTicket",
            {"ticketId": "t20", "agentId": agent, "expectedVersion": version},
            "... on Ticket { agentId title }",
        )
        # The ticket's key lacks its agent, but the new index keys are the agent given and the ticket's id: no read.
        assert (result["agentId"], result["title"], sent) == (agent, "unassigned", {"UpdateItem": 1})
        item = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
        assert (item["GSI1PK"]["S"], item["GSI1SK"]["S"]) == index_keys
        assert "agentId" not in item  # an id lives in the keys alone
        now = listed()
        assert ("t20" in now[agent], "t20" in now["a1" if agent == "a2" else "a2"]) == (True, False)
    result, _ = mutate(
        gateway, "updateTicket", {"ticketId": "t20", "agentId": None, "expectedVersion": 3}, "... on Ticket { agentId }"
    )
    assert result["agentId"] is None
    item = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    assert "GSI1PK" not in item and "GSI1SK" not in item
    now = listed()
    assert "t20" not in now["a1"] and now["a2"] == []


def test_what_a_sparse_index_cannot_serve_is_refused() -> None:
    counted = Entity("Agent", AGENT.keys, {"ticket_count": Attribute("INT", writable=False)})
    with pytest.raises(ValueError, match=re.escape("Agent.tickets: Ticket is sparse in 'GSI1', so no counter")):
        Model(
            "t",
            (TABLE, GSI1),
            (counted, TICKET),
            (Collection("Agent.tickets", counted, TICKET, "GSI1", counter="ticket_count"),),
        )
    note = Entity("Note", {None: KeyShape.of("NOTE#{agentId}", "NOTE#{noteId}")})
    needs = re.escape("Ticket.notes: the partition key 'NOTE#{agentId}' needs ['agentId']")
    with pytest.raises(ValueError, match=needs):
        Model("t", (TABLE, GSI1), (TICKET, note), (Collection("Ticket.notes", TICKET, note),))


# --- key segments: padded numbers, glued prefixes, other separators, values that are not ids ----------------------

SHOP_CUSTOMER = Entity("Customer", {None: KeyShape.of("c#{customerId}", "c#{customerId}")}, {"name": "S"})
SHOP_ORDER = Entity(
    "Order",
    {
        None: KeyShape.of("o#{orderId}", "o#{orderId}"),
        "GSI1": KeyShape.of("c#{customerId}", "o#{placedAt}"),
    },
    {"placedAt": Attribute("S", "When, as an ISO timestamp.", required=True), "status": "S"},
)
SUPPORT_TICKET = Entity(
    "Ticket",
    {
        None: KeyShape.of("TICKET#{ticketId:07}", "TICKET#{ticketId:07}"),
        "GSI1": KeyShape.of("c#{customerId}", "TICKET#{ticketId}"),
    },
    {"title": "S"},
)
POST = Entity("Post", {None: KeyShape.of("POST#{postId}", "POST")}, {"text": "S"})
LIKE = Entity("Like", {None: KeyShape.of("POST#{postId}", "{kind}LIKE#{user}")})
INVOICE = Entity("Invoice", {None: KeyShape.of("INV|{invoiceId}", "INV", separator="|")}, {"total": "N"})
INVOICE_LINE = Entity(
    "InvoiceLine", {None: KeyShape.of("INV|{invoiceId}", "LINE|{lineNo:03}", separator="|")}, {"amount": "N"}
)
SHOP = Declaration(
    Model(
        "shop",
        (TABLE, GSI1),
        (SHOP_CUSTOMER, SHOP_ORDER, SUPPORT_TICKET, POST, LIKE, INVOICE, INVOICE_LINE),
        collections=(
            Collection("Customer.orders", SHOP_CUSTOMER, SHOP_ORDER, "GSI1", ascending=False),
            Collection("Customer.tickets", SHOP_CUSTOMER, SUPPORT_TICKET, "GSI1"),
            Collection("Post.likes", POST, LIKE, levels=("kind",)),
            Collection("Invoice.lines", INVOICE, INVOICE_LINE),
        ),
    )
)
SHOP_ITEMS = [
    {"PK": "c#ann", "SK": "c#ann", "name": "Ann"},
    *(
        {"PK": f"o#{n}", "SK": f"o#{n}", "GSI1PK": "c#ann", "GSI1SK": f"o#{at}", "placedAt": at, "status": "PAID"}
        for n, at in [("o1", "2020-06-21T19:18:00"), ("o2", "2021-01-02T08:00:00"), ("o3", "2020-11-30T23:59:59")]
    ),
    {"PK": "TICKET#0000007", "SK": "TICKET#0000007", "GSI1PK": "c#ann", "GSI1SK": "TICKET#7", "title": "seven"},
    {"PK": "TICKET#0000012", "SK": "TICKET#0000012", "GSI1PK": "c#ann", "GSI1SK": "TICKET#12", "title": "twelve"},
    {"PK": "POST#p1", "SK": "POST", "text": "hello"},
    {"PK": "POST#p1", "SK": "COMMENTLIKE#bob"},
    {"PK": "POST#p1", "SK": "POSTLIKE#ann"},
    {"PK": "POST#p1", "SK": "POSTLIKE#cy"},
    {"PK": "INV|i1", "SK": "INV", "total": 30},
    {"PK": "INV|i1", "SK": "LINE|002", "amount": 20},
    {"PK": "INV|i1", "SK": "LINE|010", "amount": 10},
]


@pytest.fixture(scope="module")
def shop(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, SHOP, SHOP_ITEMS)


def test_a_padded_number_is_found_by_its_plain_value_and_read_both_ways(shop: tuple[Gateway, str]) -> None:
    gateway, _ = shop
    data, cost = answered(
        gateway,
        '{ plain: ticket(ticketId: "7") { id ticketId title } padded: ticket(ticketId: "0000007") { ticketId }'
        ' customer(customerId: "ann") { tickets { nodes { ticketId customerId title } } } }',
    )
    assert data["plain"]["ticketId"] == "7" and data["plain"]["title"] == "seven"
    assert data["padded"] == {"ticketId": "7"}
    # GSI1 writes the ids plain, so they sort as text there.
    assert data["customer"]["tickets"]["nodes"] == [
        {"ticketId": "12", "customerId": "ann", "title": "twelve"},
        {"ticketId": "7", "customerId": "ann", "title": "seven"},
    ]
    assert cost == (2, 1)
    again, _ = answered(gateway, f'{{ node(id: "{data["plain"]["id"]}") {{ ... on Ticket {{ title }} }} }}')
    assert again == {"node": {"title": "seven"}}
    refused = gateway.query('{ ticket(ticketId: "seven") { title } }')
    assert refused["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert refused["extensions"]["dynamodb"]["calls"] == 0


def test_a_prefix_glued_to_a_field_and_another_separator_are_read_as_declared(shop: tuple[Gateway, str]) -> None:
    gateway, _ = shop
    data, cost = answered(
        gateway,
        '{ post(postId: "p1") { text all: likes { nodes { kind user } } posts: likes(kind: "POST") { nodes { user } } }'
        ' invoice(invoiceId: "i1") { total lines { nodes { lineNo amount } } } }',
    )
    assert data["post"]["all"]["nodes"] == [
        {"kind": "COMMENT", "user": "bob"},
        {"kind": "POST", "user": "ann"},
        {"kind": "POST", "user": "cy"},
    ]
    assert data["post"]["posts"]["nodes"] == [{"user": "ann"}, {"user": "cy"}]
    assert data["invoice"] == {
        "total": 30,
        "lines": {"nodes": [{"lineNo": "2", "amount": 20}, {"lineNo": "10", "amount": 10}]},
    }
    assert cost[1] == 1
    refused = gateway.query('{ invoice(invoiceId: "i|1") { total } }')
    assert refused["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


def test_a_value_in_an_index_sort_key_is_an_attribute_that_an_update_moves(
    shop: tuple[Gateway, str], dynamodb: Any
) -> None:
    gateway, table = shop
    newest = '{ customer(customerId: "ann") { orders(first: 2) { nodes { orderId placedAt } } } }'
    data, cost = answered(gateway, newest)
    assert [n["orderId"] for n in data["customer"]["orders"]["nodes"]] == ["o2", "o3"]
    assert cost == (2, 1)
    created, sent = mutate(
        gateway,
        "createOrder",
        {"orderId": "o4", "customerId": "ann", "placedAt": "2019-01-01T00:00:00"},
        "... on Order { placedAt version }",
    )
    assert (created["placedAt"], sent) == ("2019-01-01T00:00:00", {"PutItem": 1})
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": "o#o4"}, "SK": {"S": "o#o4"}})["Item"]
    assert item["GSI1SK"] == {"S": "o#2019-01-01T00:00:00"}
    moved, _ = mutate(
        gateway,
        "updateOrder",
        {"orderId": "o4", "expectedVersion": 1, "placedAt": "2022-02-02T00:00:00"},
        "... on Order { placedAt }",
    )
    assert moved["placedAt"] == "2022-02-02T00:00:00"
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": "o#o4"}, "SK": {"S": "o#o4"}})["Item"]
    assert (item["GSI1PK"], item["GSI1SK"]) == ({"S": "c#ann"}, {"S": "o#2022-02-02T00:00:00"})
    data, _ = answered(gateway, newest)
    assert [n["orderId"] for n in data["customer"]["orders"]["nodes"]] == ["o4", "o2"]
    refused, sent = mutate(gateway, "updateOrder", {"orderId": "o4", "expectedVersion": 2, "placedAt": "a#b"})
    assert (refused["__typename"], sent) == ("ValidationFailedError", {"GetItem": 1})  # nothing written


def test_the_schema_serves_a_key_value_as_its_type_and_padded_ids_as_ids() -> None:
    sdl = build(SHOP).schema.as_str()
    order = sdl[sdl.index("type Order implements Node") :]
    order = order[: order.index("}")]
    # Only GSI1's keys hold customerId: an order absent from GSI1 has none, so it is optional where read.
    assert "placedAt: String\n" in order and "customerId: ID\n" in order and "placedAt: ID" not in order
    create = sdl[sdl.index("input CreateOrderInput") :]
    assert "placedAt: String!" in create[: create.index("}")]


@pytest.mark.parametrize(
    ("entity", "message"),
    [
        (
            lambda: Entity("A", {None: KeyShape.of("A#{id}", "ON#{day}")}, {"day": Attribute("S", required=True)}),
            "A: day is an attribute, in the key 'ON#{day}': an attribute may only be in a secondary index's sort key",
        ),
        (
            lambda: Entity(
                "A",
                {None: KeyShape.of("A#{id}", "A"), "GSI1": KeyShape.of("DAY#{day}", "A#{id}")},
                {"day": Attribute("S", required=True)},
            ),
            "A: day is an attribute, in the key 'DAY#{day}'",
        ),
        (
            lambda: Entity(
                "A", {None: KeyShape.of("A#{id}", "A"), "GSI1": KeyShape.of("ALL", "ON#{day}")}, {"day": "S"}
            ),
            "every item is in 'GSI1', so every item needs it: declare it required=True, or the index's keys sparse",
        ),
        (
            lambda: Entity(
                "A", {None: KeyShape.of("A#{id}", "A"), "GSI1": KeyShape.of("ALL", "ON#{day}")}, {"day": "BOOL"}
            ),
            "a key holds text, so it is one of ('S', 'DATE', 'INT'), not BOOL",
        ),
    ],
)
def test_values_in_keys_that_cannot_be_served_are_refused(entity: Callable[[], Entity], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        entity()


def test_fields_with_no_separator_between_them_are_refused_naming_the_fix() -> None:
    with pytest.raises(ValueError, match=re.escape("{kind} and {user} have no separator between them")):
        KeyShape.of("POST#{postId}", "{kind}LIKE{user}")


# --- relations that map ids by role -----------------------------------------------------------------------------

ACCOUNT = Entity(
    "Account",
    {None: KeyShape.of("ACCOUNT#{name}", "ACCOUNT#{name}")},
    {"bio": "S", "document_count": Attribute("INT", writable=False)},
)
FOLLOW = Entity("Follow", {None: KeyShape.of("ACCOUNT#{name}", "FOLLOWER#{follower}")})
DOCUMENT = Entity(
    "Document",
    {None: KeyShape.of("DOC#{docId}", "DOC"), "GSI1": KeyShape.of("ACCOUNT#{owner}", "DOC#{docId}")},
    {"title": "S"},
)
FOLLOWERS = Collection("Account.followers", ACCOUNT, FOLLOW, target=ACCOUNT, ids={"name": "follower"})
DOCUMENTS = Collection(
    "Account.documents", ACCOUNT, DOCUMENT, "GSI1", counter="document_count", partition={"owner": "name"}
)
SOCIAL = Declaration(
    Model(
        "social",
        (TABLE, GSI1),
        (ACCOUNT, FOLLOW, DOCUMENT),
        collections=(FOLLOWERS, DOCUMENTS),
        links=(
            Link("Follow.followed", FOLLOW, ACCOUNT),
            Link("Follow.followerAccount", FOLLOW, ACCOUNT, ids={"name": "follower"}),
            Link("Document.ownerAccount", DOCUMENT, ACCOUNT, ids={"name": "owner"}),
        ),
    )
)
SOCIAL_ITEMS = [
    *(
        {"PK": f"ACCOUNT#{n}", "SK": f"ACCOUNT#{n}", "bio": f"I am {n}", "document_count": int(n == "cy")}
        for n in ("ann", "bob", "cy")
    ),
    {"PK": "ACCOUNT#ann", "SK": "FOLLOWER#bob"},
    {"PK": "ACCOUNT#ann", "SK": "FOLLOWER#cy"},
    {"PK": "DOC#d1", "SK": "DOC", "GSI1PK": "ACCOUNT#cy", "GSI1SK": "DOC#d1", "title": "Notes"},
]


@pytest.fixture(scope="module")
def social(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, SOCIAL, SOCIAL_ITEMS)


def test_relations_read_the_target_by_the_id_that_plays_its_role(social: tuple[Gateway, str]) -> None:
    gateway, _ = social
    data, cost = answered(
        gateway,
        '{ account(name: "ann") { bio followers { edges { node { name bio } } } } }',
    )
    assert data["account"]["followers"]["edges"] == [
        {"node": {"name": "bob", "bio": "I am bob"}},
        {"node": {"name": "cy", "bio": "I am cy"}},
    ]
    assert cost == (2, 2)
    data, cost = answered(
        gateway,
        '{ follow(name: "ann", follower: "bob") { followed { name } followerAccount { name } }'
        ' document(docId: "d1") { owner ownerAccount { name bio } } }',
    )
    assert data["follow"] == {"followed": {"name": "ann"}, "followerAccount": {"name": "bob"}}
    assert data["document"] == {"owner": "cy", "ownerAccount": {"name": "cy", "bio": "I am cy"}}
    assert cost == (2, 2)


def test_relations_that_would_resolve_ids_by_a_coincidence_of_names_are_refused() -> None:
    def model(collections: tuple[Collection, ...] = (), links: tuple[Link, ...] = ()) -> Model:
        return Model("t", (TABLE, GSI1), (ACCOUNT, FOLLOW, DOCUMENT), collections, links)

    every_edge = Collection("Account.followers", ACCOUNT, FOLLOW, target=ACCOUNT)
    with pytest.raises(ValueError, match="so every edge would be the same Account: name the edge's id"):
        model(collections=(every_edge,))
    twice = (Link("Follow.followed", FOLLOW, ACCOUNT), Link("Follow.followerAccount", FOLLOW, ACCOUNT))
    with pytest.raises(ValueError, match=re.escape("Follow.followed and Follow.followerAccount both read Account by")):
        model(links=twice)
    with pytest.raises(ValueError, match="so it is always the Account itself"):
        model(links=(Link("Account.self", ACCOUNT, ACCOUNT),))
    with pytest.raises(ValueError, match=re.escape("Document has no name=name: name the id of Document")):
        model(links=(Link("Document.ownerAccount", DOCUMENT, ACCOUNT),))
    with pytest.raises(ValueError, match=re.escape("ids maps ['owner'], which are not ids of Account's table key")):
        model(links=(Link("Document.ownerAccount", DOCUMENT, ACCOUNT, ids={"owner": "owner"}),))


# --- variant index keys -----------------------------------------------------------------------------------------

OWNER = Entity("Owner", {None: KeyShape.of("ACCOUNT#{owner}", "ACCOUNT")}, {"bio": "S"})
ORIGINALS = KeyShape.of("ACCOUNT#{owner}", "#DOC#{docId}")
COPIES = KeyShape.of("ACCOUNT#{owner}", "COPY#{docId}")
DOC = Entity(
    "Doc", {None: KeyShape.of("DOC#{docId}", "DOC"), "GSI1": ORIGINALS}, {"title": "S"}, variants={"GSI1": (COPIES,)}
)
LIBRARY_DESIGN = Declaration(
    Model(
        "docs",
        (TABLE, GSI1),
        (OWNER, DOC),
        collections=(
            Collection("Owner.documents", OWNER, DOC, "GSI1"),
            Collection("Owner.copies", OWNER, DOC, "GSI1", shape=COPIES),
        ),
    )
)
DOC_ITEMS = [
    {"PK": "ACCOUNT#ann", "SK": "ACCOUNT", "bio": "Ann"},
    {"PK": "DOC#d1", "SK": "DOC", "GSI1PK": "ACCOUNT#ann", "GSI1SK": "#DOC#d1", "title": "original"},
    {"PK": "DOC#d2", "SK": "DOC", "GSI1PK": "ACCOUNT#ann", "GSI1SK": "COPY#d2", "title": "a copy"},
    {"PK": "DOC#d3", "SK": "DOC", "GSI1PK": "ACCOUNT#ann", "GSI1SK": "DRAFT#d3", "title": "neither shape"},
]


@pytest.fixture(scope="module")
def docs(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, LIBRARY_DESIGN, DOC_ITEMS)


def test_an_entity_with_two_shapes_in_one_index_is_recognised_in_either(docs: tuple[Gateway, str]) -> None:
    gateway, _ = docs
    body = gateway.query(
        '{ docs(docIds: ["d1", "d2", "d3"]) { docId owner title }'
        ' owner(owner: "ann") { documents { nodes { docId } } copies { nodes { docId title } } } }',
    )
    data, cost = body["data"], accounted(body)[:2]
    # d3's index keys have neither of its declared shapes there: an error at its field, not a silent null.
    assert _mismatches(body) == [(["docs", 2], "Doc", {"PK": "DOC#d3", "SK": "DOC"})]
    assert data["docs"] == [
        {"docId": "d1", "owner": "ann", "title": "original"},
        {"docId": "d2", "owner": "ann", "title": "a copy"},
        None,
    ]
    assert data["owner"]["documents"]["nodes"] == [{"docId": "d1"}]
    assert data["owner"]["copies"]["nodes"] == [{"docId": "d2", "title": "a copy"}]
    assert cost == (3, 1)


def test_variants_that_cannot_be_served_are_refused() -> None:
    with pytest.raises(ValueError, match="an item has one table key"):
        Entity("Doc", DOC.keys, variants={None: (COPIES,)})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="an item has one table key"):
        Entity("Doc", {None: DOC.keys[None]}, variants={"GSI1": (COPIES,)})
    elsewhere = KeyShape.of("ACCOUNT#{owner}", "MOVED#{docId}")
    with pytest.raises(ValueError, match=re.escape("Owner.moved: its shape is none of Doc's in that index")):
        Model("t", (TABLE, GSI1), (OWNER, DOC), (Collection("Owner.moved", OWNER, DOC, "GSI1", shape=elsewhere),))


def test_a_collection_finds_its_partition_from_the_parent_id_that_plays_the_role(
    social: tuple[Gateway, str], dynamodb: Any
) -> None:
    gateway, table = social
    listed = '{ account(name: "cy") { documents { totalCount nodes { docId owner ownerAccount { name } } } } }'
    data, cost = answered(gateway, listed)
    assert data["account"]["documents"] == {
        "totalCount": 1,
        "nodes": [{"docId": "d1", "owner": "cy", "ownerAccount": {"name": "cy"}}],
    }
    assert cost == (2, 1)
    created, sent = mutate(gateway, "createDocument", {"docId": "d2", "owner": "cy", "title": "More"})
    assert (created["__typename"], sent) == ("Document", {"TransactWriteItems": 1})
    counted = dynamodb.get_item(TableName=table, Key={"PK": {"S": "ACCOUNT#cy"}, "SK": {"S": "ACCOUNT#cy"}})["Item"]
    assert counted["document_count"] == {"N": "2"}
    data, _ = answered(gateway, listed)
    assert data["account"]["documents"]["totalCount"] == 2
    assert [n["docId"] for n in data["account"]["documents"]["nodes"]] == ["d1", "d2"]


def test_a_partition_by_role_that_cannot_be_resolved_is_refused() -> None:
    by_name = Collection("Account.documents", ACCOUNT, DOCUMENT, "GSI1")
    with pytest.raises(ValueError, match=re.escape("Account has no owner=owner: name the id of Account that holds")):
        Model("t", (TABLE, GSI1), (ACCOUNT, DOCUMENT), (by_name,))
    # An id of the partition named alike on both sides, while another is mapped by role: said explicitly or refused.
    pair = Entity("Pair", {None: KeyShape.of("P#{name}#{owner}", "P"), "GSI1": KeyShape.of("A#{owner}#{name}", "P")})
    unsaid = Collection("Account.pairs", ACCOUNT, pair, "GSI1", partition={"owner": "name"})
    with pytest.raises(ValueError, match=re.escape("['name'] name ids of both Account and Pair")):
        Model("t", (TABLE, GSI1), (ACCOUNT, pair), (unsaid,))


def test_a_members_own_id_named_like_the_parents_is_not_taken_from_the_parent() -> None:
    # A member's own ``name`` (in its sort key) is not its account's ``name``: the Query lists every member under the
    # account (begins_with N#), never those whose own name happens to be the account's.
    named = Entity("Named", {None: KeyShape.of("N#{name}", "N"), "GSI1": KeyShape.of("ACCOUNT#{owner}", "N#{name}")})
    collection = Collection("Account.named", ACCOUNT, named, "GSI1", partition={"owner": "name"})
    Model("t", (TABLE, GSI1), (ACCOUNT, named), (collection,))
    ids = collection.member_ids({"name": "ann"})
    assert ids == {"owner": "ann"}
    assert collection.member_shape.sk.prefix(ids) == "N#"


# --- attribute types: sets, free-form JSON, numbers kept as text --------------------------------------------------

PRODUCT = Entity(
    "Product",
    {None: KeyShape.of("p#{productId}", "p#{productId}"), "GSI1-X": KeyShape.of("ALL#PRODUCTS", "p#{productId}")},
    {
        "tags": Attribute("SS", "Labels, a string set."),
        "sizes": Attribute("NS", "Sizes in stock, a number set."),
        "hashes": Attribute("BS", "Checksums, a binary set."),
        "details": Attribute("JSON", "Whatever the catalog stores."),
        "Price": Attribute("N", "Stored as a string.", text=True),
        "Stock": Attribute("INT", "Stored as a string.", text=True),
    },
)
CATALOG = Declaration(
    Model(
        "catalog",
        (TABLE, Index("GSI1-X", "GSI1-PK", "GSI1-SK")),
        (PRODUCT,),
    )
)
CATALOG_ITEMS = [
    {
        "PK": "p#1",
        "SK": "p#1",
        "GSI1-PK": "ALL#PRODUCTS",
        "GSI1-SK": "p#1",
        "tags": {"red", "cotton"},
        "sizes": {Decimal(40), Decimal("42.5")},
        "hashes": {b"\xff\x00", b"a", b"\x00"},
        "details": {"weight": Decimal("0.2"), "care": ["wash", "dry"], "origin": {"country": "PT"}},
        "Price": "100",
        "Stock": "7",
    },
    {"PK": "p#2", "SK": "p#2", "GSI1-PK": "ALL#PRODUCTS", "GSI1-SK": "p#2", "Price": "cheap", "tags": ["a", "list"]},
]


@pytest.fixture(scope="module")
def catalog(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, CATALOG, CATALOG_ITEMS)


def test_sets_json_and_numbers_kept_as_text_are_served_as_declared(catalog: tuple[Gateway, str]) -> None:
    gateway, _ = catalog
    body = gateway.query('{ products(productIds: ["1", "2"]) { tags sizes hashes details price stock } }')
    data, cost = body["data"], accounted(body)[:2]
    assert data["products"] == [
        {
            "tags": ["cotton", "red"],
            "sizes": [40, 42.5],
            "hashes": ["AA==", "YQ==", "/wA="],  # in byte order: 00, 61, ff00
            "details": {"weight": 0.2, "care": ["wash", "dry"], "origin": {"country": "PT"}},
            "price": 100,
            "stock": 7,
        },
        {"tags": None, "sizes": None, "hashes": None, "details": None, "price": None, "stock": None},
    ]
    # A list where a string set is declared, text that is no number: errors at their fields, no longer silent nulls.
    assert [(error["path"], error["extensions"]["attribute"], error["message"]) for error in body["errors"]] == [
        (["products", 1, "tags"], "tags", "Product.tags holds a list ['a', 'list'] where SS is declared"),
        (["products", 1, "price"], "Price", "Product.Price holds 'cheap', which is no number"),
    ]
    assert cost == (1, 1)


def test_sets_json_and_numbers_kept_as_text_are_written_as_stored(catalog: tuple[Gateway, str], dynamodb: Any) -> None:
    gateway, table = catalog
    data = {
        "productId": "3",
        "tags": ["b", "a", "b"],
        "sizes": [1, 2.5],
        "hashes": ["/wA=", "YQ==", "YQ=="],
        "details": {"weight": 1.5, "care": ["none"]},
        "price": 9.99,
        "stock": 3,
    }
    created, sent = mutate(gateway, "createProduct", data, "... on Product { tags sizes hashes details price stock }")
    assert created["hashes"] == ["YQ==", "/wA="]
    assert created["tags"] == ["a", "b"] and created["price"] == 9.99 and created["details"]["weight"] == 1.5
    assert sent == {"PutItem": 1}
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": "p#3"}, "SK": {"S": "p#3"}})["Item"]
    assert item["tags"] == {"SS": ["a", "b"]} or item["tags"] == {"SS": ["b", "a"]}
    assert sorted(item["sizes"]["NS"]) == ["1", "2.5"]
    assert sorted(item["hashes"]["BS"]) == [b"a", b"\xff\x00"]
    assert item["details"] == {"M": {"weight": {"N": "1.5"}, "care": {"L": [{"S": "none"}]}}}
    assert (item["Price"], item["Stock"]) == ({"S": "9.99"}, {"S": "3"})
    assert (item["GSI1-PK"], item["GSI1-SK"]) == ({"S": "ALL#PRODUCTS"}, {"S": "p#3"})
    emptied, _ = mutate(
        gateway, "updateProduct", {"productId": "3", "expectedVersion": 1, "tags": []}, "... on Product { tags }"
    )
    assert emptied["tags"] is None
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": "p#3"}, "SK": {"S": "p#3"}})["Item"]
    assert "tags" not in item


def test_a_binary_set_element_that_is_not_base64_is_refused_naming_it(catalog: tuple[Gateway, str]) -> None:
    gateway, _ = catalog
    data = {"productId": "4", "hashes": ["YQ==", "not base64!"]}
    refused, sent = mutate(gateway, "createProduct", data, "... on ValidationFailedError { message field }")
    assert refused == {
        "__typename": "ValidationFailedError",
        "message": "hashes: element 1 is not base64",
        "field": "hashes",
    }
    assert sent == {}


# --- a value in a sparse index's sort key: set, moved, removed ----------------------------------------------------

BOARD = Entity("Board", {None: KeyShape.of("BOARD#{boardId}", "BOARD")}, {"title": "S"})
TASK = Entity(
    "Task",
    {
        None: KeyShape.of("TASK#{taskId}", "TASK"),
        "GSI1": KeyShape.of("BOARD#{boardId}", "DUE#{dueOn}#{taskId}", sparse=True),
    },
    {"dueOn": Attribute("DATE", "When it is due; a task without one is in no agenda.")},
)
PLANNER = Declaration(
    Model("planner", (TABLE, GSI1), (BOARD, TASK), collections=(Collection("Board.agenda", BOARD, TASK, "GSI1"),))
)


@pytest.fixture(scope="module")
def planner(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(
        dynamodb, endpoint, gateway_factory, PLANNER, [{"PK": "BOARD#b1", "SK": "BOARD", "title": "B"}]
    )


def test_a_date_in_a_sparse_index_moves_the_item_and_its_removal_takes_it_out(
    planner: tuple[Gateway, str], dynamodb: Any
) -> None:
    gateway, table = planner
    for task, due in [("t1", "2026-03-01"), ("t2", "2026-01-15")]:
        mutate(gateway, "createTask", {"taskId": task, "boardId": "b1", "dueOn": due})
    agenda = '{ board(boardId: "b1") { agenda { nodes { taskId dueOn } } } }'
    assert answered(gateway, agenda)[0]["board"]["agenda"]["nodes"] == [
        {"taskId": "t2", "dueOn": "2026-01-15"},
        {"taskId": "t1", "dueOn": "2026-03-01"},
    ]
    moved, sent = mutate(gateway, "updateTask", {"taskId": "t1", "expectedVersion": 1, "dueOn": "2026-01-01"})
    assert (moved["__typename"], sent) == ("Task", {"GetItem": 1, "UpdateItem": 1})
    assert [n["taskId"] for n in answered(gateway, agenda)[0]["board"]["agenda"]["nodes"]] == ["t1", "t2"]
    dropped, _ = mutate(gateway, "updateTask", {"taskId": "t2", "expectedVersion": 1, "dueOn": None})
    assert dropped["__typename"] == "Task"
    item = dynamodb.get_item(TableName=table, Key={"PK": {"S": "TASK#t2"}, "SK": {"S": "TASK"}})["Item"]
    # Out of GSI1 without its sort key; its partition key stays, the one key that holds its board.
    assert item["GSI1PK"] == {"S": "BOARD#b1"} and "GSI1SK" not in item and "dueOn" not in item
    data, _ = answered(
        gateway, '{ task(taskId: "t2") { taskId boardId dueOn } board(boardId: "b1") { agenda { nodes { taskId } } } }'
    )
    assert data == {
        "task": {"taskId": "t2", "boardId": "b1", "dueOn": None},
        "board": {"agenda": {"nodes": [{"taskId": "t1"}]}},
    }


# --- a parent and its members with another collection's items sorted between them ---------------------------------

SHELF = Entity("Shelf", {None: KeyShape.of("SHELF#{shelfId}", "A")}, {"label": Attribute("S")})
BOOK = Entity("Book", {None: KeyShape.of("SHELF#{shelfId}", "C#{bookId}")}, {"title": Attribute("S")})
NOTE = Entity("Note", {None: KeyShape.of("SHELF#{shelfId}", "B#{noteId}")}, {"text": Attribute("S")})
SHELVES = Declaration(
    Model(
        "shelves",
        (TABLE,),
        (SHELF, BOOK, NOTE),
        collections=(
            Collection("Shelf.books", SHELF, BOOK, ascending=True),
            Collection("Shelf.notes", SHELF, NOTE, ascending=True),
        ),
    )
)
SHELF_ITEMS = [
    {"PK": "SHELF#s1", "SK": "A", "label": "fiction"},
    *({"PK": "SHELF#s1", "SK": f"B#{n:02}", "text": f"note {n}"} for n in range(12)),
    *({"PK": "SHELF#s1", "SK": f"C#{n}", "title": f"book {n}"} for n in range(3)),
]


@pytest.fixture(scope="module")
def shelves(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    yield from serve_design(dynamodb, endpoint, gateway_factory, SHELVES, SHELF_ITEMS)


def test_a_parent_is_read_beside_its_members_when_other_items_sort_between_them(
    shelves: tuple[Gateway, str],
) -> None:
    """The shelf sorts at the head of its partition, but its notes sort between it and its books: one Query from the
    shelf would read the notes first, and need a second Query a round later. The shelf is read beside the books'
    Query instead: 2 calls in 1 round whatever the data, as estimated; a shelf's notes, right after it, still come
    with it in one Query."""
    gateway, _ = shelves
    query = '{ shelf(shelfId: "s1") { label books(first: 2) { nodes { bookId title } pageInfo { hasNextPage } } } }'
    data, cost = answered(gateway, query)
    assert data["shelf"] == {
        "label": "fiction",
        "books": {
            "nodes": [{"bookId": "0", "title": "book 0"}, {"bookId": "1", "title": "book 1"}],
            "pageInfo": {"hasNextPage": True},
        },
    }
    explained = gateway.query(query, **{"X-Tablegraph-Explain": "1"})["extensions"]["explain"]
    assert cost == (explained["calls"], explained["rounds"]) == (2, 1)
    _, cost = answered(gateway, '{ shelf(shelfId: "s1") { label notes(first: 2) { nodes { noteId } } } }')
    assert cost == (1, 1)
