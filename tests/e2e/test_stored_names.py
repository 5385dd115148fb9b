"""Stored attribute names that are no GraphQL names (``_ct``, ``follower#``, ``default-card``, ``from``) are served,
under the field the naming rule gives them or the one ``field=`` names, and written back under their own names."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from strawberry.printer import print_schema

from gateway import Attribute, Collection, Entity, Index, KeyShape, Model, Shape
from gateway.design.declaration import Declaration
from gateway.design.naming import field_name, python_attribute
from gateway.dynamo.store import table_definition
from gateway.server.declaration_file import DeclarationFileError, load_file
from gateway.surface.graph import build
from tests.support.gateway import Gateway
from tests.support.live import listening, socket
from tests.support.mutations import mutate

PAYMENT = Shape(
    "PaymentDetails",
    {"default-card": "S", "from": "S", "billing_name": Attribute("S", field="payer")},
)
NETWORK = Entity("Network", {None: KeyShape.of("n#{networkId}", "network")}, {"title": "S"})
USER = Entity(
    "User",
    {None: KeyShape.of("n#{networkId}", "u#{userId}")},
    {
        "_et": "S",
        "_ct": Attribute("S", on_create="now"),
        "_md": Attribute("S", on_update="now", field="modifiedAt"),
        "follower#": "INT",
        "following#": Attribute("INT", field="followingCount"),
        "post#": "INT",
        "tag-set": "SS",
        "PaymentDetails": Attribute("M", shape=PAYMENT),
    },
)
FOLLOW = Entity(
    "Follow",
    {None: KeyShape.of("n#{networkId}#follows#{userId}", "u#{followedId}")},
    {"_ct": "S", "since#": Attribute("S", field="followedSince")},
)
USERS = Collection("Network.users", NETWORK, USER, filters=("follower#", "following#", "_et"))
FOLLOWS = Collection("User.follows", USER, FOLLOW, target=USER, ids={"userId": "followedId"})
DECLARATION = Declaration(Model("names", (Index(None, "PK", "SK"),), (NETWORK, USER, FOLLOW), (USERS, FOLLOWS)))

YAML = """\
table: names
keys: {pk: PK, sk: SK}
shapes:
  PaymentDetails:
    fields:
      default-card: S
      from: S
      billing_name: {type: S, field: payer}
entities:
  Network:
    keys:
      table: {pk: "n#{networkId}", sk: network}
    attributes:
      title: S
  User:
    keys:
      table: {pk: "n#{networkId}", sk: "u#{userId}"}
    attributes:
      _et: S
      _ct: {type: S, on_create: now}
      _md: {type: S, on_update: now, field: modifiedAt}
      follower#: INT
      following#: {type: INT, field: followingCount}
      post#: INT
      tag-set: SS
      PaymentDetails: {type: M, shape: PaymentDetails}
  Follow:
    keys:
      table: {pk: "n#{networkId}#follows#{userId}", sk: "u#{followedId}"}
    attributes:
      _ct: S
      since#: {type: S, field: followedSince}
