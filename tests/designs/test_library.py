"""The library design: a composite sort key hierarchy, complex attributes and duplicated parent data, served from
its declaration (schema.library:LIBRARY) on DynamoDB Local, with the requests counted on the wire."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import boto3
import boto3.dynamodb.types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.design.model import Attribute, Collection, Copy, Entity, Index, Item, KeyShape, Model, Shape
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.requests import MAX_ITEM_BYTES, WriteOp
from gateway.dynamo.store import Store, table_definition
from gateway.errors import Unavailable
from gateway.server.app import EXPLAIN_HEADER
from gateway.writes.building import with_counters
from gateway.writes.inputs import item_size
from schema.library import LIBRARY
from tests.support.gateway import Gateway
from tests.support.mutations import mutate

BRANCHES = """query($country: ID!, $state: ID, $city: ID, $first: Int, $after: String) {
  country(countryCode: $country) { name branches(first: $first, after: $after, state: $state, city: $city) {
    totalCount nodes { state city branchId } pageInfo { hasNextPage endCursor } } } }"""


def _resource(endpoint: str) -> Any:
    return boto3.resource(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l"
    )


def _write(endpoint: str, table: str, items: Sequence[Item]) -> None:
    with _resource(endpoint).Table(table).batch_writer() as batch:
        for item in items:
            batch.put_item(Item=item)


@pytest.fixture(scope="module")
def library_table(dynamodb: Any, endpoint: str) -> Iterator[str]:
    """The declaration's own seed, as `tablegraph seed` loads it (with its counters)."""
    name = f"library-{uuid.uuid4().hex[:8]}"
    dynamodb.create_table(TableName=name, **table_definition(LIBRARY.model))
    assert LIBRARY.seed is not None
    _write(endpoint, name, with_counters(LIBRARY.writes, LIBRARY.seed()))
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture(scope="module")
def library(gateway_factory: Callable[..., Gateway], library_table: str) -> Iterator[Gateway]:
    with gateway_factory(library_table, declaration=LIBRARY) as running:
        yield running


def cost(body: dict[str, Any]) -> tuple[int, int]:
    accounted = body["extensions"]["dynamodb"]
    return accounted["calls"], accounted["rounds"]


def operations(body: dict[str, Any]) -> dict[str, int]:
    result: dict[str, int] = body["extensions"]["dynamodb"]["operations"]
    return result


def raw(dynamodb: Any, table: str, pk: str, sk: str) -> Any:
    return dynamodb.get_item(TableName=table, Key={"PK": {"S": pk}, "SK": {"S": sk}}, ConsistentRead=True).get("Item")


# --- composite sort key hierarchies -----------------------------------------------------------------------------

