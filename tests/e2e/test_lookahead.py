"""The look-ahead plans from what the query really selects: fragments, variables, aliases, @skip and @include."""

from __future__ import annotations

from tests.support.gateway import Gateway


def cost(body: dict[str, object]) -> object:
    extensions = body["extensions"]
    assert isinstance(extensions, dict)
    return extensions["dynamodb"]["calls"], extensions["dynamodb"]["rounds"]


def test_users_in_a_named_fragment_with_a_variable_page_size_are_read_with_the_organization(
    gateway: Gateway,
) -> None:
    body = gateway.query(
        'query($n: Int) { organization(orgName: "o1") { ...Org } }'
        " fragment Org on Organization { orgName users(first: $n) { nodes { username } } }",
        {"n": 3},
    )
    assert len(body["data"]["organization"]["users"]["nodes"]) == 3
    assert cost(body) == (1, 1)


def test_an_inline_fragment_is_followed(gateway: Gateway) -> None:
    body = gateway.query(
        '{ user(orgName: "o1", username: "user-03") { ... on User { name tickets(first: 1) { nodes { ticketId } } } } }'
    )
    assert body["data"]["user"]["name"] == "User 3"
    assert cost(body) == (1, 1)


def test_a_skipped_connection_is_not_read(gateway: Gateway) -> None:
    body = gateway.query(
        'query($skip: Boolean!) { workspace(workspaceId: "ws-main") { displayName'
        " projects @skip(if: $skip) { nodes { projectId } } } }",
        {"skip": True},
    )
    assert body["data"] == {"workspace": {"displayName": "Main"}}
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}


def test_an_excluded_link_is_not_prefetched(gateway: Gateway) -> None:
    body = gateway.query(
        '{ project(workspaceId: "ws-main", projectId: "2026-0001") { title workspace @include(if: false) { region } } }'
    )
    assert body["data"] == {"project": {"title": "Project 1"}}
    assert body["extensions"]["dynamodb"]["operations"] == {"BatchGetItem": 1}


def test_two_aliased_pages_of_one_collection_are_both_served(gateway: Gateway) -> None:
    body = gateway.query(
        '{ organization(orgName: "o1") { first: users(first: 2) { nodes { username } }'
        " more: users(first: 4) { nodes { username } } } }"
    )
    organization = body["data"]["organization"]
    assert [u["username"] for u in organization["first"]["nodes"]] == ["user-01", "user-02"]
    assert len(organization["more"]["nodes"]) == 4
    # One page comes with the organization, the other is read at the same time.
    assert cost(body) == (2, 1)


def test_a_page_asked_for_twice_is_read_once(gateway: Gateway) -> None:
    body = gateway.query(
        '{ a: user(orgName: "o1", username: "user-05") { tickets(first: 2) { nodes { ticketId } } }'
        ' b: organization(orgName: "o1") { users(first: 5) { nodes'
        " { username tickets(first: 2) { nodes { ticketId } } } } } }"
    )
    assert body["data"]["a"]["tickets"] == body["data"]["b"]["users"]["nodes"][4]["tickets"]
    assert body["extensions"]["dynamodb"]["operations"] == {"Query": 1 + 1 + 4}


def test_a_link_back_to_a_member_already_read_costs_nothing(gateway: Gateway) -> None:
    body = gateway.query(
        '{ organization(orgName: "o1") { users(first: 3) { nodes { username'
        " tickets(first: 1) { nodes { user { name } } } } } } }"
    )
    users = body["data"]["organization"]["users"]["nodes"]
    assert users[1]["tickets"]["nodes"] == [{"user": {"name": "User 2"}}]
    assert body["extensions"]["dynamodb"]["operations"] == {"Query": 4}


def test_a_connection_in_a_fragment_on_a_union_is_started_with_its_parent(gateway: Gateway) -> None:
    body = gateway.query(
        '{ workspace(workspaceId: "ws-main") { ... on WorkspaceResult {'
        " ... on Workspace { projects(first: 2) { nodes { projectId } } } } } }"
    )
    assert len(body["data"]["workspace"]["projects"]["nodes"]) == 2
    assert cost(body) == (2, 1)
