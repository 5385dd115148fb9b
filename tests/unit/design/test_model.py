"""The key design as data: templates format and parse keys, and a model that would need a Scan is refused."""

from __future__ import annotations

import asyncio

import pytest
from boto3.dynamodb.types import Binary

from gateway.design.keys import KeyTemplate, validate_id
from gateway.design.model import (
    Attribute,
    AttributeType,
    Collection,
    Entity,
    Index,
    KeyShape,
    Link,
    Model,
    attribute_values,
)
from gateway.dynamo.accounting import Ledger, reached
from gateway.errors import BadUserInput, DataMismatch
from gateway.execution.cursors import CursorCodec
from gateway.execution.queries import binding, members_query
from schema.model import (
    COURSE,
    COURSE_STUDENTS,
    ENROLLMENT,
    MODEL,
    ORGANIZATION,
    ORGANIZATION_USERS,
    STUDENT_COURSES,
    TICKET,
    USER_TICKETS,
    WORKSPACE_PROJECTS,
)

TABLE = Index(None, "PK", "SK")


def test_a_template_formats_parses_and_gives_prefixes() -> None:
    template = KeyTemplate("ORG#{orgName}#USER#{username}")
    assert template.format({"orgName": "acme", "username": "ann"}) == "ORG#acme#USER#ann"
    assert template.parse("ORG#acme#USER#ann") == {"orgName": "acme", "username": "ann"}
    assert template.parse("ORG#acme#USER#ann#x") is None
    assert template.parse("ORG#acme#USERS#ann") is None
    assert template.prefix({"orgName": "acme"}) == "ORG#acme#USER#"


def test_a_repeated_field_must_hold_one_value() -> None:
    assert KeyTemplate("T#{id}#{id}").parse("T#1#1") == {"id": "1"}
    assert KeyTemplate("T#{id}#{id}").parse("T#1#2") is None


@pytest.mark.parametrize("pattern", ["WS#{a}{b}", "WS#{a}X{b}", "T#{n:03}1", "T#{a:03}#{a}"])
def test_templates_whose_fields_could_run_together_are_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="key template"):
        KeyTemplate(pattern)


@pytest.mark.parametrize("bad", ["", "a#b", "x\x00", "x\u0085", "y" * 129])
def test_ids_that_cannot_be_key_segments_are_refused(bad: str) -> None:
    with pytest.raises(BadUserInput):
        validate_id(bad, "id")


def test_items_are_recognised_by_their_key_shape() -> None:
    ticket = {"PK": "TICKET#t1", "SK": "TICKET#t1", "GSI1PK": "ORG#o#USER#u", "GSI1SK": "TICKET#t1"}
    assert MODEL.recognise(ticket) == (TICKET, {"ticketId": "t1", "orgName": "o", "username": "u"})
    assert MODEL.recognise({"PK": "ORG#o", "SK": "METADATA#o"}) == (ORGANIZATION, {"orgName": "o"})
    assert MODEL.recognise({"PK": "ORG#o", "SK": "METADATA#other"}) is None
    assert MODEL.recognise({"PK": "CRS#c", "SK": "METADATA"}) == (COURSE, {"courseId": "c"})
    assert MODEL.recognise({"PK": 1, "SK": "META"}) is None


def test_an_item_is_its_entity_in_an_index_or_out_of_it_and_contradicting_index_keys_are_no_entity() -> None:
    # DynamoDB: an item is in an index exactly when it holds every key attribute of it. Out of it, the item is
    # still its entity; its ids are those its other keys hold, and those of a key attribute it holds alone.
    edge = {"PK": "STU#s", "SK": "ENROLL#CRS#c"}
    assert MODEL.recognise(edge) == (ENROLLMENT, {"studentId": "s", "courseId": "c"})
    ticket = {"PK": "TICKET#t1", "SK": "TICKET#t1"}
    assert MODEL.recognise(ticket) == (TICKET, {"ticketId": "t1"})
    assert MODEL.recognise({**ticket, "GSI1PK": "ORG#o#USER#u"}) == (
        TICKET,
        {"ticketId": "t1", "orgName": "o", "username": "u"},
    )
    assert MODEL.recognise({**ticket, "GSI1SK": "TICKET#t1"}) == (TICKET, {"ticketId": "t1"})
    # A key attribute held alone that has no shape of the entity's, or disagrees, gives nothing and costs nothing.
    assert MODEL.recognise({**ticket, "GSI1PK": "elsewhere"}) == (TICKET, {"ticketId": "t1"})
    assert MODEL.recognise({**ticket, "GSI1SK": "TICKET#t2"}) == (TICKET, {"ticketId": "t1"})
    # In the index, its keys must have the entity's shape there and agree with its table key.
    assert MODEL.recognise({**ticket, "GSI1PK": "ORG#o#USER#u", "GSI1SK": "TICKET#t2"}) is None
    assert MODEL.recognise({**edge, "GSI1PK": "CRS#c", "GSI1SK": "nothing of the kind"}) is None
    assert MODEL.recognise({**edge, "GSI1PK": "CRS#c", "GSI1SK": "STU#s"}) == (
        ENROLLMENT,
        {"studentId": "s", "courseId": "c"},
    )


