"""Alex DeBrie's Instagram clone, served from a YAML declaration written from our docs alone.

Users, photos, likes, comments and follows on one table and an inverted GSI1; likes and comments are counted on the
photo, follows on both users, each in the transaction that writes the edge. Every operation of the clone's
``src/data/`` is run its way with plain boto3 and asked through the gateway; answers and calls/rounds are compared,
and writes are made twice, the clone's way and the gateway's, on twin items read back with GetItem. See
instagram/README.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.server.declaration_file import load_file
from tests.corpus.checked import check_errors
from tests.corpus.instagram import data
from tests.corpus.reference import Design, plain, table, typed, without_gateway_bookkeeping
from tests.support.gateway import Gateway, assert_pattern, fill
from tests.support.mutations import mutate

FILE = Path(__file__).parent / "instagram" / "instagram.yaml"
DECLARATION = load_file(FILE)
PHOTO = f'username: "alexdebrie", photoId: "{data.SUNRISE}"'
"""The arguments of a photo's root lists: its owner too, though their Query is on the photo's id alone."""


@pytest.fixture(scope="module")
def deployed(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, Design]]:
    with table(dynamodb, "dynamodb-instagram", data.create_table) as name:
        fill(endpoint, name, data.items())
        with gateway_factory(name, declaration=DECLARATION) as gateway:
            yield gateway, Design(dynamodb, name)


def _user(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "username": item["username"],
        "name": item["name"],
        "followerCount": item["followerCount"],
        "followingCount": item["followingCount"],
    }


def _batch_users(design: Design, usernames: list[str]) -> list[dict[str, Any]]:
    """The clone's hydration of a list of follows: one BatchGetItem of the users (order as DynamoDB answers)."""
    design.calls += 1
    answer = design.dynamodb.batch_get_item(
        RequestItems={design.table: {"Keys": [typed(data.user_key(name)) for name in usernames]}}
    )
    return [plain(item) for item in answer["Responses"][design.table]]


# --- reads --------------------------------------------------------------------------------------------------------


def test_get_user(deployed: tuple[Gateway, Design]) -> None:
    # getUser: GetItem USER#<username> / USER#<username>.
    gateway, design = deployed
    design.calls = 0
    item = design.get(data.user_key("alexdebrie"))
    assert item is not None
    query = '{ user(username: "alexdebrie") { username name followerCount followingCount } }'
    assert_pattern(gateway, query, {"user": _user(item)}, (design.calls, 1))


def test_get_photo(deployed: tuple[Gateway, Design]) -> None:
    # getPhoto: GetItem UP#<username> / PHOTO#<photoId>; the counts are the photo's own attributes.
    gateway, design = deployed
    design.calls = 0
    item = design.get(data.photo_key("alexdebrie", data.SUNRISE))
    assert item is not None and item["likesCount"] == 3
    expected = {
        "photo": {
            "photoId": item["photoId"],
            "url": item["url"],
            "likesCount": item["likesCount"],
            "commentCount": item["commentCount"],
        }
    }
    query = f'{{ photo(username: "alexdebrie", photoId: "{data.SUNRISE}") {{ photoId url likesCount commentCount }} }}'
    assert_pattern(gateway, query, expected, (design.calls, 1))


def test_photos_of_user(deployed: tuple[Gateway, Design]) -> None:
    # The README's "browse all Photos for a particular User in reverse-chronological order" (no code in src/data/):
    # Query PK = UP#<username>, descending; the ULIDs sort by upload time.
    gateway, design = deployed
    design.calls = 0
    found = design.query("PK = :pk", {":pk": "UP#alexdebrie"}, ScanIndexForward=False)
    assert [one["photoId"] for one in found] == [data.PHOTOS[1][1], data.SUNRISE]
    expected = {"photosOfUser": {"nodes": [{"photoId": one["photoId"], "url": one["url"]} for one in found]}}
    assert_pattern(
        gateway, '{ photosOfUser(username: "alexdebrie") { nodes { photoId url } } }', expected, (design.calls, 1)
    )


