"""The session table as the adapter's README creates it, and our own sessions, as its ``storeSession`` writes them.

``serializeSession`` marshals ``session.toObject()`` with its dates as ISO text and no undefined value: ``id``,
``shop``, ``state``, ``isOnline``, ``scope``, ``accessToken``, ``expires`` and, for an online session, the map
``onlineAccessInfo``. Offline sessions are ``offline_<shop>``; online ones ``<shop>_<user id>``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def create_table(dynamodb: Any, name: str) -> None:
    """A partition key alone, and ``shop_index`` on ``shop`` alone, projecting the keys only."""
    dynamodb.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": "id", "AttributeType": "S"},
            {"AttributeName": "shop", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "shop_index",
                "KeySchema": [{"AttributeName": "shop", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def offline(shop: str, token: str) -> dict[str, Any]:
    return {
        "id": f"offline_{shop}",
        "shop": shop,
        "state": "f3b1c0a2",
        "isOnline": False,
        "scope": "read_products,write_orders",
        "accessToken": token,
    }


def online(shop: str, user: int, token: str, expires: str) -> dict[str, Any]:
    return {
        "id": f"{shop}_{user}",
        "shop": shop,
        "state": "9a7e4d21",
        "isOnline": True,
        "scope": "read_products",
        "expires": expires,
        "accessToken": token,
        "onlineAccessInfo": {
            "expires_in": Decimal(86399),
            "associated_user_scope": "read_products",
            "associated_user": {"id": Decimal(user), "first_name": "Ann", "email": f"u{user}@example.com"},
        },
    }


SHOPS = ("alpha.myshopify.com", "beta.myshopify.com", "gamma.myshopify.com", "delta.myshopify.com")


def items() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, shop in enumerate(SHOPS):
        out.append(offline(shop, f"shpat_{n:04d}"))
        out += [
            online(shop, 100 * n + user, f"shpua_{n}{user}", f"2026-12-0{user}T10:00:00.000Z")
            for user in range(1, n + 2)
        ]
    return out
