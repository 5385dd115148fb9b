"""Filtered pages fill: DynamoDB applies a filter after Limit, so the gateway reads on until the page is full, the
collection ends or the read budget is spent (and says so); never a Scan. Sorting both ways is one Query.

The property test (test_graph_properties.py) checks generated filters and orders against the reference at any
depth; these are the named cases, with their exact costs on the wire.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Model
from gateway.dynamo.store import table_definition
from gateway.execution.queries import filter_limits
from tests.support.contract import create_table
from tests.support.gateway import Gateway, fill

TICKETS = 60
OPEN_EVERY = 10  # tickets 0, 10, 20, ... are open: 6 of 60


def _ticket(n: int) -> str:
    return f"20260101T{n:06d}Z-{n:02d}"


@pytest.fixture(scope="module")
def sparse(dynamodb: Any) -> Iterator[str]:
    """One user with 60 tickets of which one in ten is open, another with none; written with plain boto3."""
    name = "filters-sparse"
    create_table(dynamodb, name)
    items = [
        {"PK": "ORG#acme", "SK": "METADATA#acme", "name": "Acme", "userCount": 2},
        {"PK": "ORG#acme", "SK": "USER#ann", "GSI1PK": "ORG#acme#USER#ann", "GSI1SK": "USER#ann", "ticketCount": 60},
        {"PK": "ORG#acme", "SK": "USER#bob", "GSI1PK": "ORG#acme#USER#bob", "GSI1SK": "USER#bob", "role": "admin"},
    ]
    for n in range(TICKETS):
        ticket = _ticket(n)
        status = "open" if n % OPEN_EVERY == 0 else "closed"
        items.append(
            {"PK": f"TICKET#{ticket}", "SK": f"TICKET#{ticket}", "GSI1PK": "ORG#acme#USER#ann"}
            | {"GSI1SK": f"TICKET#{ticket}", "title": f"Ticket {n}", "status": status}
        )
    for item in items:
        dynamodb.put_item(
            TableName=name,
            Item={key: {"N": str(value)} if isinstance(value, int) else {"S": value} for key, value in item.items()},
        )
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def graph(gateway_factory: Callable[..., Gateway], sparse: str) -> Iterator[Gateway]:
    with gateway_factory(sparse) as running:
        yield running


@pytest.fixture(scope="module")
def one_call(gateway_factory: Callable[..., Gateway], sparse: str) -> Iterator[Gateway]:
    with gateway_factory(sparse, filter_read_calls=1) as running:
        yield running


TICKETS_QUERY = (
    "query($first: Int, $after: String, $where: UserTicketsFilter, $order: SortOrder) {"
    ' user(orgName: "acme", username: "ann") { tickets(first: $first, after: $after, where: $where, order: $order)'
    " { nodes { ticketId status } pageInfo { hasNextPage endCursor readLimitReached } } } }"
)
OPEN = {"status": {"eq": "open"}}
OPEN_NEWEST_FIRST = [_ticket(n) for n in range(TICKETS - 1, -1, -1) if n % OPEN_EVERY == 0]


def _tickets(gateway: Gateway, **variables: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    body = gateway.query(TICKETS_QUERY, variables)
    assert "errors" not in body, body["errors"]
    return body["data"]["user"]["tickets"], body["extensions"]["dynamodb"]


def test_a_sparse_filter_fills_its_page_reading_on(graph: Gateway) -> None:
    """first: 3 of tickets one in ten open, newest first: DynamoDB's Limit 4 finds none, the next Query (Limit 16)
    two, the third (Limit 64) the rest: the page is full after three Queries, the user read beside the first."""
    page, cost = _tickets(graph, first=3, where=OPEN)
    assert [node["ticketId"] for node in page["nodes"]] == OPEN_NEWEST_FIRST[:3]
    assert page["pageInfo"]["hasNextPage"] is True
    assert page["pageInfo"]["readLimitReached"] is False
    assert cost["operations"] == {"Query": 3, "BatchGetItem": 1}
    assert cost["rounds"] == 3
    assert filter_limits(3, 3) == [4, 16, 64]


def test_walking_a_filtered_collection_with_cursors_returns_every_match_once(graph: Gateway) -> None:
    seen: list[str] = []
    after = None
    for _ in range(10):
        page, cost = _tickets(graph, first=2, after=after, where=OPEN)
        assert "Scan" not in cost["operations"]
        seen += [node["ticketId"] for node in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == OPEN_NEWEST_FIRST


def test_a_page_stopped_by_its_budget_says_so_and_resumes_where_reading_stopped(one_call: Gateway) -> None:
    """With one Query per page, first: 2 reads 3 tickets at a time: most pages stop early, some empty, and their
    endCursor marks where reading stopped, so walking on loses and repeats nothing."""
    seen: list[str] = []
    stops = 0
    after = None
    for _ in range(TICKETS):
        page, cost = _tickets(one_call, first=2, after=after, where=OPEN)
        assert cost["operations"].get("Query") == 1
        seen += [node["ticketId"] for node in page["nodes"]]
        info = page["pageInfo"]
        if info["readLimitReached"]:
            stops += 1
            assert info["hasNextPage"] is True and info["endCursor"] is not None
        if not info["hasNextPage"]:
            break
        after = info["endCursor"]
    assert seen == OPEN_NEWEST_FIRST
    assert stops >= TICKETS // 3 - len(OPEN_NEWEST_FIRST)


def test_an_unfiltered_order_reads_the_other_way_in_one_query(graph: Gateway) -> None:
    page, cost = _tickets(graph, first=5, order="ASCENDING")
    assert [node["ticketId"] for node in page["nodes"]] == [_ticket(n) for n in range(5)]
    assert cost["operations"] == {"Query": 1, "BatchGetItem": 1}
    default, _ = _tickets(graph, first=5, order="DESCENDING")
    assert [node["ticketId"] for node in default["nodes"]] == [_ticket(n) for n in range(59, 54, -1)]


def test_and_or_and_every_operator_are_applied_by_dynamodb(graph: Gateway) -> None:
    cases: list[tuple[dict[str, Any], list[int]]] = [
        ({"title": {"beginsWith": "Ticket 5"}}, [5, *range(50, 60)]),
        ({"title": {"in": ["Ticket 1", "Ticket 2", "nope"]}}, [1, 2]),
        ({"title": {"between": ["Ticket 3", "Ticket 31"]}}, [3, 30, 31]),
        ({"status": {"ne": "closed"}, "title": {"beginsWith": "Ticket 2"}}, [20]),
        (
            {"or": [{"title": {"eq": "Ticket 7"}}, {"status": {"eq": "open"}, "title": {"beginsWith": "Ticket 4"}}]},
            [7, 40],
        ),
        ({"and": [{"title": {"exists": True}}, {"title": {"eq": "Ticket 9"}}]}, [9]),
        ({"title": {"exists": False}}, []),
    ]
    for where, expected in cases:
        page, cost = _tickets(graph, first=20, where=where, order="ASCENDING")
        assert [node["ticketId"] for node in page["nodes"]] == [_ticket(n) for n in sorted(expected)], where
        assert page["pageInfo"]["hasNextPage"] is False
        assert "Scan" not in cost["operations"]


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ({"title": {"in": []}}, "1 to 100"),
        ({"title": {"in": [f"t{n}" for n in range(101)]}}, "1 to 100"),
        ({"title": {"between": ["a"]}}, "two values"),
        ({"title": {"between": ["b", "a"]}}, "low bound"),
        ({"title": {"beginsWith": ""}}, "one character"),
        ({"or": []}, "at least one"),
        ({"and": [{"and": [{"and": [{"and": [{"title": {"eq": "x"}}]}]}]}]}, "nest"),
        ({"or": [{"title": {"eq": f"t{n}"}} for n in range(33)]}, "at most 32"),
    ],
)
def test_a_filter_dynamodb_would_refuse_is_refused_before_any_query(
    graph: Gateway, where: dict[str, Any], message: str
) -> None:
    body = graph.query(TICKETS_QUERY, {"first": 2, "where": where})
    error = body["errors"][0]
    assert error["extensions"] == {"code": "BAD_USER_INPUT", "argument": "where"}
    assert message in error["message"]
    assert "Query" not in body["extensions"]["dynamodb"]["operations"]


def test_explain_shows_every_query_a_filtered_page_may_send(graph: Gateway) -> None:
    response = graph.http.post(
        "/graphql",
        json={"query": TICKETS_QUERY, "variables": {"first": 3, "where": OPEN}},
        headers={"X-Tablegraph-Explain": "1"},
    )
    explained = response.json()["extensions"]["explain"]
    queries = [one for one in explained["requests"] if one["operation"] == "Query"]
    assert [one["limit"] for one in queries] == filter_limits(3, 3) == [4, 16, 64]
    assert [one["round"] for one in queries] == [1, 2, 3]
    assert {one["filter"] for one in queries} == {"status = 'open'"}
    _, cost = _tickets(graph, first=3, where=OPEN)
    assert explained["calls"] >= cost["calls"] and explained["rounds"] >= cost["rounds"]


SHELF = Entity("Shelf", {None: KeyShape.of("SHELF#{shelfId}", "INFO")}, {"Name": "S"})
BOOK = Entity(
    "Book",
    {None: KeyShape.of("SHELF#{shelfId}", "ITEM#{bookId}")},
    {"Status": Attribute("S", enum=("shelved", "lent")), "Title": "S"},
)
SHELVES = Declaration(
    Model(
        "shelves",
        (Index(None, "PK", "SK"),),
        (SHELF, BOOK),
        (Collection("Shelf.books", SHELF, BOOK, filters=("Status", "Title")),),
    )
)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "interpreted"])
def test_a_filter_on_a_stored_name_that_starts_with_a_capital_is_applied(
    dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway], compiled: bool
) -> None:
    """``Status`` is served as ``status``: the schema offered ``where: {status}`` and then refused it as unknown."""
    name = f"filters-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, **table_definition(SHELVES.model))
    try:
        fill(
            endpoint,
            name,
            [
                {"PK": "SHELF#s1", "SK": "INFO", "Name": "Top"},
                {"PK": "SHELF#s1", "SK": "ITEM#b1", "Status": "lent", "Title": "Emma"},
                {"PK": "SHELF#s1", "SK": "ITEM#b2", "Status": "shelved", "Title": "Ulysses"},
                {"PK": "SHELF#s1", "SK": "ITEM#b3", "Status": "lent", "Title": "Ulysses"},
            ],
        )
        with gateway_factory(name, declaration=SHELVES, compiled_execution=compiled) as shelves:
            body = shelves.query(
                '{ shelf(shelfId: "s1") { lent: books(where: {status: {eq: lent}}) { nodes { bookId status } }'
                ' both: books(where: {status: {eq: lent}, title: {beginsWith: "Ul"}}) { nodes { bookId title } } } }'
            )
    finally:
        dynamodb.delete_table(TableName=name)
    assert "errors" not in body, body["errors"]
    assert body["data"]["shelf"] == {
        "lent": {"nodes": [{"bookId": "b1", "status": "lent"}, {"bookId": "b3", "status": "lent"}]},
        "both": {"nodes": [{"bookId": "b3", "title": "Ulysses"}]},
    }