def test_list_likes_for_photo(deployed: tuple[Gateway, Design]) -> None:
    # listLikesForPhoto: Query GSI1, GSI1PK = PL#<photoId>, descending: newest like first (by the like's ULID).
    gateway, design = deployed
    design.calls = 0
    found = design.query(
        "GSI1PK = :gsi1pk", {":gsi1pk": f"PL#{data.SUNRISE}"}, IndexName="GSI1", ScanIndexForward=False
    )
    assert [one["likingUsername"] for one in found] == ["marcia", "ana", "ben"]
    expected = {
        "likesOfPhoto": {"nodes": [{"likingUsername": one["likingUsername"], "likeId": one["likeId"]} for one in found]}
    }
    assert_pattern(
        gateway, f"{{ likesOfPhoto({PHOTO}) {{ nodes {{ likingUsername likeId }} }} }}", expected, (design.calls, 1)
    )


def test_list_comments_for_photo(deployed: tuple[Gateway, Design]) -> None:
    # listCommentsForPhoto: Query PK = PC#<photoId>, descending: newest comment first.
    gateway, design = deployed
    design.calls = 0
    found = design.query("PK = :pk", {":pk": f"PC#{data.SUNRISE}"}, ScanIndexForward=False)
    assert len(found) == 3
    expected = {
        "commentsOfPhoto": {
            "nodes": [
                {
                    "commentId": one["commentId"],
                    "commentingUsername": one["commentingUsername"],
                    "content": one["content"],
                }
                for one in found
            ]
        }
    }
    query = f"{{ commentsOfPhoto({PHOTO}) {{ nodes {{ commentId commentingUsername content }} }} }}"
    assert_pattern(gateway, query, expected, (design.calls, 1))


def test_list_followers_of_user(deployed: tuple[Gateway, Design]) -> None:
    # listFollowersOfUser: Query PK = FOLLOW#<username>, then BatchGetItem of the followers: 2 calls, 2 rounds.
    gateway, design = deployed
    design.calls = 0
    follows = design.query("PK = :pk", {":pk": "FOLLOW#alexdebrie"})
    users = _batch_users(design, [one["followingUsername"] for one in follows])
    by_name = {one["username"]: one for one in users}
    expected = {"followersOfUser": {"nodes": [_user(by_name[one["followingUsername"]]) for one in follows]}}
    query = '{ followersOfUser(username: "alexdebrie") { nodes { username name followerCount followingCount } } }'
    assert_pattern(gateway, query, expected, (design.calls, 2))


def test_list_followed_by_user(deployed: tuple[Gateway, Design]) -> None:
    # listFollowedByUser: Query GSI1, GSI1PK = FOLLOW#<username>, then BatchGetItem of the followed: 2 calls, 2 rounds.
    gateway, design = deployed
    design.calls = 0
    follows = design.query("GSI1PK = :gsi1pk", {":gsi1pk": "FOLLOW#marcia"}, IndexName="GSI1")
    users = _batch_users(design, [one["followedUsername"] for one in follows])
    assert [one["username"] for one in users] == ["alexdebrie"]
    expected = {"followedByUser": {"nodes": [_user(one) for one in users]}}
    query = '{ followedByUser(username: "marcia") { nodes { username name followerCount followingCount } } }'
    assert_pattern(gateway, query, expected, (design.calls, 2))


def test_a_photo_with_its_likes_and_comments(deployed: tuple[Gateway, Design]) -> None:
    # What the clone's photo page needs, asked in one document: the photo (GetItem) beside its likes (GSI1) and its
    # comments: the three requests the clone sends one after another, sent together.
    gateway, design = deployed
    design.calls = 0
    item = design.get(data.photo_key("alexdebrie", data.SUNRISE))
    likes = design.query("GSI1PK = :p", {":p": f"PL#{data.SUNRISE}"}, IndexName="GSI1", ScanIndexForward=False)
    comments = design.query("PK = :pk", {":pk": f"PC#{data.SUNRISE}"}, ScanIndexForward=False)
    assert item is not None
    expected = {
        "photo": {
            "url": item["url"],
            "likesCount": item["likesCount"],
            "commentCount": item["commentCount"],
            "likes": {"nodes": [{"likingUsername": one["likingUsername"]} for one in likes]},
            "comments": {"nodes": [{"content": one["content"]} for one in comments]},
        }
    }
    query = (
        f'{{ photo(username: "alexdebrie", photoId: "{data.SUNRISE}") {{ url likesCount commentCount '
        "likes { nodes { likingUsername } } comments { nodes { content } } } }"
    )
    assert_pattern(gateway, query, expected, (design.calls, 1))


# --- writes -------------------------------------------------------------------------------------------------------