def test_a_key_shape_that_starts_with_an_id_is_recognised_whatever_its_first_segment() -> None:
    named = Entity("Named", {None: KeyShape.of("A#{id}", "META")})
    tenant_first = Entity("TenantFirst", {None: KeyShape.of("{tenant}#T#{id}", "PROFILE")})
    model = Model("t", (TABLE,), (named, tenant_first))
    assert model.recognise({"PK": "A#1", "SK": "META"}) == (named, {"id": "1"})
    assert model.recognise({"PK": "A#T#1", "SK": "PROFILE"}) == (tenant_first, {"tenant": "A", "id": "1"})
    assert model.recognise({"PK": "z#T#1", "SK": "PROFILE"}) == (tenant_first, {"tenant": "z", "id": "1"})
    assert model.recognise({"PK": "z#T#1", "SK": "META"}) is None
    assert KeyTemplate("T#{id}#{id}").format({"id": "1"}) == "T#1#1"


def test_items_are_recognised_whatever_their_sort_key_starts_with() -> None:
    """Candidates are chosen by the heads of both keys: sort keys that start with an id, or are constants with a
    separator, are still recognised, and a parent and its members in one partition each find their own entity."""
    parent = Entity("Parent", {None: KeyShape.of("P#{id}", "META#DATA")})
    member = Entity("Member", {None: KeyShape.of("P#{id}", "M#{member}")})
    versioned = Entity("Versioned", {None: KeyShape.of("V#{id}", "{version}#V")})
    model = Model("t", (TABLE,), (parent, member, versioned))
    assert model.recognise({"PK": "P#1", "SK": "META#DATA"}) == (parent, {"id": "1"})
    assert model.recognise({"PK": "P#1", "SK": "M#a"}) == (member, {"id": "1", "member": "a"})
    assert model.recognise({"PK": "V#1", "SK": "7#V"}) == (versioned, {"id": "1", "version": "7"})
    assert model.recognise({"PK": "P#1", "SK": "META#OTHER"}) is None
    assert model.recognise({"PK": "P#1", "SK": "X#a"}) is None


def test_the_model_knows_which_parents_come_back_with_their_members() -> None:
    combined = {c.name for c in MODEL.collections if MODEL.parent_sorts_with_members(c)}
    assert combined == {ORGANIZATION_USERS.name, USER_TICKETS.name, STUDENT_COURSES.name}
    assert WORKSPACE_PROJECTS.name not in combined and COURSE_STUDENTS.name not in combined


def test_a_collection_on_an_index_its_members_are_not_in_is_refused() -> None:
    with pytest.raises(ValueError, match="would need a Scan"):
        Model(
            "t",
            (TABLE, Index("GSI1", "GSI1PK", "GSI1SK")),
            (COURSE,),
            (Collection("Course.students", COURSE, COURSE, index="GSI1"),),
        )


def test_shapes_that_could_be_mistaken_for_each_other_are_refused() -> None:
    a = Entity("A", {None: KeyShape.of("X#{id}", "META")})
    b = Entity("B", {None: KeyShape.of("X#{other}", "META")})
    with pytest.raises(ValueError, match="mistaken"):
        Model("t", (TABLE,), (a, b))


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("A{a}", "AB{b}"),  # an id may start with B
        ("A#{a:03}", "A#{b:05}"),  # a number may be wider than its padding
        ("c{a}|x", "c{b}"),  # a '#'-separated id may hold '|'
    ],
)
def test_shapes_some_key_string_has_both_of_are_refused(one: str, other: str) -> None:
    a = Entity("A", {None: KeyShape.of(one, "META")})
    b = Entity("B", {None: KeyShape.of(other, "META")})
    with pytest.raises(ValueError, match="A and B have key shapes that can be mistaken"):
        Model("t", (TABLE,), (a, b))


