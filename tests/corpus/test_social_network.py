"""AWS's social network schema design, served from a YAML declaration written from our docs alone.

One table, no index: a user's info and counts share the user's partition, and each list (followers, following,
posts, a post's likes, the timeline) has a partition of its own, named by a suffix on the owner's key. Each of the
design's seven access patterns is run its way with plain boto3 and asked through the gateway; answers and
calls/rounds are compared. The design spells no write: the plain PutItem each kind of item calls for is made through
the gateway and the stored item compared with the design's spelling of it. See social_network/README.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.server.declaration_file import load_file, parse
from gateway.surface.graph import build
from tests.corpus.checked import check_errors
from tests.corpus.reference import Design, table, typed, without_gateway_bookkeeping
from tests.corpus.social_network import data
from tests.support.gateway import Gateway, answered, assert_pattern, fill
from tests.support.mutations import mutate

FILE = Path(__file__).parent / "social_network" / "social_network.yaml"
DECLARATION = load_file(FILE)


@pytest.fixture(scope="module")
def deployed(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, Design]]:
    with table(dynamodb, "SNS", data.create_table) as name:
        fill(endpoint, name, data.items())
        with gateway_factory(name, declaration=DECLARATION) as gateway:
            yield gateway, Design(dynamodb, name)


def _after(key: str, prefix: str) -> str:
    return key.removeprefix(prefix)


# --- reads: the design's seven access patterns ------------------------------------------------------------------


def test_get_user_info_by_user_id(deployed: tuple[Gateway, Design]) -> None:
    # getUserInfoByUserID: Query PK = u#<userID>: the count item, then the info item (count < info).
    gateway, design = deployed
    design.calls = 0
    found = design.query("PK = :pk", {":pk": "u#12345"})
    assert [one["SK"] for one in found] == ["count", "info"]
    info = found[1]
    expected = {
        "userProfile": {
            "nodes": [
                {"__typename": "UserCount", "userId": "12345"},
                {
                    "__typename": "UserInfo",
                    "name": info["name"],
                    "content": info["content"],
                    "imageUrl": info["imageUrl"],
                },
            ]
        }
    }
    query = (
        '{ userProfile(userId: "12345") { nodes { __typename '
        "... on UserCount { userId } ... on UserInfo { name content imageUrl } } } }"
    )
    assert_pattern(gateway, query, expected, (design.calls, 1))


COUNTED = """
  UserCount:
    description: A user's counts of followers, followed users and posts.
    keys:
      table: {pk: "u#{userId}", sk: "count"}
    attributes:
      "follower#": {type: INT, writable: false}
      "following#": {type: INT, writable: false}
      "post#": {type: INT, writable: false}