def _name() -> str:
    return f"u{uuid.uuid4().hex[:8]}"


def test_create_user(deployed: tuple[Gateway, Design]) -> None:
    # createUser: PutItem of User.toItem(), counts 0, on attribute_not_exists(PK).
    gateway, design = deployed
    theirs, mine = _name(), _name()
    design.send(
        "put_item",
        TableName=design.table,
        Item=typed(data.user(theirs, "Ann")),
        ConditionExpression="attribute_not_exists(PK)",
    )
    result, operations = mutate(gateway, "createUser", {"username": mine, "name": "Ann"}, "... on User { username }")
    assert result == {"__typename": "User", "username": mine}
    assert operations == {"PutItem": 1}
    reference = design.get(data.user_key(theirs))
    stored = without_gateway_bookkeeping(design.get(data.user_key(mine)))
    assert stored == {**(reference or {}), **data.user_key(mine), "username": mine}
    again, _ = mutate(gateway, "createUser", {"username": mine, "name": "Ann"}, "")
    assert again["__typename"] == "ConflictError"  # the clone's attribute_not_exists(PK): usernames are unique


def test_create_photo(deployed: tuple[Gateway, Design]) -> None:
    # createPhoto: PutItem of Photo.toItem() under a new ULID, counts 0, on attribute_not_exists(PK).
    gateway, design = deployed
    owner = _name()
    for name in (owner,):
        design.dynamodb.put_item(TableName=design.table, Item=typed(data.user(name, "Owner")))
    theirs = "01FZS00000000000000000000A"
    design.send(
        "put_item",
        TableName=design.table,
        Item=typed(data.photo(owner, theirs, "https://example.com/p/new.jpg")),
        ConditionExpression="attribute_not_exists(PK)",
    )
    result, operations = mutate(
        gateway, "createPhoto", {"username": owner, "url": "https://example.com/p/new.jpg"}, "... on Photo { photoId }"
    )
    assert result["__typename"] == "Photo"
    mine = result["photoId"]
    assert len(mine) == 26 and mine > theirs  # a ULID, minted now
    assert operations == {"PutItem": 1}
    reference = design.get(data.photo_key(owner, theirs))
    stored = without_gateway_bookkeeping(design.get(data.photo_key(owner, mine)))
    assert stored == {**(reference or {}), **data.photo_key(owner, mine), "photoId": mine}


def _twin_photos(design: Design) -> tuple[tuple[str, str], tuple[str, str]]:
    """Two equal photos of one new user: one the clone's request changes, one the gateway does."""
    owner = _name()
    design.dynamodb.put_item(TableName=design.table, Item=typed(data.user(owner, "Owner")))
    ids = ("01FZS1" + uuid.uuid4().hex[:20].upper(), "01FZS2" + uuid.uuid4().hex[:20].upper())
    for photo_id in ids:
        design.dynamodb.put_item(TableName=design.table, Item=typed(data.photo(owner, photo_id, "https://x/p.jpg")))
    return (owner, ids[0]), (owner, ids[1])


