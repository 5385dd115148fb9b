"""The clone's table, created as its ``serverless.yml`` creates it, and our own items, spelled as ``toItem()`` does."""

from __future__ import annotations

from typing import Any


def create_table(dynamodb: Any, name: str) -> None:
    """``InstagramTable`` of ``serverless.yml``: ``PK``/``SK`` and ``GSI1`` (``GSI1PK``/``GSI1SK``), all text, ALL."""
    dynamodb.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": attribute, "AttributeType": "S"} for attribute in ("PK", "SK", "GSI1PK", "GSI1SK")
        ],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "GSI1",
                "KeySchema": [
                    {"AttributeName": "GSI1PK", "KeyType": "HASH"},
                    {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def user_key(username: str) -> dict[str, str]:
    return {"PK": f"USER#{username}", "SK": f"USER#{username}"}


def photo_key(username: str, photo_id: str) -> dict[str, str]:
    return {"PK": f"UP#{username}", "SK": f"PHOTO#{photo_id}"}


def user(username: str, name: str, followers: int = 0, following: int = 0) -> dict[str, Any]:
    """``User.toItem()``: the counts are written, 0 for a new user (``fromItem`` reads them unguarded)."""
    return {
        **user_key(username),
        "username": username,
        "name": name,
        "followerCount": followers,
        "followingCount": following,
    }


def photo(username: str, photo_id: str, url: str, likes: int = 0, comments: int = 0) -> dict[str, Any]:
    """``Photo.toItem()``: ``UP#<username>`` / ``PHOTO#<ulid>``, the counts written from 0."""
    return {
        **photo_key(username, photo_id),
        "username": username,
        "url": url,
        "photoId": photo_id,
        "likesCount": likes,
        "commentCount": comments,
    }


def like(liking_username: str, photo_id: str, like_id: str) -> dict[str, Any]:
    """``Like.toItem()``: unique per liker in the table, ordered by its own ULID in GSI1 (same partition)."""
    return {
        "PK": f"PL#{photo_id}",
        "SK": f"LIKE#{liking_username}",
        "GSI1PK": f"PL#{photo_id}",
        "GSI1SK": f"LIKE#{like_id}",
        "likingUsername": liking_username,
        "photoId": photo_id,
        "likeId": like_id,
    }


def comment(commenting_username: str, photo_id: str, content: str, comment_id: str) -> dict[str, Any]:
    """``Comment.toItem()``: ``PC#<photoId>`` / ``COMMENT#<ulid>``."""
    return {
        "PK": f"PC#{photo_id}",
        "SK": f"COMMENT#{comment_id}",
        "commentingUsername": commenting_username,
        "photoId": photo_id,
        "content": content,
        "commentId": comment_id,
    }


def follow(followed: str, following: str) -> dict[str, Any]:
    """``Follow.toItem()``: under the followed user in the table, under the follower in GSI1."""
    return {
        "PK": f"FOLLOW#{followed}",
        "SK": f"FOLLOW#{following}",
        "GSI1PK": f"FOLLOW#{following}",
        "GSI1SK": f"FOLLOW#{followed}",
        "followedUsername": followed,
        "followingUsername": following,
    }


USERS = {"alexdebrie": "Alex DeBrie", "marcia": "Marcia Villalba", "ben": "Ben Kehoe", "ana": "Ana Lopez"}
PHOTOS = (
    # owner, ULID, url
    ("alexdebrie", "01FZRX1A2B3C4D5E6F7G8H9J0K", "https://example.com/p/sunrise.jpg"),
    ("alexdebrie", "01FZRX4M5N6P7Q8R9S0T1V2W3X", "https://example.com/p/omaha.jpg"),
    ("marcia", "01FZRX7Y8Z9A0B1C2D3E4F5G6H", "https://example.com/p/seville.jpg"),
)
SUNRISE = PHOTOS[0][1]
LIKES = (
    # liker, photo, like ULID: ULIDs not in likers' order, so the table and GSI1 order differ
    ("marcia", SUNRISE, "01FZRY0000000000000000000C"),
    ("ben", SUNRISE, "01FZRY0000000000000000000A"),
    ("ana", SUNRISE, "01FZRY0000000000000000000B"),
    ("ben", PHOTOS[2][1], "01FZRY0000000000000000000D"),
)
COMMENTS = (
    ("marcia", SUNRISE, "What a view!", "01FZRZ0000000000000000000A"),
    ("ben", SUNRISE, "Where is this?", "01FZRZ0000000000000000000B"),
    ("alexdebrie", SUNRISE, "Omaha, early.", "01FZRZ0000000000000000000C"),
)
FOLLOWS = (("alexdebrie", "marcia"), ("alexdebrie", "ben"), ("alexdebrie", "ana"), ("marcia", "alexdebrie"))


def items() -> list[dict[str, Any]]:
    """Every item of the fixture, its counts as the clone's transactions leave them."""
    followers = {name: sum(1 for followed, _ in FOLLOWS if followed == name) for name in USERS}
    following = {name: sum(1 for _, who in FOLLOWS if who == name) for name in USERS}
    out = [user(name, full, followers[name], following[name]) for name, full in USERS.items()]
    for owner, photo_id, url in PHOTOS:
        likes = sum(1 for one in LIKES if one[1] == photo_id)
        comments = sum(1 for one in COMMENTS if one[1] == photo_id)
        out.append(photo(owner, photo_id, url, likes, comments))
    out += [like(*spec) for spec in LIKES]
    out += [comment(*spec) for spec in COMMENTS]
    out += [follow(*pair) for pair in FOLLOWS]
    return out
