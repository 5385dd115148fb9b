"""A code-hosting design that the engine did not write, served from a declaration made from the docs alone.

The table (tests/support/code_hosting.py) is created and filled with plain boto3 in its stored spelling. Every
access pattern is asked through the gateway; its answer is compared with one worked out here from the fixture's
items in plain Python (no gateway code), and its DynamoDB calls and rounds are counted on the wire.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support import code_hosting
from tests.support.code_hosting import HOSTING
from tests.support.gateway import Gateway, answered, assert_pattern, explained, fill
from tests.support.mutations import mutate

ITEMS = code_hosting.items()


def _by(pk: str, prefix: str = "") -> list[dict[str, Any]]:
    """The fixture's items under ``pk`` whose sort key starts with ``prefix``, in key order (plain Python)."""
    return sorted((i for i in ITEMS if i["PK"] == pk and i["SK"].startswith(prefix)), key=lambda i: i["SK"].encode())


def _index(name: str, pk: str, prefix: str = "") -> list[dict[str, Any]]:
    chosen = [i for i in ITEMS if i.get(f"{name}PK") == pk and i.get(f"{name}SK", "").startswith(prefix)]
    return sorted(chosen, key=lambda i: i[f"{name}SK"].encode())


def _create(dynamodb: Any, name: str) -> None:
    """The team's table, as their own tooling created it."""
    indexes = [
        {
            "IndexName": index,
            "KeySchema": [
                {"AttributeName": f"{index}PK", "KeyType": "HASH"},
                {"AttributeName": f"{index}SK", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
        for index in ("GSI1", "GSI2", "GSI3", "GSI4")
    ]
    keys = ["PK", "SK", *(f"{index}{part}" for index in ("GSI1", "GSI2", "GSI3", "GSI4") for part in ("PK", "SK"))]
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key in keys],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=indexes,
    )


@pytest.fixture(scope="module")
def hosting(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    name = f"hosting-{uuid.uuid4().hex[:8]}"
    _create(dynamodb, name)
    fill(endpoint, name, ITEMS)
    with gateway_factory(name, declaration=HOSTING) as running:
        yield running, name
    dynamodb.delete_table(TableName=name)


# Each read pattern: the query, the answer worked out from the fixture, and (calls, rounds) on the wire.
ROCKET = "REPO#acme#rocket"
READS: list[Any] = [
    pytest.param(
        '{ user(username: "ann") { username name } }',
        {"user": {"username": "ann", "name": "Ann"}},
        (1, 1),
        id="user",
    ),
    pytest.param(
        # An organization and a user share a key shape; the Type attribute tells them apart.
        '{ organization(orgName: "ann") { name } user(username: "acme") { name } }',
        {"organization": None, "user": None},
        (1, 1),
        id="an-account-is-one-type",
    ),
    pytest.param(
        '{ organization(orgName: "acme") { name plan members(first: 10) { totalCount'
        " edges { role node { username name } } } } }",
        {
            "organization": {
                "name": "Acme",
                "plan": {"tier": "team", "seats": 10},
                "members": {
                    "totalCount": 3,
                    "edges": [
                        {"role": m["Role"], "node": {"username": m["SK"][11:], "name": m["SK"][11:].title()}}
                        for m in _by("ACCOUNT#acme", "MEMBERSHIP#")
                    ],
                },
            }
        },
        (2, 2),  # one Query: the organization, then its memberships; then the members' BatchGetItem
        id="organization-members",
    ),
    pytest.param(
        '{ user(username: "bob") { organizations { nodes { orgName name } } } }',
        {
            "user": {
                "organizations": {
                    "nodes": [
                        {"orgName": m["GSI1SK"][11:], "name": m["GSI1SK"][11:].title()}
                        for m in _index("GSI1", "ACCOUNT#bob", "MEMBERSHIP#")
                    ]
                }
            }
        },
        (3, 2),  # the user ∥ the GSI1 Query of its memberships; then the organizations' BatchGetItem
        id="user-organizations",
    ),
    pytest.param(
        '{ user(username: "ann") { repos { nodes { repoName updatedAt } } } }',
        {
            "user": {
                "repos": {
                    "nodes": [
                        {"repoName": r["PK"].split("#")[2], "updatedAt": r["updatedAt"]}
                        for r in reversed(_index("GSI3", "ACCOUNT#ann", "#"))
                    ]
                }
            }
        },
        (1, 1),  # GSI3 read newest first: the user's own GSI3 item sorts after its repos, so it comes first
        id="user-repos-by-update-time",
    ),
    pytest.param(
        '{ organization(orgName: "acme") { repos(first: 5) { nodes { repoName updatedAt } } } }',
        {
            "organization": {
                "repos": {
                    "nodes": [
                        {"repoName": r["PK"].split("#")[2], "updatedAt": r["updatedAt"]}
                        for r in reversed(_index("GSI3", "ACCOUNT#acme", "#"))
                    ]
                }
            }
        },
        (1, 1),
        id="organization-repos-by-update-time",
    ),
    pytest.param(
        '{ repo(owner: "acme", repoName: "rocket") { description topics starCount forkCount issueCount } }',
        {
            "repo": {
                "description": "acme's rocket",
                "topics": ["cli", "space"],
                "starCount": 3,
                "forkCount": 2,
                "issueCount": 8,
            }
        },
        (1, 1),
        id="repo",
    ),
    pytest.param(
        # Issue numbers are zero-padded in the key and plain on the wire; "0000007" finds the same issue.
        '{ a: issue(owner: "acme", repoName: "rocket", number: "7") { number title status }'
        ' b: issue(owner: "acme", repoName: "rocket", number: "0000007") { number } }',
        {"a": {"number": "7", "title": "Issue 7", "status": "open"}, "b": {"number": "7"}},
        (1, 1),
        id="issue-by-number",
    ),
    pytest.param(
        '{ repo(owner: "acme", repoName: "rocket") { description'
        " issues(first: 3) { totalCount nodes { number title } } } }",
        {
            "repo": {
                "description": "acme's rocket",
                "issues": {
                    "totalCount": 8,
                    "nodes": [
                        {"number": str(int(i["SK"][6:])), "title": i["Title"]}
                        for i in list(reversed(_by(ROCKET, "ISSUE#")))[:3]
                    ],
                },
            }
        },
        (1, 1),  # one Query descending: the repo, then its newest issues
        id="repo-issues-newest-first",
    ),
    pytest.param(
        # Open and closed issues, newest first: GSI4's sort key holds the status, so each is begins_with on it.
        '{ repo(owner: "acme", repoName: "rocket") { open: issuesByStatus(status: "open", first: 3)'
        ' { nodes { number status } } closed: issuesByStatus(status: "closed") { nodes { number } } } }',
        {
            "repo": {
                "open": {
                    "nodes": [
                        {"number": str(int(i["SK"][6:])), "status": "open"}
                        for i in list(reversed(_index("GSI4", ROCKET, "ISSUE#open#")))[:3]
                    ]
                },
                "closed": {
                    "nodes": [
                        {"number": str(int(i["SK"][6:]))} for i in reversed(_index("GSI4", ROCKET, "ISSUE#closed#"))
                    ]
                },
            }
        },
        (3, 1),  # the repo beside two GSI4 Queries, begins_with(GSI4SK, "ISSUE#open#") and "ISSUE#closed#"
        id="open-and-closed-issues",
    ),
    pytest.param(
        '{ repo(owner: "acme", repoName: "rocket") { pullRequests { nodes { number title } } } }',
        {
            "repo": {
                "pullRequests": {
                    "nodes": [
                        {"number": str(int(p["GSI1SK"][3:])), "title": p["Title"]}
                        for p in reversed(_index("GSI1", ROCKET, "PR#"))
                    ]
                }
            }
        },
        (1, 1),  # one GSI1 Query descending: the repo's GSI1 item, then its pull requests
        id="repo-pull-requests",
    ),
    pytest.param(
        '{ pullRequest(owner: "acme", repoName: "rocket", number: "4") { title repo { description } } }',
        {"pullRequest": {"title": "PR 4", "repo": {"description": "acme's rocket"}}},
        (1, 1),  # the pull request's ids name its repo: one BatchGetItem for both
        id="pull-request-with-repo",
    ),
    pytest.param(
        '{ repo(owner: "acme", repoName: "rocket") { forks { nodes { owner repoName originalOwner } } } }',
        {
            "repo": {
                "forks": {
                    "nodes": [
                        {"owner": f["GSI2SK"][5:], "repoName": "rocket", "originalOwner": "acme"}
                        for f in _index("GSI2", ROCKET, "FORK#")
                    ]
                }
            }
        },
        # The repo beside the GSI2 Query of its forks: a repo that is itself a fork has no item heading its own
        # forks' partition (its GSI2 keys sit under its original), so the Query cannot tell it exists.
        (2, 1),
        id="repo-forks",
    ),
    pytest.param(
        '{ repo(owner: "bob", repoName: "rocket") { original { owner description } } }',
        {"repo": {"original": {"owner": "acme", "description": "acme's rocket"}}},
        (2, 2),  # the fork's item says which repo it is a fork of
        id="fork-original",
    ),
    pytest.param(
        '{ repo(owner: "acme", repoName: "rocket") { stargazers { totalCount edges { starredAt node { name } } } } }',
        {
            "repo": {
                "stargazers": {
                    "totalCount": 3,
                    "edges": [
                        {"starredAt": s["starredAt"], "node": {"name": s["SK"][5:].title()}}
                        for s in _by(ROCKET, "STAR#")
                    ],
                }
            }
        },
        (2, 2),  # one Query ascending: the repo, then its stars; then the users' BatchGetItem
        id="repo-stargazers",
    ),
    pytest.param(
        # The issue number is plain in the comments' partition key, padded in the issue's sort key.
        '{ commentsOfIssue(owner: "acme", repoName: "rocket", number: "7") { nodes { body author } } }',
        {
            "commentsOfIssue": {
                "nodes": [
                    {"body": c["Body"], "author": c["author"]}
                    for c in _by("ISSUECOMMENT#acme#rocket#7", "ISSUECOMMENT#")
                ]
            }
        },
        (1, 1),
        id="issue-comments-from-the-root",
    ),
    pytest.param(
        '{ issue(owner: "acme", repoName: "rocket", number: "0000007") { title comments { nodes { author } } } }',
        {
            "issue": {
                "title": "Issue 7",
                "comments": {"nodes": [{"author": c["author"]} for c in _by("ISSUECOMMENT#acme#rocket#7")]},
            }
        },
        (2, 1),  # the issue ∥ its comments' Query: they live in another partition
        id="issue-with-comments",
    ),
    pytest.param(
        '{ reaction(kind: "ISSUE", owner: "acme", repoName: "rocket", number: "7", username: "bob") { emoji } }',
        {"reaction": {"emoji": "+1"}},
        (1, 1),
        id="reaction-with-a-glued-kind",
    ),
]


@pytest.mark.parametrize(("query", "expected", "cost"), READS)
def test_each_read_pattern_answers_as_the_fixture_says_in_the_fewest_requests(
    hosting: tuple[Gateway, str], query: str, expected: Any, cost: tuple[int, int]
) -> None:
    gateway, _ = hosting
    assert_pattern(gateway, query, expected, cost)


def test_the_estimate_of_a_link_through_a_variant_id_bounds_what_the_data_reads(hosting: tuple[Gateway, str]) -> None:
    # Only a fork's item holds originalOwner: whether the link reads a second round depends on the item, so the
    # estimate plans for it (it planned 1 call once, and a fork read 2 in 2 rounds, past any budget it checked).
    gateway, _ = hosting
    query = '{ repo(owner: "acme", repoName: "anvil") { original { owner } } }'
    data, spent = answered(gateway, query)
    assert data == {"repo": {"original": None}}
    assert spent == (1, 1)
    assert explained(gateway, query) == (2, 2)


def test_every_object_is_found_again_by_its_global_id(hosting: tuple[Gateway, str]) -> None:
    gateway, _ = hosting
    data, _ = answered(
        gateway,
        '{ user(username: "ann") { id } organization(orgName: "acme") { id }'
        ' repo(owner: "bob", repoName: "rocket") { id }'
        ' issue(owner: "acme", repoName: "rocket", number: "7") { id }'
        ' pullRequest(owner: "acme", repoName: "rocket", number: "4") { id }'
        ' reaction(kind: "PR", owner: "acme", repoName: "rocket", number: "4", username: "cy") { id } }',
    )
    ids = [one["id"] for one in data.values()]
    found, cost = answered(gateway, "{ nodes(ids: " + json.dumps(ids) + ") { __typename id } }")
    assert [one["__typename"] for one in found["nodes"]] == [
        "User",
        "Organization",
        "Repo",
        "Issue",
        "PullRequest",
        "Reaction",
    ]
    assert [one["id"] for one in found["nodes"]] == ids
    assert cost == (1, 1)


def test_a_padded_number_in_a_global_id_is_no_global_id(hosting: tuple[Gateway, str]) -> None:
    # One item has one global id: its ids as its keys read them back, numbers plain.
    gateway, _ = hosting
    forged = base64.urlsafe_b64encode(b"Issue#acme#rocket#0000007").decode().rstrip("=")
    body = gateway.query("{ node(id: " + json.dumps(forged) + ") { id } }")
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["extensions"]["dynamodb"]["calls"] == 0


# --- writes: the design's own rules --------------------------------------------------------------------------------


def _stored(dynamodb: Any, table: str, pk: str, sk: str) -> dict[str, Any]:
    key = {"PK": {"S": pk}, "SK": {"S": sk}}
    found: dict[str, Any] = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    return {name: next(iter(value.values())) for name, value in found.items()}


def _write(gateway: Gateway, field: str, data: dict[str, Any], selection: str = "") -> Any:
    result, _ = mutate(gateway, field, data, selection)
    assert result["__typename"] not in ("ValidationFailedError", "ConflictError", "NotFoundError"), result
    return result


def test_writes_keep_the_designs_own_rules(served: Callable[..., Gateway], dynamodb: Any) -> None:
    gateway = served(HOSTING)
    table = gateway.table
    _write(gateway, "createUser", {"username": "ann", "name": "Ann"})
    _write(gateway, "createOrganization", {"orgName": "acme", "name": "Acme"})
    assert _stored(dynamodb, table, "ACCOUNT#acme", "ACCOUNT#acme")["Type"] == "Organization"
    _write(gateway, "createMembership", {"orgName": "acme", "username": "ann", "role": "admin"})

    # Repositories: an original, and a fork written under its original in GSI2, counted there.
    _write(gateway, "createRepo", {"owner": "acme", "repoName": "rocket", "updatedAt": "2026-01-01T00:00:00Z"})
    _write(gateway, "createRepo", {"owner": "acme", "repoName": "anvil", "updatedAt": "2025-06-01T00:00:00Z"})
    _write(
        gateway,
        "createRepo",
        {"owner": "ann", "repoName": "rocket", "originalOwner": "acme", "updatedAt": "2026-02-01T00:00:00Z"},
    )
    fork = _stored(dynamodb, table, "REPO#ann#rocket", "REPO#ann#rocket")
    assert (fork["GSI2PK"], fork["GSI2SK"], fork["GSI3SK"]) == ("REPO#acme#rocket", "FORK#ann", "#2026-02-01T00:00:00Z")
    original = _stored(dynamodb, table, "REPO#acme#rocket", "REPO#acme#rocket")
    assert (original["GSI2PK"], original["GSI2SK"]) == ("REPO#acme#rocket", "#REPO#rocket")

    # Issues and pull requests take the next numbers of the repo's one sequence, padded in their keys.
    numbers = [
        _write(
            gateway, field, {"owner": "acme", "repoName": "rocket", "title": title}, "... on " + kind + " { number }"
        )
        for field, kind, title in (
            ("createIssue", "Issue", "Crash"),
            ("createPullRequest", "PullRequest", "Fix crash"),
            ("createIssue", "Issue", "Docs"),
        )
    ]
    assert [one["number"] for one in numbers] == ["1", "2", "3"]
    docs = _stored(dynamodb, table, "REPO#acme#rocket", "ISSUE#0000003")
    assert (docs["Title"], docs["Status"], docs["GSI4SK"]) == ("Docs", "open", "ISSUE#open#0000003")
    assert _stored(dynamodb, table, "PR#acme#rocket#0000002", "PR#acme#rocket#0000002")["GSI1SK"] == "PR#0000002"

    # A comment's id is a ULID; the issue number is plain in its key, whichever way the input wrote it.
    comment = _write(
        gateway,
        "createIssueComment",
        {"owner": "acme", "repoName": "rocket", "number": "0000001", "body": "Seen it", "author": "ann"},
        "... on IssueComment { commentId }",
    )
    assert len(comment["commentId"]) == 26
    assert _stored(dynamodb, table, "ISSUECOMMENT#acme#rocket#1", f"ISSUECOMMENT#{comment['commentId']}")
    _write(
        gateway,
        "createReaction",
        {"kind": "PR", "owner": "acme", "repoName": "rocket", "number": "2", "username": "ann", "emoji": "rocket"},
    )
    assert _stored(dynamodb, table, "PRREACTION#acme#rocket#2#ann", "PRREACTION#acme#rocket#2#ann")["Emoji"] == "rocket"
    _write(gateway, "createStar", {"owner": "acme", "repoName": "rocket", "username": "ann"})

    data, _ = answered(
        gateway,
        '{ repo(owner: "acme", repoName: "rocket") { starCount forkCount issueCount issuePrNumber'
        " forks { totalCount nodes { owner } } stargazers { totalCount nodes { username } }"
        " issues { totalCount nodes { number comments { nodes { body } } } } }"
        ' organization(orgName: "acme") { members { totalCount nodes { username } } repos { nodes { repoName } } } }',
    )
    assert data["repo"] == {
        "starCount": 1,
        "forkCount": 1,
        "issueCount": 2,
        "issuePrNumber": 3,
        "forks": {"totalCount": 1, "nodes": [{"owner": "ann"}]},
        "stargazers": {"totalCount": 1, "nodes": [{"username": "ann"}]},
        "issues": {
            "totalCount": 2,
            "nodes": [
                {"number": "3", "comments": {"nodes": []}},
                {"number": "1", "comments": {"nodes": [{"body": "Seen it"}]}},
            ],
        },
    }
    assert data["organization"]["members"] == {"totalCount": 1, "nodes": [{"username": "ann"}]}
    assert data["organization"]["repos"]["nodes"] == [{"repoName": "rocket"}, {"repoName": "anvil"}]

    # Changing a repo's update time re-keys its GSI3 item: it moves to the head of its owner's list.
    data, _ = answered(gateway, '{ repo(owner: "acme", repoName: "anvil") { version } }')
    changed = {"owner": "acme", "repoName": "anvil", "updatedAt": "2026-03-01T00:00:00Z"}
    _write(gateway, "updateRepo", changed | {"expectedVersion": data["repo"]["version"]})
    data, _ = answered(gateway, '{ organization(orgName: "acme") { repos { nodes { repoName } } } }')
    assert data["organization"]["repos"]["nodes"] == [{"repoName": "anvil"}, {"repoName": "rocket"}]

    # Closing an issue re-keys its GSI4 item: it leaves the open issues for the closed ones.
    data, _ = answered(gateway, '{ issue(owner: "acme", repoName: "rocket", number: "1") { version } }')
    closing = {"owner": "acme", "repoName": "rocket", "number": "1", "status": "closed"}
    _write(gateway, "updateIssue", closing | {"expectedVersion": data["issue"]["version"]})
    data, _ = answered(
        gateway,
        '{ repo(owner: "acme", repoName: "rocket") { open: issuesByStatus(status: "open") { nodes { number } }'
        ' closed: issuesByStatus(status: "closed") { nodes { number } } } }',
    )
    assert data["repo"] == {"open": {"nodes": [{"number": "3"}]}, "closed": {"nodes": [{"number": "1"}]}}

    # Deleting the fork takes it out of its original's count.
    _write(gateway, "deleteRepo", {"owner": "ann", "repoName": "rocket"})
    data, _ = answered(
        gateway, '{ repo(owner: "acme", repoName: "rocket") { forkCount forks { totalCount nodes { owner } } } }'
    )
    assert data["repo"] == {"forkCount": 0, "forks": {"totalCount": 0, "nodes": []}}
