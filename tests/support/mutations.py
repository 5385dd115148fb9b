"""One mutation sent as a client sends it: the document, its variables, and what came back."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.support.gateway import Gateway

ERRORS = """
  ... on MutationError { __typename message }
  ... on NotFoundError { entity }
  ... on ConflictError { reason currentVersion }
  ... on ValidationFailedError { field }
"""
"""The error members every design's mutation results share, with the fields tests read of them."""


def mutation(field: str, selection: str = "") -> str:
    """The document for mutation ``field``: its input and client token as variables, ``selection`` on its result."""
    return (
        f"mutation($input: {field[0].upper()}{field[1:]}Input!, $token: String) "
        f"{{ {field}(input: $input, clientToken: $token) {{ __typename {selection} {ERRORS} }} }}"
    )


def mutate(
    gateway: Gateway,
    field: str,
    data: dict[str, Any],
    selection: str = "",
    token: str | None = None,
    *,
    accounting: bool = True,
    **headers: str,
) -> tuple[Any, dict[str, int]]:
    """Run one mutation: its result and the DynamoDB operations it made, by name.

    With accounting (the default) the operations are checked against the requests counted on the wire and a GraphQL
    error fails the test. Without it the request goes as a plain client's would, for a gateway behind the fault
    proxy, whose retries are what is under test: no operations come back, and GraphQL errors stand in for a missing
    result.
    """
    variables = {"input": data, "token": token}
    if not accounting:
        document = {"query": mutation(field, selection), "variables": variables}
        response = gateway.http.post("/graphql", json=document, headers=headers)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        result = answer["data"][field] if answer.get("data") and answer["data"][field] else answer["errors"]
        return result, {}
    body = gateway.query(mutation(field, selection), variables, **headers)
    assert "errors" not in body, body["errors"]
    return body["data"][field], body["extensions"]["dynamodb"]["operations"]


def stored(dynamodb: Any, gateway: Gateway, pk: str, sk: str) -> dict[str, Any] | None:
    """An item as DynamoDB holds it, in its wire form, read with plain boto3 (strongly consistent)."""
    key = {"PK": {"S": pk}, "SK": {"S": sk}}
    found: dict[str, Any] | None = dynamodb.get_item(TableName=gateway.table, Key=key, ConsistentRead=True).get("Item")
    return found


def post_all(gateway: Gateway, requests: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Send every request at once on separate connections; the JSON bodies in order."""

    async def send() -> list[dict[str, Any]]:
        limits = httpx.Limits(max_connections=len(requests))
        async with httpx.AsyncClient(base_url=gateway.url, timeout=60, limits=limits) as client:
            responses = await asyncio.gather(
                *(client.post("/graphql", json={"query": q, "variables": v}) for q, v in requests)
            )
        assert all(response.status_code == 200 for response in responses)
        return [response.json() for response in responses]

    return asyncio.run(send())