@pytest.mark.parametrize(
    ("one", "other", "key"),
    [
        ("A/{a}", "A{b:05}", "A00042"),  # a number holds no '/'
        ("sh#{a}", "shp#{b}", "shp#x"),
        ("A{a:01}", "AB{b}", "ABx"),  # {a:01}: a whole number written plain, which never starts with B
        ("A{a:date}", "AB{b}", "AB2020"),  # a date holds digits and dashes
        ("A#{a:date}", "A#{b:05}", "A#00042"),
    ],
)
def test_shapes_no_key_string_has_both_of_are_served_each_item_as_its_own(one: str, other: str, key: str) -> None:
    """Regression: shapes were judged by their literal text before the first field, so a glued number and an id
    after another separator (``A{b:05}`` and ``A/{a}``) were refused as if one key could be both."""
    a = Entity("A", {None: KeyShape.of(one, "META")})
    b = Entity("B", {None: KeyShape.of(other, "META")})
    model = Model("t", (TABLE,), (a, b))
    found = model.recognise({"PK": key, "SK": "META"})
    assert found is not None and found[0] is b


def test_a_link_must_find_the_target_keys_on_the_source() -> None:
    a = Entity("A", {None: KeyShape.of("A#{a}", "META")})
    b = Entity("B", {None: KeyShape.of("B#{b}", "META")})
    with pytest.raises(ValueError, match="target's ids"):
        Model("t", (TABLE,), (a, b), links=(Link("A.b", a, b),))


def test_cursors_are_bound_to_their_field_and_secret() -> None:
    codec = CursorCodec("s1")
    cursor = codec.encode("Workspace.projects\x00WS#1", {"PK": "WS#1", "SK": "PROJ#2"})
    assert codec.decode("Workspace.projects\x00WS#1", cursor, ["PK", "SK"]) == {"PK": "WS#1", "SK": "PROJ#2"}
    for bound, secret in [("Workspace.projects\x00WS#2", "s1"), ("Workspace.projects\x00WS#1", "s2")]:
        with pytest.raises(BadUserInput):
            CursorCodec(secret).decode(bound, cursor, ["PK", "SK"])


def test_cursors_take_a_secret_of_any_length() -> None:
    for secret in ["", "s" * 65, "é" * 500]:
        codec = CursorCodec(secret)
        cursor = codec.encode("Workspace.projects\x00WS#1", {"PK": "WS#1", "SK": "PROJ#2"})
        assert codec.decode("Workspace.projects\x00WS#1", cursor, ["PK", "SK"]) == {"PK": "WS#1", "SK": "PROJ#2"}
        with pytest.raises(BadUserInput):
            CursorCodec(secret + "x").decode("Workspace.projects\x00WS#1", cursor, ["PK", "SK"])


async def test_rounds_follow_what_each_call_waited_for() -> None:
    ledger = Ledger()

    async def read(operation: str) -> int:
        await asyncio.sleep(0)
        return ledger.record(operation, 0.5)

    async def branch() -> None:
        await read("Query")
        await read("BatchGetItem")  # sent with the Query's answer

    first, second = await asyncio.gather(read("Query"), read("BatchGetItem"))
    assert first == second == 1
    reached(max(first, second))
    await asyncio.gather(branch(), branch(), read("Query"))
    assert ledger.summary() == {
        "calls": 7,
        "rounds": 3,
        "operations": {"Query": 4, "BatchGetItem": 3},
        "consumedCapacity": 3.5,
    }


# --- the one-to-many strategies of the design, each expressible in a model -----------------------------------