collections:
  Network.users:
    parent: Network
    member: User
    filters: [follower#, following#, _et]
  User.follows:
    parent: User
    member: Follow
    target: User
    ids: {userId: followedId}
"""

USER_FIELDS = "userId et ct modifiedAt follower followingCount post tagSet paymentDetails { defaultCard from payer }"


@pytest.fixture(scope="module")
def table(dynamodb: Any, endpoint: str) -> Iterator[str]:
    """The design's table, its items written with plain boto3 under the design's own attribute names."""
    name = f"names-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, **table_definition(DECLARATION.model))
    resource = boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )
    stored = resource.Table(name)
    stored.put_item(Item={"PK": "n#n1", "SK": "network", "title": "Birds"})
    for user, followers, following, kind in (("u1", 12, 3, "User"), ("u2", 140, 7, "User"), ("u3", 40, 7, "Bot")):
        stored.put_item(
            Item={
                "PK": "n#n1",
                "SK": f"u#{user}",
                "_et": kind,
                "_ct": "2026-01-02T03:04:05.000Z",
                "_md": "2026-01-03T03:04:05.000Z",
                "follower#": followers,
                "following#": following,
                "post#": 2,
                "tag-set": {"early", "owl"},
                "PaymentDetails": {"default-card": f"card-{user}", "from": "2026-01", "billing_name": user.upper()},
            }
        )
    follow = {"PK": "n#n1#follows#u1", "SK": "u#u2", "_ct": "2026-01-04T00:00:00.000Z", "since#": "2025"}
    stored.put_item(Item=follow)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module", params=[True, False], ids=["compiled", "interpreted"])
def names_gateway(request: Any, table: str, gateway_factory: Callable[..., Gateway]) -> Iterator[Gateway]:
    with gateway_factory(table, declaration=DECLARATION, compiled_execution=request.param) as running:
        yield running


def test_the_naming_rule() -> None:
    served = {name: field_name(name) for name in ("_ct", "follower#", "default-card", "from", "2fa", "user_id")}
    assert served == {
        "_ct": "ct",
        "follower#": "follower",
        "default-card": "defaultCard",
        "from": "from",
        "2fa": "_2fa",
        "user_id": "userId",
    }
    attributes = [python_attribute(name) for name in ("_ct", "ct", "follower#", "from", "user_id")]
    assert len(set(attributes)) == 5
    assert all(one.isidentifier() for one in attributes)
    assert attributes[-1] == "user_id"


def test_stored_names_are_read_under_their_fields(names_gateway: Gateway) -> None:
    body = names_gateway.query(f'{{ user(networkId: "n1", userId: "u1") {{ {USER_FIELDS} }} }}')
    assert body["data"]["user"] == {
        "userId": "u1",
        "et": "User",
        "ct": "2026-01-02T03:04:05.000Z",
        "modifiedAt": "2026-01-03T03:04:05.000Z",
        "follower": 12,
        "followingCount": 3,
        "post": 2,
        "tagSet": ["early", "owl"],
        "paymentDetails": {"defaultCard": "card-u1", "from": "2026-01", "payer": "U1"},
    }
    page = names_gateway.query('{ network(networkId: "n1") { users { nodes { userId follower et } } } }')
    nodes = page["data"]["network"]["users"]["nodes"]
    assert [(one["userId"], one["follower"], one["et"]) for one in nodes] == [
        ("u1", 12, "User"),
        ("u2", 140, "User"),
        ("u3", 40, "Bot"),
    ]


def test_stored_names_of_an_edge_are_served_beside_its_node(names_gateway: Gateway) -> None:
    query = (
        '{ user(networkId: "n1", userId: "u1") { follows { edges { ct followedSince node { userId follower } } } } }'
    )
    edges = names_gateway.query(query)["data"]["user"]["follows"]["edges"]
    assert edges == [
        {"ct": "2026-01-04T00:00:00.000Z", "followedSince": "2025", "node": {"userId": "u2", "follower": 140}}
    ]


async def test_stored_names_reach_a_subscriber(names_gateway: Gateway, dynamodb: Any) -> None:
    live = f"live-{uuid.uuid4().hex[:8]}"
    query = """subscription($network: ID!) {
      networkUsersChanged(networkId: $network) { kind node { userId et follower paymentDetails { defaultCard } } }
    }"""
    async with socket(names_gateway) as client:
        await client.subscribe(query, network=live)
        await listening(names_gateway)
        item = {
            "PK": {"S": f"n#{live}"},
            "SK": {"S": "u#u7"},
            "_et": {"S": "User"},
            "follower#": {"N": "7"},
            "PaymentDetails": {"M": {"default-card": {"S": "card-7"}}},
        }
        dynamodb.put_item(TableName=names_gateway.table, Item=item)
        event = await client.event()
    node = {"userId": "u7", "et": "User", "follower": 7, "paymentDetails": {"defaultCard": "card-7"}}
    assert event == {"kind": "CREATED", "node": node}


@pytest.mark.parametrize(
    ("where", "users"),
    [
        ("{follower: {between: [20, 200]}}", ["u2", "u3"]),
        ('{follower: {between: [20, 200]}, et: {eq: "User"}}', ["u2"]),
        ("{followingCount: {eq: 7}}", ["u2", "u3"]),
        ('{or: [{follower: {eq: 12}}, {et: {eq: "Bot"}}]}', ["u1", "u3"]),
    ],
)
def test_stored_names_filter(names_gateway: Gateway, where: str, users: list[str]) -> None:
    body = names_gateway.query(f'{{ network(networkId: "n1") {{ users(where: {where}) {{ nodes {{ userId }} }} }} }}')
    assert [one["userId"] for one in body["data"]["network"]["users"]["nodes"]] == users


def test_stored_names_are_written_under_their_own_names(names_gateway: Gateway, dynamodb: Any) -> None:
    user = f"new-{uuid.uuid4().hex[:8]}"
    created, _ = mutate(
        names_gateway,
        "createUser",
        {
            "networkId": "n2",
            "userId": user,
            "et": "User",
            "follower": 1,
            "followingCount": 2,
            "post": 3,
            "tagSet": ["a"],
            "paymentDetails": {"defaultCard": "card-9", "from": "2026-02", "payer": "NINE"},
        },
        f"... on User {{ {USER_FIELDS} version }}",
    )
    key = {"PK": {"S": "n#n2"}, "SK": {"S": f"u#{user}"}}
    item = dynamodb.get_item(TableName=names_gateway.table, Key=key)["Item"]
    assert item["_et"] == {"S": "User"}
    assert (item["follower#"], item["following#"], item["post#"]) == ({"N": "1"}, {"N": "2"}, {"N": "3"})
    assert item["tag-set"] == {"SS": ["a"]}
    details = {"default-card": {"S": "card-9"}, "from": {"S": "2026-02"}, "billing_name": {"S": "NINE"}}
    assert item["PaymentDetails"] == {"M": details}
    assert created["ct"] == item["_ct"]["S"] == created["modifiedAt"] == item["_md"]["S"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", created["ct"])

    updated, _ = mutate(
        names_gateway,
        "updateUser",
        {
            "networkId": "n2",
            "userId": user,
            "expectedVersion": created["version"],
            "follower": 5,
            "addToTagSet": ["b"],
            "paymentDetails": {"defaultCard": "card-10", "from": "2026-03"},
        },
        f"... on User {{ {USER_FIELDS} }}",
    )
    after = dynamodb.get_item(TableName=names_gateway.table, Key=key)["Item"]
    assert after["follower#"] == {"N": "5"} and after["following#"] == {"N": "2"}
    assert after["tag-set"] == {"SS": ["a", "b"]} or sorted(after["tag-set"]["SS"]) == ["a", "b"]
    assert after["PaymentDetails"] == {"M": {"default-card": {"S": "card-10"}, "from": {"S": "2026-03"}}}
    assert after["_ct"] == item["_ct"] and after["_md"]["S"] == updated["modifiedAt"] >= item["_md"]["S"]
    assert (updated["follower"], sorted(updated["tagSet"]), updated["paymentDetails"]["payer"]) == (5, ["a", "b"], None)


def test_an_input_error_names_the_served_field(names_gateway: Gateway) -> None:
    data = {"networkId": "n2", "userId": "bad", "paymentDetails": {"defaultCard": " "}}
    result, _ = mutate(names_gateway, "createUser", data, accounting=False)
    assert result["__typename"] == "ValidationFailedError"
    assert result["field"] == "paymentDetails.defaultCard"


def test_two_stored_names_served_as_one_field_are_refused_naming_both() -> None:
    with pytest.raises(ValueError, match=r"User: the stored names '_ct' and 'ct' are both served as the field 'ct'"):
        Entity("User", {None: KeyShape.of("u#{userId}", "user")}, {"_ct": "S", "ct": "S"})
    with pytest.raises(ValueError, match=r"Card: the stored names 'default-card' and 'default_card'.*field="):
        Shape("Card", {"default-card": "S", "default_card": "S"})
    renamed = Entity("User", {None: KeyShape.of("u#{userId}", "user")}, {"_ct": Attribute("S", field="c"), "ct": "S"})
    assert renamed.declared["_ct"].field == "c"
    with pytest.raises(ValueError, match=r"the stored name '#' holds no letter or digit.*field="):
        Entity("User", {None: KeyShape.of("u#{userId}", "user")}, {"#": "S"})
    with pytest.raises(ValueError, match=r"field='created-at' is no GraphQL field name"):
        Attribute("S", field="created-at")


def test_a_named_field_may_not_take_a_derived_one() -> None:
    taken = Entity("User", {None: KeyShape.of("u#{userId}", "user")}, {"name": Attribute("S", field="userId")})
    with pytest.raises(ValueError, match=r"User\.userId: two fields of the same name.*field="):
        build(Declaration(Model("taken", (Index(None, "PK", "SK"),), (taken,))))


def test_the_yaml_declaration_serves_the_same_schema(tmp_path: Path) -> None:
    path = tmp_path / "names.yaml"
    path.write_text(YAML, encoding="utf-8")
    assert print_schema(build(load_file(path)).schema) == print_schema(build(DECLARATION).schema)


def test_a_yaml_field_that_is_no_graphql_name_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "names.yaml"
    path.write_text(YAML.replace("field: payer", "field: pay-er"), encoding="utf-8")
    with pytest.raises(DeclarationFileError, match=r"names\.yaml:8: .*field='pay-er' is no GraphQL field name"):
        load_file(path)