# Few letters, so that generated states and cities are often prefixes of one another (CA and CAL, San and Santa).
_NAMES = st.text(alphabet="CAS n", min_size=1, max_size=4).map(str.strip).filter(bool)
_LOCATIONS = st.lists(st.tuples(_NAMES, _NAMES), min_size=1, max_size=12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(locations=_LOCATIONS, extra=st.tuples(_NAMES, _NAMES))
def test_each_level_is_one_query_on_its_prefix_and_finds_what_a_filter_finds(
    library: Gateway, library_table: str, endpoint: str, locations: list[tuple[str, str]], extra: tuple[str, str]
) -> None:
    country = f"c-{uuid.uuid4().hex[:8]}"
    branches = [(state, city, f"b{n:02d}") for n, (state, city) in enumerate(locations)]
    items = [{"PK": f"COUNTRY#{country}", "SK": "COUNTRY", "name": country, "branch_count": len(branches)}]
    items += [{"PK": f"COUNTRY#{country}", "SK": f"LOC#{s}#{c}#{b}", "name": b} for s, c, b in branches]
    _write(endpoint, library_table, items)
    everything = sorted(branches, key=lambda one: f"{one[0]}#{one[1]}#{one[2]}")

    whole = library.query(BRANCHES, {"country": country, "first": 100})
    connection = whole["data"]["country"]["branches"]
    assert [(n["state"], n["city"], n["branchId"]) for n in connection["nodes"]] == everything
    assert connection["totalCount"] == len(branches)
    assert operations(whole) == {"Query": 1}  # the country and its branches, one Query

    asked = {(state, None) for state, _, _ in branches} | {(s, c) for s, c, _ in branches} | {(extra[0], None), extra}
    for state, city in asked:
        body = library.query(BRANCHES, {"country": country, "state": state, "city": city, "first": 100})
        expected = [one for one in everything if one[0] == state and (city is None or one[1] == city)]
        nodes = body["data"]["country"]["branches"]["nodes"]
        assert [(n["state"], n["city"], n["branchId"]) for n in nodes] == expected, (state, city)
        # The country (BatchGetItem) and the level's Query go out together: 2 calls, 1 round.
        assert operations(body) == {"BatchGetItem": 1, "Query": 1}
        assert cost(body) == (2, 1)
        # The parent counts its whole collection, not a level of it.
        assert body["data"]["country"]["branches"]["totalCount"] is None


def test_a_level_pages_with_cursors_bound_to_it(library: Gateway) -> None:
    first = library.query(BRANCHES, {"country": "US", "state": "CA", "first": 2})
    page = first["data"]["country"]["branches"]
    assert [n["branchId"] for n in page["nodes"]] == ["la-central", "sf-main"]
    assert page["pageInfo"]["hasNextPage"] is True
    after = page["pageInfo"]["endCursor"]
    rest = library.query(BRANCHES, {"country": "US", "state": "CA", "first": 2, "after": after})
    assert [n["branchId"] for n in rest["data"]["country"]["branches"]["nodes"]] == ["sf-mission", "sj-king"]
    assert rest["data"]["country"]["branches"]["pageInfo"]["hasNextPage"] is False
    # A cursor of one level is refused at another, before any Query.
    other = library.query(BRANCHES, {"country": "US", "state": "TX", "first": 2, "after": after})
    assert other["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "Query" not in operations(other)


def test_a_city_is_not_a_prefix_of_another(library: Gateway) -> None:
    body = library.query(BRANCHES, {"country": "US", "state": "TX", "city": "Spring", "first": 10})
    assert [n["branchId"] for n in body["data"]["country"]["branches"]["nodes"]] == ["spring-1"]
    explained = library.query('query { country(countryCode: "US") { branches(state: "TX") { totalCount } } }')
    assert cost(explained) == (2, 1)


def test_the_estimate_of_a_level_is_its_one_query_on_the_prefix(library: Gateway) -> None:
    query = '{ country(countryCode: "US") { branches(state: "CA", city: "San Jose") { nodes { name } } } }'
    library.sent.clear()
    response = library.http.post("/graphql", json={"query": query}, headers={EXPLAIN_HEADER: "1"})
    plan = response.json()["extensions"]["explain"]
    assert not library.sent
    (page,) = [one for one in plan["requests"] if one["operation"] == "Query"]
    assert page["keyCondition"] == "PK = COUNTRY#{countryCode} AND begins_with(SK, LOC#{state}#{city}#)"
    measured = library.query(query)["extensions"]["dynamodb"]
    assert (plan["calls"], plan["rounds"]) == (measured["calls"], measured["rounds"]) == (2, 1)


@pytest.mark.parametrize(
    ("levels", "argument"),
    [({"city": "Spring"}, "city"), ({"state": "TX#Spring"}, "state"), ({"state": "TX", "city": "A#B"}, "city")],
)
def test_a_level_without_the_ones_above_or_holding_the_separator_is_refused(
    library: Gateway, levels: dict[str, str], argument: str
) -> None:
    body = library.query(BRANCHES, {"country": "US", "first": 5, **levels})
    (error,) = body["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT", "argument": argument}
    assert error["path"] == ["country", "branches"]
    assert "Query" not in operations(body)  # the country is read; its branches are not


def test_a_write_refuses_a_level_holding_the_separator(library: Gateway) -> None:
    data = {"countryCode": "US", "state": "CA#San Jose", "city": "x", "branchId": "b", "name": "B"}
    result, sent = mutate(library, "createBranch", data)
    assert result["__typename"] == "ValidationFailedError" and result["field"] == "state"
    assert sent == {}


def test_a_branch_created_is_found_at_its_levels_and_counted(library: Gateway) -> None:
    data = {"countryCode": "CA", "state": "BC", "city": "Victoria", "branchId": "vic-1", "name": "Victoria Central"}
    result, sent = mutate(library, "createBranch", data, "... on Branch { branchId country { branchCount } }")
    assert result["branchId"] == "vic-1" and result["country"]["branchCount"] == 3
    assert sent == {"TransactWriteItems": 1, "BatchGetItem": 1}
    body = library.query(BRANCHES, {"country": "CA", "state": "BC", "first": 5})
    assert [n["branchId"] for n in body["data"]["country"]["branches"]["nodes"]] == ["vic-1"]


# --- complex attributes -----------------------------------------------------------------------------------------

PATRON = """query($id: ID!) { patron(patronId: $id) { name addresses { label street city state zip }
  card { number expires interests } } }"""


def test_nested_objects_and_lists_are_served_from_the_item_alone(library: Gateway) -> None:
    body = library.query(PATRON, {"id": "ada"})
    assert body["data"]["patron"] == {
        "name": "Ada",
        "addresses": [
            {"label": "home", "street": "1 Elm St", "city": "Portland", "state": "ME", "zip": "04101"},
            {"label": "work", "street": "5 Oak Ave", "city": "Portland", "state": "OR", "zip": "97204"},
        ],
        "card": {"number": "0001-2345", "expires": "2027-12-31", "interests": ["mystery", "horror"]},
    }
    assert operations(body) == {"BatchGetItem": 1}
    branch = library.query('{ country(countryCode: "US") { branches(first: 1) { nodes { address { street zip } } } } }')
    assert branch["data"]["country"]["branches"]["nodes"] == [{"address": {"street": "630 W 5th St", "zip": "90071"}}]
    assert operations(branch) == {"Query": 1}


def test_nested_values_of_another_type_are_errors_at_their_field_and_the_rest_is_served(
    library: Gateway, library_table: str, endpoint: str
) -> None:
    odd = {
        "PK": "PATRON#odd",
        "SK": "PATRON",
        "name": "Odd",
        "addresses": ["not a map", {"label": "holiday", "city": 7, "zip": "1"}],
        "card": {"number": "9", "expires": "2027-02-30", "interests": "not a list"},
    }
    _write(endpoint, library_table, [odd])
    for _ in range(2):  # a document's first request, then its kept plan (compiled execution)
        body = library.query(PATRON, {"id": "odd"})
        # Served as nulls before 0.3, these are values the declaration cannot serve: an error at each field.
        assert body["data"]["patron"] == {"name": "Odd", "addresses": None, "card": None}
        assert [(error["path"], error["extensions"]["code"]) for error in body["errors"]] == [
            (["patron", "addresses"], "DATA_MISMATCH"),
            (["patron", "card"], "DATA_MISMATCH"),
        ]
        assert body["errors"][1]["message"] == "Patron.card.expires holds text '2027-02-30' where DATE is declared"


ADDRESS = {"label": "home", "street": "1 Elm St", "city": "Portland", "state": "ME", "zip": "04101"}


def test_a_write_stores_maps_and_lists_as_declared(library: Gateway, library_table: str, dynamodb: Any) -> None:
    card = {"number": "42", "expires": "2028-01-31", "interests": ["poetry"]}
    data = {"patronId": "cy", "name": "Cy", "addresses": [ADDRESS, {"city": "Bath"}], "card": card}
    result, sent = mutate(library, "createPatron", data, "... on Patron { addresses { city label } card { expires } }")
    assert result["addresses"] == [{"city": "Portland", "label": "home"}, {"city": "Bath", "label": None}]
    assert result["card"] == {"expires": "2028-01-31"}
    assert sent == {"PutItem": 1}
    item = raw(dynamodb, library_table, "PATRON#cy", "PATRON")
    # Fields left out are not stored; the list is an L of M, the card an M with an L inside.
    assert item["addresses"] == {
        "L": [{"M": {k: {"S": v} for k, v in ADDRESS.items()}}, {"M": {"city": {"S": "Bath"}}}]
    }
    assert item["card"]["M"]["interests"] == {"L": [{"S": "poetry"}]}


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"addresses": [ADDRESS] * 21}, "addresses"),
        ({"addresses": [ADDRESS, {**ADDRESS, "street": "   "}]}, "addresses[1].street"),
        ({"addresses": [{**ADDRESS, "zip": "1" * 21}]}, "addresses[0].zip"),
        ({"addresses": [{**ADDRESS, "label": "holiday"}]}, None),
        ({"card": {"number": "1", "interests": ["x"] * 11}}, "card.interests"),
        ({"card": {"number": "1", "interests": [""]}}, "card.interests[0]"),
    ],
)
def test_a_write_refuses_a_shape_out_of_bounds_before_sending(
    library: Gateway, data: dict[str, Any], field: str | None
) -> None:
    if field is None:  # outside the enum: GraphQL refuses the variables before anything runs
        body = library.query(
            "mutation($input: CreatePatronInput!) { createPatron(input: $input) { __typename } }",
            {"input": {"patronId": "bad", "name": "Bad", **data}},
        )
        assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
        assert body["extensions"]["dynamodb"]["calls"] == 0
        return
    result, sent = mutate(library, "createPatron", {"patronId": "bad", "name": "Bad", **data})
    assert (result["__typename"], result["field"]) == ("ValidationFailedError", field)
    assert sent == {}


