"""The schema's table (``SocialNetworkSchema.json``: ``SNS``, ``PK``/``SK``, no index) and our own items, spelled as
its sample data spells them."""

from __future__ import annotations

from typing import Any


def create_table(dynamodb: Any, name: str) -> None:
    """``SNS``: text ``PK`` and ``SK``, no secondary index (on demand here; the model is provisioned)."""
    dynamodb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key in ("PK", "SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST",
    )


def info(user: str, name: str) -> dict[str, Any]:
    """``u#<userID>`` / ``info``: name, content, imageUrl, etc."""
    return {
        "PK": f"u#{user}",
        "SK": "info",
        "name": name,
        "content": f"My name is {name}",
        "imageUrl": f"s3://sns-images/{user}.png",
        "etc": "...",
    }


def count(user: str, followers: int, following: int, posts: int) -> dict[str, Any]:
    """``u#<userID>`` / ``count``: the counts, under names that end in ``#``."""
    return {"PK": f"u#{user}", "SK": "count", "follower#": followers, "following#": following, "post#": posts}


def edge(user: str, kind: str, other: str) -> dict[str, Any]:
    """``u#<userID>#follower`` or ``#following`` / ``u#<other>``: keys only."""
    return {"PK": f"u#{user}#{kind}", "SK": f"u#{other}"}


def post(user: str, post_id: str, content: str, timestamp: str) -> dict[str, Any]:
    """``u#<userID>#post`` / ``p#<postID>``; the timestamp is epoch seconds as text."""
    return {
        "PK": f"u#{user}#post",
        "SK": f"p#{post_id}",
        "content": content,
        "imageUrl": f"s3://sns-images/{post_id}.png",
        "timestamp": timestamp,
    }


def like(post_id: str, user: str) -> dict[str, Any]:
    """``p#<postID>#likelist`` / ``u#<userID>``: keys only."""
    return {"PK": f"p#{post_id}#likelist", "SK": f"u#{user}"}


def like_count(post_id: str, likes: int) -> dict[str, Any]:
    """``p#<postID>#likecount`` / ``count``: the sample keeps the count in ``etc``, as text."""
    return {"PK": f"p#{post_id}#likecount", "SK": "count", "etc": str(likes)}


def timeline(user: str, post_id: str, author: str, ttl: int) -> dict[str, Any]:
    """``u#<userID>#timeline`` / ``p#<postID>#u#<author>``, removed by DynamoDB's TTL after ``ttl``."""
    return {"PK": f"u#{user}#timeline", "SK": f"p#{post_id}#u#{author}", "ttl": ttl}


USERS = {"12345": "hyuklee", "23456": "mina", "34567": "joon", "45678": "sora"}
FOLLOWS = (("23456", "12345"), ("34567", "12345"), ("45678", "12345"), ("12345", "23456"), ("12345", "34567"))
"""(follower, followed) pairs; each is two items, one in each user's partition."""
POSTS = (
    ("12345", "10001", "First light over the river", "1571827560"),
    ("12345", "10002", "Lunch", "1571827561"),
    ("23456", "20001", "A new lens", "1571831160"),
    ("34567", "30001", "Training day", "1571834760"),
)
LIKES = {"10001": ("23456", "34567", "45678"), "20001": ("12345",)}
TIMELINE_TTL = 1893456000
"""2030-01-01: the entries are live during the tests, as DynamoDB Local keeps them either way."""


def items() -> list[dict[str, Any]]:
    """Every item of the fixture: each follow written twice, posts fanned out to their author's followers' timelines,
    the counts as they stand."""
    out: list[dict[str, Any]] = []
    for user, name in USERS.items():
        followers = sum(1 for _, followed in FOLLOWS if followed == user)
        following = sum(1 for follower, _ in FOLLOWS if follower == user)
        posts = sum(1 for author, *_ in POSTS if author == user)
        out += [info(user, name), count(user, followers, following, posts)]
    for follower, followed in FOLLOWS:
        out += [edge(followed, "follower", follower), edge(follower, "following", followed)]
    for author, post_id, content, timestamp in POSTS:
        out.append(post(author, post_id, content, timestamp))
        out += [
            timeline(follower, post_id, author, TIMELINE_TTL) for follower, followed in FOLLOWS if followed == author
        ]
        out.append(like_count(post_id, len(LIKES.get(post_id, ()))))
    out += [like(post_id, user) for post_id, users in LIKES.items() for user in users]
    return out