CHAIN = Entity("Chain", {None: KeyShape.of("CHAIN#{chain}", "META")}, {"name": "S", "addresses": "L", "hq": "M"})
STORE = Entity(
    "Store",
    {None: KeyShape.of("CHAIN#{chain}", "LOC#{state}#{city}#{storeId}")},
    {"chainName": "S", "opened": "S"},
)
CHAIN_STORES = Collection("Chain.stores", CHAIN, STORE)
RETAIL = Model("retail", (TABLE,), (CHAIN, STORE), (CHAIN_STORES,))


def test_a_complex_attribute_is_served_from_the_parent_item() -> None:
    item = {"PK": "CHAIN#c", "SK": "META", "name": "C", "addresses": [{"city": "Oslo"}], "hq": {"city": "Bergen"}}
    assert attribute_values(CHAIN, item) == {"name": "C", "addresses": [{"city": "Oslo"}], "hq": {"city": "Bergen"}}


def test_parent_data_duplicated_on_the_child_is_a_plain_attribute() -> None:
    item = {"PK": "CHAIN#c", "SK": "LOC#CA#LA#s1", "chainName": "C", "opened": "2020"}
    assert RETAIL.recognise(item) == (STORE, {"chain": "c", "state": "CA", "city": "LA", "storeId": "s1"})
    assert attribute_values(STORE, item)["chainName"] == "C"


def test_a_composite_sort_key_is_queried_at_any_level_and_cursors_stay_at_their_level() -> None:
    prefixes = [
        members_query(RETAIL, CHAIN_STORES, ids, 10).sort
        for ids in ({"chain": "c"}, {"chain": "c", "state": "CA"}, {"chain": "c", "state": "CA", "city": "LA"})
    ]
    assert prefixes == [
        ("SK", "begins_with", "LOC#"),
        ("SK", "begins_with", "LOC#CA#"),
        ("SK", "begins_with", "LOC#CA#LA#"),
    ]
    codec = CursorCodec("s")
    california = binding(CHAIN_STORES, {"chain": "c", "state": "CA"})
    cursor = codec.encode(california, {"PK": "CHAIN#c", "SK": "LOC#CA#LA#s1"})
    assert codec.decode(california, cursor, ["PK", "SK"])
    with pytest.raises(BadUserInput):
        codec.decode(binding(CHAIN_STORES, {"chain": "c", "state": "NY"}), cursor, ["PK", "SK"])


def test_the_item_collection_index_and_edge_strategies_are_declared_in_the_example_model() -> None:
    assert ORGANIZATION_USERS.index is None  # composite primary key: one partition
    assert USER_TICKETS.index == "GSI1"  # secondary index
    assert STUDENT_COURSES.target is COURSE and COURSE_STUDENTS.index == "GSI1"  # edges and the inverted index


def test_a_binary_set_is_served_as_base64_in_byte_order_and_anything_else_is_a_mismatch() -> None:
    """The wire decoding gives boto3's Binary, a write gives bytes: both read alike; a string set is no binary set."""
    entity = Entity("Blob", {None: KeyShape.of("B#{blobId}", "B")}, {"hashes": Attribute("BS")})
    assert attribute_values(entity, {"hashes": {Binary(b"\xff"), Binary(b"a"), b"\x00\x01"}}) == {
        "hashes": ["AAE=", "YQ==", "/w=="]
    }
    with pytest.raises(DataMismatch) as text_set:
        attribute_values(entity, {"hashes": {"a", "b"}})
    assert str(text_set.value) == "Blob.hashes holds a set ['a', 'b'] where BS is declared"
    with pytest.raises(DataMismatch) as one_binary:
        attribute_values(entity, {"hashes": b"a"})
    assert str(one_binary.value) == "Blob.hashes holds binary 'YQ==' where BS is declared"
    assert attribute_values(entity, {}) == {"hashes": None}  # absent: null, no mismatch


def test_a_number_kept_as_text_is_read_only_from_ascii_digits() -> None:
    """Found by the generated designs' reference: ``1_000`` and ``١٢`` were served as 1000 and 12, where the table's
    other readers see no number; they are a DATA_MISMATCH now, like any other text that is no number."""
    entity = Entity("Product", {None: KeyShape.of("p#{productId}", "p")}, {"Price": Attribute("N", text=True)})

    def price(text: str) -> object:
        try:
            return attribute_values(entity, {"Price": text})["Price"]
        except DataMismatch as mismatch:
            return str(mismatch)

    texts = ("1_000", "\u0661\u0662", "NaN", "Infinity", "0x10", "")
    assert [price(text) for text in texts] == [f"Product.Price holds {text!r}, which is no number" for text in texts]
    assert [price(text) for text in (" 7 ", "1e3", "-0", ".5", "5.", "9.99")] == [7, 1000, 0, 0.5, 5, 9.99]