def test_an_item_over_400_kb_is_refused_before_sending(library: Gateway) -> None:
    notes = ["n" * 1000] * 420
    result, sent = mutate(library, "createPatron", {"patronId": "big", "name": "Big", "notes": notes})
    assert (result["__typename"], result["field"]) == ("ValidationFailedError", "notes")
    assert "400" in result["message"] or "409,600" in result["message"]
    assert sent == {}
    update = {"patronId": "ada", "expectedVersion": 0, "notes": notes}
    result, sent = mutate(library, "updatePatron", update)
    assert (result["__typename"], result["field"]) == ("ValidationFailedError", "notes")
    assert sent == {}


def test_an_update_that_dynamodb_finds_too_large_is_a_clear_refusal(
    library: Gateway, library_table: str, endpoint: str
) -> None:
    # Another tool left 395 KB on the item: the notes an update sets fit alone, not with what the item holds.
    _write(endpoint, library_table, [{"PK": "PATRON#huge", "SK": "PATRON", "name": "Huge", "scan": "s" * 395_000}])
    update = {"patronId": "huge", "expectedVersion": 0, "notes": ["n" * 1000] * 20}
    result, sent = mutate(library, "updatePatron", update)
    assert result["__typename"] == "ValidationFailedError"
    assert "409,600 bytes" in result["message"]
    assert sent == {"UpdateItem": 1}