def _counted_put(design: Design, item: dict[str, Any], parent: dict[str, str], counter: str) -> None:
    """likePhoto / commentOnPhoto: the item if new, and the photo's count + 1 if the photo exists, in one
    TransactWriteItems."""
    design.send(
        "transact_write_items",
        TransactItems=[
            {
                "Put": {
                    "TableName": design.table,
                    "Item": typed(item),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            },
            {
                "Update": {
                    "TableName": design.table,
                    "Key": typed(parent),
                    "ConditionExpression": "attribute_exists(PK)",
                    "UpdateExpression": "SET #c = #c + :inc",
                    "ExpressionAttributeNames": {"#c": counter},
                    "ExpressionAttributeValues": typed({":inc": 1}),
                }
            },
        ],
    )


_ULID = "01FZS3000000000000000000AA"
COUNTED = {
    # pattern: the mutation, its input beside photoId, the member's partition prefix, the photo's counter
    "likePhoto": ("createLike", {"likingUsername": "ben", "likeId": _ULID}, "PL", "likesCount"),
    "commentOnPhoto": ("createComment", {"commentingUsername": "ben", "content": "Nice"}, "PC", "commentCount"),
}
_IDS = ("PK", "SK", "GSI1PK", "photoId", "commentId")


def _counted_item(pattern: str, photo_id: str) -> dict[str, Any]:
    if pattern == "likePhoto":
        return data.like("ben", photo_id, _ULID)
    return data.comment("ben", photo_id, "Nice", _ULID)


@pytest.mark.xfail(
    strict=True,
    reason="a counter on a parent whose key the member does not hold: a like or a comment holds the photo's id, not "
    "its owner's username (UP#<username>); the model refuses counter= there (it built without a word, and every "
    "createLike was INTERNAL, before 0.3), so the counts are not kept",
)
@pytest.mark.parametrize("pattern", sorted(COUNTED))
def test_counted_on_the_photo(deployed: tuple[Gateway, Design], pattern: str) -> None:
    # likePhoto, commentOnPhoto: the member if new, and the photo's count + 1, in one TransactWriteItems.
    gateway, design = deployed
    field, given, prefix, counter = COUNTED[pattern]
    (owner, theirs), (_, mine) = _twin_photos(design)
    design.calls = 0
    _counted_put(design, _counted_item(pattern, theirs), data.photo_key(owner, theirs), counter)
    result, operations = mutate(gateway, field, {"photoId": mine, **given}, "")
    assert result["__typename"] == field.removeprefix("create")
    assert operations == {"TransactWriteItems": design.calls}
    reference = design.query("PK = :pk", {":pk": f"{prefix}#{theirs}"})
    stored = design.query("PK = :pk", {":pk": f"{prefix}#{mine}"})
    assert len(stored) == len(reference) == 1
    mine_, theirs_ = (
        {name: value for name, value in (without_gateway_bookkeeping(one[0]) or {}).items() if name not in _IDS}
        for one in (stored, reference)
    )
    assert mine_ == theirs_
    assert (design.get(data.photo_key(owner, mine)) or {})[counter] == 1


def _follow(design: Design, followed: str, following: str) -> None:
    """followUser: the follow if new, and both users' counts + 1 if they exist, in one TransactWriteItems."""
    counts = ((followed, "followerCount"), (following, "followingCount"))
    design.send(
        "transact_write_items",
        TransactItems=[
            {
                "Put": {
                    "TableName": design.table,
                    "Item": typed(data.follow(followed, following)),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            },
            *(
                {
                    "Update": {
                        "TableName": design.table,
                        "Key": typed(data.user_key(name)),
                        "ConditionExpression": "attribute_exists(PK)",
                        "UpdateExpression": "SET #c = #c + :inc",
                        "ExpressionAttributeNames": {"#c": counter},
                        "ExpressionAttributeValues": typed({":inc": 1}),
                    }
                }
                for name, counter in counts
            ),
        ],
    )


def test_follow_user(deployed: tuple[Gateway, Design]) -> None:
    gateway, design = deployed
    theirs, mine, fan = _name(), _name(), _name()
    for name in (theirs, mine, fan):
        design.dynamodb.put_item(TableName=design.table, Item=typed(data.user(name, name)))
    design.calls = 0
    _follow(design, theirs, fan)
    result, operations = mutate(
        gateway,
        "createFollow",
        {"followedUsername": mine, "followingUsername": fan},
        "... on Follow { followedUsername }",
    )
    assert result == {"__typename": "Follow", "followedUsername": mine}
    assert operations == {"TransactWriteItems": design.calls}
    stored = without_gateway_bookkeeping(design.get({"PK": f"FOLLOW#{mine}", "SK": f"FOLLOW#{fan}"}))
    assert stored == data.follow(mine, fan)
    assert (design.get(data.user_key(mine)) or {})["followerCount"] == 1
    assert (design.get(data.user_key(fan)) or {})["followingCount"] == 2  # followed both
    again, _ = mutate(gateway, "createFollow", {"followedUsername": mine, "followingUsername": fan}, "")
    assert again["__typename"] == "ConflictError"  # the clone's attribute_not_exists(PK): followed once
    ghost = _name()
    missing, _ = mutate(gateway, "createFollow", {"followedUsername": mine, "followingUsername": ghost}, "")
    assert missing["__typename"] == "NotFoundError"  # the clone's attribute_exists(PK) on both users
    assert design.get({"PK": f"FOLLOW#{mine}", "SK": f"FOLLOW#{ghost}"}) is None
    assert design.get(data.user_key(ghost)) is None


def test_the_filled_table_passes_check(
    deployed: tuple[Gateway, Design], endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, design = deployed
    assert check_errors(endpoint, design.table, FILE, capsys) == []