@pytest.mark.parametrize("kind", ["L", "M", "SS", "NS", "BS", "JSON"])
def test_a_filter_on_an_attribute_no_condition_compares_is_refused_naming_it_and_the_fix(kind: AttributeType) -> None:
    """Sets and JSON had no condition type: building the schema failed with a KeyError instead of saying why."""
    shop = Entity("Shop", {None: KeyShape.of("S#{shopId}", "META")})
    item = Entity("Item", {None: KeyShape.of("S#{shopId}", "I#{itemId}")}, {"data": Attribute(kind)})
    with pytest.raises(ValueError) as refusal:
        Collection("Shop.items", shop, item, filters=("data",))
    assert str(refusal.value) == (
        f"Shop.items: Item.data is {kind}, which a filter cannot compare: filters take attributes of types S, N, INT,"
        " BOOL, DATE; drop 'data' from filters="
    )


def test_a_date_field_writes_and_reads_calendar_dates_only() -> None:
    """``{day:date}``: a date in a key, refused before any request when it is no date, and sorted as dates are."""
    template = KeyShape.of("c#{customerId}", "o#{day:date}").sk
    assert template.format({"day": "2026-02-28"}) == "o#2026-02-28"
    assert template.parse("o#2026-02-28") == {"day": "2026-02-28"}
    assert template.parse("o#2026-2-28") is None
    for wrong in ("2026-02-30", "yesterday", "2026-02-28T10:00"):
        with pytest.raises(BadUserInput, match="must be a date"):
            template.format({"day": wrong})


def test_a_minted_id_written_as_a_date_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Order\.orderId: a minted id is no date, and 'o#\{orderId:date\}'"):
        Entity("Order", {None: KeyShape.of("o#{orderId:date}", "O")}, mint="orderId")


def test_an_item_recognised_again_is_recognised_as_the_first_time_and_its_ids_are_the_callers_own() -> None:
    """Recognition is kept per model (``Model.recognise``): an item met again, as itself or as another item with
    the same keys, is what a model that never saw it recognises it as; the ids handed out are a copy each time,
    and an item whose key attributes cannot be kept (a list) is recognised all the same."""
    from dataclasses import replace

    from schema.demo import DEMO, demo_items
    from schema.online_shop import SHOP

    shop = [
        {"PK": "c#ann", "SK": "c#ann", "EntityType": "customer"},
        {"PK": "c#ann", "SK": "c#ann", "EntityType": "product"},
        {"PK": "c#ann", "SK": "c#ann"},
        {"PK": "p#p1", "SK": "w#w1", "EntityType": "warehouseItem", "GSI2-PK": "w#w1", "GSI2-SK": "p#p1"},
        {"PK": "p#p1", "SK": "w#w1", "EntityType": "warehouseItem", "GSI2-PK": "w#w2", "GSI2-SK": "p#p1"},
        {"PK": "o#o1", "SK": "o#o1"},
        {"PK": "c#ann", "SK": "c#ann", "EntityType": "customer", "GSI2-SK": ["not", "a", "key"]},
        {"PK": "o#o1", "SK": "p#p1", "EntityType": "orderItem"},
    ]
    for model, items in ((DEMO.model, list(demo_items())[:200]), (SHOP.model, shop)):
        seen = [model.recognise(item) for item in items]
        for item, first in zip(items, seen, strict=True):
            expected = replace(model).recognise(item)  # a model of its own: nothing kept
            again = model.recognise(dict(item))
            assert again == first == expected, item
            if again is not None:
                again[1]["mutated"] = "by the caller"
                first[1]["mutated"] = "by the caller"
                assert model.recognise(item) == expected
    assert SHOP.model.recognise(shop[1]) is None  # the discriminator names another entity
    assert SHOP.model.recognise(shop[3]) is not None
    assert SHOP.model.recognise(shop[4]) is None  # the index key names another warehouse
    assert SHOP.model.recognise(shop[0]) is not None and SHOP.model.recognise(shop[6]) is not None