# --- duplicated parent data -------------------------------------------------------------------------------------

BOOK = "query($id: ID!) { book(bookId: $id) { title authorName } }"


def test_a_book_is_served_with_its_authors_name_and_no_read_of_the_author(library: Gateway) -> None:
    body = library.query(BOOK, {"id": "carrie"})
    assert body["data"]["book"] == {"title": "Carrie", "authorName": "Stephen King"}
    assert operations(body) == {"BatchGetItem": 1}
    assert cost(body) == (1, 1)


def test_a_new_book_copies_its_authors_name(library: Gateway) -> None:
    data = {"bookId": "misery", "authorId": "stephen-king", "title": "Misery"}
    result, sent = mutate(library, "createBook", data, "... on Book { authorName }")
    assert result == {"__typename": "Book", "authorName": "Stephen King"}
    # The author is read for its name, then the book is written with the author's counter, which requires it.
    assert sent == {"GetItem": 1, "TransactWriteItems": 1}
    missing, sent = mutate(library, "createBook", {**data, "bookId": "x", "authorId": "nobody"})
    assert missing["__typename"] == "NotFoundError" and sent == {"GetItem": 1}


def test_a_book_created_while_its_author_is_renamed_is_refused_not_stale(
    library: Gateway, library_table: str, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: Store = library.app.state.store
    real_get = store.get_item

    async def renamed_meanwhile(key: dict[str, str], ledger: Ledger) -> Item | None:
        item = await real_get(key, ledger)
        dynamodb.update_item(
            TableName=library_table,
            Key={"PK": {"S": key["PK"]}, "SK": {"S": key["SK"]}},
            UpdateExpression="SET #n = :n",
            ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={":n": {"S": "Richard Bachman"}},
        )
        return item

    monkeypatch.setattr(store, "get_item", renamed_meanwhile)
    data = {"bookId": "thinner", "authorId": "stephen-king", "title": "Thinner"}
    result, sent = mutate(library, "createBook", data)
    assert result["__typename"] == "ConflictError" and result["reason"] == "CHANGED"
    assert sent == {"GetItem": 1, "TransactWriteItems": 1}
    assert raw(dynamodb, library_table, "BOOK#thinner", "BOOK") is None
    monkeypatch.undo()
    result, _ = mutate(library, "createBook", data, "... on Book { authorName }")
    assert result["authorName"] == "Richard Bachman"


@pytest.fixture
def prolific(library: Gateway, library_table: str, endpoint: str) -> str:
    """An author of 150 books, each with a copy of the author's name."""
    author = f"a-{uuid.uuid4().hex[:8]}"
    items = [{"PK": f"AUTHOR#{author}", "SK": "AUTHOR", "GSI1PK": f"AUTHOR#{author}", "GSI1SK": "AUTHOR"}]
    items[0] |= {"name": "Old Name", "book_count": 150, "version": 1}
    items += [
        {
            "PK": f"BOOK#{author}-{n:03d}",
            "SK": "BOOK",
            "GSI1PK": f"AUTHOR#{author}",
            "GSI1SK": f"BOOK#{author}-{n:03d}",
            "title": f"Book {n}",
            "author_name": "Old Name",
        }
        for n in range(150)
    ]
    _write(endpoint, library_table, items)
    return author


def copies(dynamodb: Any, table: str, author: str) -> tuple[dict[str, int], Any]:
    """How many of the author's books hold each name, and the author's pending mark (read with plain boto3)."""
    names: dict[str, int] = {}
    pages = dynamodb.get_paginator("query").paginate(
        TableName=table,
        IndexName="GSI1",
        KeyConditionExpression="GSI1PK = :a AND begins_with(GSI1SK, :b)",
        ExpressionAttributeValues={":a": {"S": f"AUTHOR#{author}"}, ":b": {"S": "BOOK#"}},
    )
    for page in pages:
        for item in page["Items"]:
            names[item["author_name"]["S"]] = names.get(item["author_name"]["S"], 0) + 1
    return names, raw(dynamodb, table, f"AUTHOR#{author}", "AUTHOR").get("copiesPending")


RENAME = """mutation($id: ID!, $name: String!, $v: Int!) {
  updateAuthor(input: {authorId: $id, name: $name, expectedVersion: $v}, clientToken: "rename-1") {
    __typename ... on Author { name version } } }"""


def before_each_rewrite(library: Gateway, monkeypatch: pytest.MonkeyPatch, action: Callable[[int], None]) -> None:
    """Run ``action(n)`` before the n-th transaction that rewrites copies: a spy around the store's real write, to
    cut a rewrite (``action`` raises) or change the table in the middle of one. ``monkeypatch.undo()`` removes it."""
    store: Store = library.app.state.store
    real_write = store.write
    rewrites = 0

    async def spy(ops: Sequence[WriteOp], ledger: Ledger) -> Item | None:
        nonlocal rewrites
        if any(op.target.role == "member" for op in ops):
            rewrites += 1
            action(rewrites)
        return await real_write(ops, ledger)

    monkeypatch.setattr(store, "write", spy)


def _cut(at: int) -> Callable[[int], None]:
    def cut(n: int) -> None:
        if n == at:
            raise Unavailable("DynamoDB could not be reached")

    return cut


def test_renaming_an_author_rewrites_every_copy_in_bounded_batches(
    library: Gateway, library_table: str, dynamodb: Any, prolific: str
) -> None:
    body = library.query(RENAME.replace("rename-1", prolific), {"id": prolific, "name": "New Name", "v": 1})
    assert body["data"]["updateAuthor"] == {"__typename": "Author", "name": "New Name", "version": 2}
    accounted = body["extensions"]["dynamodb"]
    # The update (with its token), its read back, two pages of books, two transactions of at most 99, the mark.
    assert accounted["operations"] == {"TransactWriteItems": 3, "GetItem": 1, "Query": 2, "UpdateItem": 1}
    (progress,) = accounted["progress"]
    assert (progress["items"], progress["batches"], progress["done"]) == (150, 2, True)
    assert copies(dynamodb, library_table, prolific) == ({"New Name": 150}, None)


def test_an_interrupted_rewrite_is_finished_by_the_retry(
    library: Gateway, library_table: str, dynamodb: Any, prolific: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before_each_rewrite(library, monkeypatch, _cut(2))
    query = RENAME.replace("rename-1", prolific)
    body = library.query(query, {"id": prolific, "name": "New Name", "v": 1})
    assert body["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
    (progress,) = body["extensions"]["dynamodb"]["progress"]
    assert (progress["items"], progress["done"]) == (99, False)
    names, pending = copies(dynamodb, library_table, prolific)
    assert names == {"New Name": 99, "Old Name": 51} and pending is not None

    monkeypatch.undo()
    body = library.query(query, {"id": prolific, "name": "New Name", "v": 1})
    # The token answers as the first time; the rewrite resumes, and writes only the 51 stale copies.
    assert body["data"]["updateAuthor"] == {"__typename": "Author", "name": "New Name", "version": 2}
    (progress,) = body["extensions"]["dynamodb"]["progress"]
    assert (progress["items"], progress["batches"], progress["done"]) == (51, 1, True)
    assert copies(dynamodb, library_table, prolific) == ({"New Name": 150}, None)


def test_an_interrupted_rewrite_is_finished_by_the_next_write_of_the_author(
    library: Gateway, library_table: str, dynamodb: Any, prolific: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before_each_rewrite(library, monkeypatch, _cut(1))
    update = {"authorId": prolific, "expectedVersion": 1, "name": "New Name"}
    body = library.query(
        "mutation($input: UpdateAuthorInput!) { updateAuthor(input: $input) { __typename } }", {"input": update}
    )
    assert body["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
    assert copies(dynamodb, library_table, prolific)[0] == {"Old Name": 150}
    monkeypatch.undo()
    # Sent again without a token, the update is refused (it was applied), and finishes the rewrite first.
    result, _ = mutate(library, "updateAuthor", update, "... on ConflictError { currentVersion }")
    assert (result["__typename"], result["reason"], result["currentVersion"]) == (
        "ConflictError",
        "VERSION_MISMATCH",
        2,
    )
    assert copies(dynamodb, library_table, prolific) == ({"New Name": 150}, None)


def test_a_change_that_copies_nothing_rewrites_nothing(library: Gateway, prolific: str) -> None:
    result, sent = mutate(library, "updateAuthor", {"authorId": prolific, "expectedVersion": 1, "birthYear": 1950})
    assert result["__typename"] == "Author"
    assert sent == {"UpdateItem": 1}


# --- the declaration refuses designs it cannot serve -----------------------------------------------------------


def _model(*collections: Collection, copies: tuple[Copy, ...] = ()) -> Model:
    return Model(
        table="t",
        indexes=(Index(None, "PK", "SK"),),
        entities=tuple({one: None for c in collections for one in (c.parent, c.member)}),
        collections=collections,
        copies=copies,
    )


PLACE = Entity("Place", {None: KeyShape.of("P#{placeId}", "P")}, {"name": "S"})
SHOP = Entity(
    "Shop",
    {None: KeyShape.of("P#{placeId}", "S#{state}#{city}#{shopId}")},
    {"place_name": Attribute("S", writable=False), "size": Attribute("INT", writable=False), "note": "S"},
)


@pytest.mark.parametrize("levels", [("city",), ("state", "city", "shopId"), ("city", "state"), ("first",)], ids=str)
def test_levels_are_the_key_ids_after_the_parents_and_before_the_members_own(levels: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="level"):
        _model(Collection("Place.shops", PLACE, SHOP, levels=levels))
    assert _model(Collection("Place.shops", PLACE, SHOP, levels=("state", "city")))


@pytest.mark.parametrize(
    ("attribute", "source"), [("note", "name"), ("size", "name"), ("place_name", "missing"), ("missing", "name")]
)
def test_a_copy_is_a_declared_non_input_of_its_sources_type(attribute: str, source: str) -> None:
    shops = Collection("Place.shops", PLACE, SHOP)
    with pytest.raises(ValueError, match="Shop"):
        _model(shops, copies=(Copy(shops, attribute, source),))
    assert _model(shops, copies=(Copy(shops, "place_name", "name"),))


def test_shapes_describe_maps_and_lists_only() -> None:
    shape = Shape("Point", {"x": "N", "y": "N"})
    for wrong in (
        lambda: Attribute("S", shape=shape),
        lambda: Attribute("M", element="S"),
        lambda: Attribute("L", shape=shape, element="S"),
        lambda: Attribute("L", element="M"),
        lambda: Shape("Bad", {"raw": "M"}),
    ):
        with pytest.raises(ValueError):
            wrong()


# --- the item size is DynamoDB's -------------------------------------------------------------------------------

_VALUES = st.recursive(
    st.text(max_size=20)
    | st.booleans()
    | st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-(10**9), max_value=10**9),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=25, deadline=None)
@given(attributes=st.dictionaries(st.text(alphabet="abcdef", min_size=1, max_size=6), _VALUES, max_size=5))
def test_an_item_of_the_computed_limit_is_stored_and_one_byte_more_is_refused(
    dynamodb: Any, library_table: str, attributes: dict[str, Any]
) -> None:
    """The size the gateway computes before sending is the one DynamoDB enforces, at the limit's very edge."""
    serializer = boto3.dynamodb.types.TypeSerializer()
    base = {"PK": "SIZE#x", "SK": "SIZE", **attributes}
    padding = MAX_ITEM_BYTES - item_size({**base, "pad": ""})
    for extra, accepted in ((0, True), (1, False)):
        item = {**base, "pad": "p" * (padding + extra)}
        wire = {name: serializer.serialize(value) for name, value in item.items()}
        if accepted:
            dynamodb.put_item(TableName=library_table, Item=wire)
        else:
            with pytest.raises(dynamodb.exceptions.ClientError, match="size"):
                dynamodb.put_item(TableName=library_table, Item=wire)


def test_a_book_deleted_during_a_rewrite_is_left_out_and_the_rest_rewritten(
    library: Gateway, library_table: str, dynamodb: Any, prolific: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = {"PK": {"S": f"BOOK#{prolific}-007"}, "SK": {"S": "BOOK"}}
    before_each_rewrite(library, monkeypatch, lambda n: dynamodb.delete_item(TableName=library_table, Key=book))
    update = {"authorId": prolific, "expectedVersion": 1, "name": "New Name"}
    body = library.query(
        "mutation($input: UpdateAuthorInput!) { updateAuthor(input: $input) { __typename } }", {"input": update}
    )
    assert body["data"]["updateAuthor"] == {"__typename": "Author"}
    # The first transaction was refused for the missing book and sent again without it.
    assert body["extensions"]["dynamodb"]["operations"]["TransactWriteItems"] == 3
    assert body["extensions"]["dynamodb"]["progress"][0]["items"] == 149
    assert copies(dynamodb, library_table, prolific) == ({"New Name": 149}, None)
    assert raw(dynamodb, library_table, f"BOOK#{prolific}-007", "BOOK") is None


def test_a_rewrite_overtaken_by_a_later_rename_stops_and_the_later_one_wins(
    library: Gateway, library_table: str, dynamodb: Any, prolific: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def renamed_again(n: int) -> None:
        if n == 2:  # another gateway renames the author and marks it, between two batches
            dynamodb.update_item(
                TableName=library_table,
                Key={"PK": {"S": f"AUTHOR#{prolific}"}, "SK": {"S": "AUTHOR"}},
                UpdateExpression="SET #n = :n, copiesPending = :m, version = :v",
                ExpressionAttributeNames={"#n": "name"},
                ExpressionAttributeValues={":n": {"S": "Third Name"}, ":m": {"S": "other"}, ":v": {"N": "3"}},
            )

    before_each_rewrite(library, monkeypatch, renamed_again)
    update = {"authorId": prolific, "expectedVersion": 1, "name": "New Name"}
    result, sent = mutate(library, "updateAuthor", update, "... on Author { name }")
    assert result == {"__typename": "Author", "name": "New Name"}
    # The second batch found the author renamed again: it wrote nothing, and left the later rename's mark.
    assert sent == {"UpdateItem": 1, "Query": 2, "TransactWriteItems": 2}
    names, pending = copies(dynamodb, library_table, prolific)
    assert names == {"New Name": 99, "Old Name": 51} and pending == {"S": "other"}
    monkeypatch.undo()
    # The next write of the author finishes the later rename's rewrite.
    result, _ = mutate(library, "updateAuthor", {"authorId": prolific, "expectedVersion": 3, "birthYear": 1900})
    assert result["__typename"] == "Author"
    assert copies(dynamodb, library_table, prolific) == ({"Third Name": 150}, None)