"""


def test_user_counts(deployed: tuple[Gateway, Design], gateway_factory: Callable[..., Gateway]) -> None:
    # getUserInfoByUserID's count item, its counts declared as the design names them.
    _, design = deployed
    text = FILE.read_text()
    counted = text[: text.index("  UserCount:\n")] + COUNTED.lstrip("\n") + text[text.index("  Follower:\n") :]
    declaration = parse(counted, "social_network.yaml")
    build(declaration)
    design.calls = 0
    item = design.query("PK = :pk AND SK = :sk", {":pk": "u#12345", ":sk": "count"})[0]
    with gateway_factory(design.table, declaration=declaration) as gateway:
        fields = gateway.query('{ __type(name: "UserCount") { fields { name } } }')["data"]["__type"]["fields"]
        counts = " ".join(one["name"] for one in fields if one["name"] not in ("id", "userId", "version"))
        got, spent = answered(gateway, f'{{ userCount(userId: "12345") {{ {counts} }} }}')
    assert sorted(got["userCount"].values()) == sorted(item[name] for name in ("follower#", "following#", "post#"))
    assert spent == (design.calls, 1)


@pytest.mark.parametrize(
    ("kind", "root", "field"),
    [("follower", "followersOfUser", "followerId"), ("following", "followingOfUser", "followingId")],
)
def test_get_follower_and_following_lists(deployed: tuple[Gateway, Design], kind: str, root: str, field: str) -> None:
    # getFollowerListByUserID, getFollowingListByUserID: Query PK = u#<userID>#follower (#following).
    gateway, design = deployed
    design.calls = 0
    found = design.query("PK = :pk", {":pk": f"u#12345#{kind}"})
    assert found
    expected = {root: {"nodes": [{field: _after(one["SK"], "u#")} for one in found]}}
    assert_pattern(gateway, f'{{ {root}(userId: "12345") {{ nodes {{ {field} }} }} }}', expected, (design.calls, 1))


def test_get_post_list_by_user_id(deployed: tuple[Gateway, Design]) -> None:
    # getPostListByUserID: Query PK = u#<userID>#post.
    gateway, design = deployed
    design.calls = 0
    found = design.query("PK = :pk", {":pk": "u#12345#post"})
    assert len(found) == 2
    expected = {
        "postsOfUser": {
            "nodes": [
                {"postId": _after(one["SK"], "p#"), "content": one["content"], "timestamp": one["timestamp"]}
                for one in found
            ]
        }
    }
    assert_pattern(
        gateway, '{ postsOfUser(userId: "12345") { nodes { postId content timestamp } } }', expected, (design.calls, 1)
    )


def test_get_user_likes_by_post_id(deployed: tuple[Gateway, Design]) -> None:
    # getUserLikesByPostID: Query PK = p#<postID>#likelist.
    gateway, design = deployed
    design.calls = 0
    found = design.query("PK = :pk", {":pk": "p#10001#likelist"})
    assert len(found) == 3
    expected = {"likesOfPost": {"nodes": [{"userId": _after(one["SK"], "u#")} for one in found]}}
    assert_pattern(gateway, '{ likesOfPost(postId: "10001") { nodes { userId } } }', expected, (design.calls, 1))


def test_get_like_count_by_post_id(deployed: tuple[Gateway, Design]) -> None:
    # getLikeCountByPostID: GetItem p#<postID>#likecount / count; the count is text in etc.
    gateway, design = deployed
    design.calls = 0
    item = design.get({"PK": "p#10001#likecount", "SK": "count"})
    assert item is not None
    assert_pattern(
        gateway, '{ likeCount(postId: "10001") { etc } }', {"likeCount": {"etc": int(item["etc"])}}, (design.calls, 1)
    )


def test_get_timeline_by_user_id(deployed: tuple[Gateway, Design]) -> None:
    # getTimelineByUserID: Query PK = u#<userID>#timeline: p#<postID>#u#<author>, with its TTL.
    gateway, design = deployed
    design.calls = 0
    found = design.query("PK = :pk", {":pk": "u#12345#timeline"})
    assert len(found) == 2
    expected = {
        "timelineOfUser": {
            "nodes": [
                {
                    "postId": one["SK"].split("#")[1],
                    "authorId": one["SK"].split("#")[3],
                    "ttl": int(one["ttl"]),
                }
                for one in found
            ]
        }
    }
    assert_pattern(
        gateway, '{ timelineOfUser(userId: "12345") { nodes { postId authorId ttl } } }', expected, (design.calls, 1)
    )


# --- writes: not spelled by the design; the plain PutItem each item calls for -----------------------------------


WRITES = {
    # the mutation, its input, the item the design would put
    "a post": (
        "createPost",
        {
            "userId": "45678",
            "postId": "40001",
            "content": "Hello",
            "imageUrl": "s3://sns-images/40001.png",
            "timestamp": "1571900000",
        },
        data.post("45678", "40001", "Hello", "1571900000"),
    ),
    "a like": ("createPostLike", {"postId": "30001", "userId": "45678"}, data.like("30001", "45678")),
    "a timeline entry": (
        "createTimelineEntry",
        {"userId": "45678", "postId": "40001", "authorId": "12345", "ttl": data.TIMELINE_TTL},
        data.timeline("45678", "40001", "12345", data.TIMELINE_TTL),
    ),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_put(deployed: tuple[Gateway, Design], write: str) -> None:
    gateway, design = deployed
    field, given, item = WRITES[write]
    result, operations = mutate(gateway, field, given, "")
    assert result["__typename"] == field.removeprefix("create")
    assert operations == {"PutItem": 1}
    stored = without_gateway_bookkeeping(design.get({"PK": item["PK"], "SK": item["SK"]}))
    assert stored == item
    design.dynamodb.delete_item(TableName=design.table, Key=typed({"PK": item["PK"], "SK": item["SK"]}))


def test_the_filled_table_passes_check(
    deployed: tuple[Gateway, Design], endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, design = deployed
    assert check_errors(endpoint, design.table, FILE, capsys) == []
