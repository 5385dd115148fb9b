"""Key values as designs write them: folded key segments, ids read back from their stored copies, constants that
identify an entity, enum values that are no GraphQL names, and the times the gateway keeps."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from gateway.design.declaration import Declaration
from gateway.design.keys import KeyTemplate
from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Link, Model, enum_name
from gateway.design.tenancy import Tenancy
from gateway.errors import BadUserInput
from gateway.live.fanout import collection_topic
from gateway.writes import building
from gateway.writes.building import stamp, stamps

TABLE = Index(None, "pk", "sk")
GSI = Index("gsi1", "gsi1pk", "gsi1sk")


def _store(**options: Any) -> Entity:
    attributes = options.pop("attributes", {"storeId": Attribute("S", from_id="storeId")})
    return Entity(
        "Store",
        {None: KeyShape.of("$shop#storeid_{storeId:lower}", "$store_1"), **options.pop("keys", {})},
        attributes,
        constants={"__edb_e__": "store", "__edb_v__": "1"},
        **options,
    )


# --- folded segments ----------------------------------------------------------------------------------------------


def test_a_folded_segment_writes_the_id_in_its_case_and_reads_back_the_folded_value() -> None:
    lower = KeyTemplate("$shop#storeid_{storeId:lower}")
    assert lower.format({"storeId": "Portland HQ"}) == "$shop#storeid_portland hq"
    assert lower.prefix({"storeId": "PORTland"}) == "$shop#storeid_portland"
    assert lower.parse("$shop#storeid_portland hq") == {"storeId": "portland hq"}
    # A key holding capitals where the template folds them is not one the template writes: its id would read another.
    assert lower.parse("$shop#storeid_Portland HQ") is None
    upper = KeyTemplate("COUNTRY#{country:upper}#{city}")
    assert upper.format({"country": "us", "city": "Boise"}) == "COUNTRY#US#Boise"
    assert upper.cases == {"country": "upper"}
    with pytest.raises(BadUserInput, match="may not contain"):
        lower.format({"storeId": "a#b"})


@pytest.mark.parametrize("pattern", ["N#{n:07:lower}", "D#{day:date:upper}", "X#{id:title}"])
def test_a_case_is_for_text_alone(pattern: str) -> None:
    with pytest.raises(ValueError, match=r"\{name:lower\} or \{name:upper\}"):
        KeyTemplate(pattern)


def test_a_folded_id_is_read_back_in_the_case_its_stored_copy_keeps() -> None:
    model = Model("t", (TABLE,), (_store(),))
    item = {"pk": "$shop#storeid_portland hq", "sk": "$store_1", "__edb_e__": "store", "__edb_v__": "1"}
    assert model.recognise({**item, "storeId": "Portland HQ"}) == (model.entities[0], {"storeId": "Portland HQ"})
    # The recognition kept for one item is not another's: the copy is part of what it reads.
    assert model.recognise({**item, "storeId": "PORTLAND hq"})[1] == {"storeId": "PORTLAND hq"}  # type: ignore[index]
    # Without a copy, or with one the key does not hold, the id is served as the key holds it.
    assert model.recognise(item)[1] == {"storeId": "portland hq"}  # type: ignore[index]
    assert model.recognise({**item, "storeId": "Seattle"})[1] == {"storeId": "portland hq"}  # type: ignore[index]


def test_an_index_key_that_holds_the_id_as_given_agrees_with_the_folded_table_key() -> None:
    store = _store(keys={"gsi1": KeyShape.of("STORES", "STORE#{storeId}")}, attributes={})
    model = Model("t", (TABLE, GSI), (store,))
    item = {
        "pk": "$shop#storeid_portland hq",
        "sk": "$store_1",
        "gsi1pk": "STORES",
        "gsi1sk": "STORE#Portland HQ",
        "__edb_e__": "store",
        "__edb_v__": "1",
    }
    assert model.recognise(item) == (store, {"storeId": "Portland HQ"})
    assert model.recognise({**item, "gsi1sk": "STORE#Seattle"}) is None
    assert store.served_folded == frozenset()


def test_a_folded_id_passed_to_a_key_that_holds_it_as_given_is_refused_without_a_stored_copy() -> None:
    store = _store(attributes={})
    region = Entity("Region", {None: KeyShape.of("REGION#{storeId}", "REGION")})
    with pytest.raises(ValueError, match=r"Store.region: Store's keys hold storeId lower-cased only.*from_id="):
        Model("t", (TABLE,), (store, region), links=(Link("Store.region", store, region),))
    kept = _store()
    Model("t", (TABLE,), (kept, region), links=(Link("Store.region", kept, region),))
    folded = Entity("Region", {None: KeyShape.of("REGION#{storeId:lower}", "REGION")})
    Model("t", (TABLE,), (store, folded), links=(Link("Store.region", store, folded),))


def test_a_folded_parent_id_is_refused_where_its_members_key_holds_it_as_given() -> None:
    store = _store(attributes={})
    staff = Entity("Staff", {None: KeyShape.of("STAFF#{storeId}", "S#{staffId}")})
    with pytest.raises(ValueError, match=r"Store\.staff: Store's keys hold storeId lower-cased only"):
        Model("t", (TABLE,), (store, staff), (Collection("Store.staff", store, staff),))


@pytest.mark.parametrize(
    ("folded", "other", "keys"),
    [
        ("A{aId:lower}", "AB{bId}", ("Ab", "ABc")),  # a lower-cased id never starts with B
        ("sh{aId:upper}", "shp{bId}", ("shP", "shpx")),  # an upper-cased one never with p
        ("A{aId:upper}", "AB{bId}", None),  # AB7 is either
        ("A{aId:upper}", "A{bId:lower}", None),  # A7 is either
    ],
)
def test_shapes_are_mistaken_for_each_other_only_where_a_folded_id_can_hold_the_other_text(
    folded: str, other: str, keys: tuple[str, str] | None
) -> None:
    """Found by the generated designs: a folded field was taken to hold any text, so shapes no key can have both
    were refused."""
    a = Entity("A", {None: KeyShape.of(folded, "META")})
    b = Entity("B", {None: KeyShape.of(other, "META")})
    if keys is None:
        with pytest.raises(ValueError, match="can be mistaken for each other"):
            Model("t", (TABLE,), (a, b))
        return
    model = Model("t", (TABLE,), (a, b))
    found = [model.recognise({"pk": key, "sk": "META"}) for key in keys]
    assert [None if one is None else one[0].name for one in found] == ["A", "B"]


def test_an_id_folded_both_ways_without_a_copy_is_refused() -> None:
    store = _store(keys={"gsi1": KeyShape.of("STORES", "STORE#{storeId:upper}")}, attributes={})
    with pytest.raises(ValueError, match="lower-cased in one place and upper-cased in another"):
        Model("t", (TABLE, GSI), (store,))


# --- constants ----------------------------------------------------------------------------------------------------


def _entity(name: str, **constants: str) -> Entity:
    return Entity(name, {None: KeyShape.of("$shop#id_{id:lower}", "$shop_1")}, constants=constants)


def test_an_item_is_the_entity_only_when_it_holds_every_constant() -> None:
    store, employee = _entity("Store", __edb_e__="store", __edb_v__="1"), _entity("Employee", __edb_e__="employee")
    model = Model("t", (TABLE,), (store, employee))
    key = {"pk": "$shop#id_a", "sk": "$shop_1"}
    assert model.recognise({**key, "__edb_e__": "store", "__edb_v__": "1"}) == (store, {"id": "a"})
    assert model.recognise({**key, "__edb_e__": "store", "__edb_v__": "2"}) is None
    assert model.recognise({**key, "__edb_e__": "store"}) is None
    assert model.recognise({**key, "__edb_e__": "employee"}) == (employee, {"id": "a"})
    assert model.recognise({**key, "__edb_e__": "store"}, partial=True) == (store, {"id": "a"})
    assert model.key_attributes(store, {"id": "A"}) == {
        "pk": "$shop#id_a",
        "sk": "$shop_1",
        "__edb_e__": "store",
        "__edb_v__": "1",
    }


def test_a_discriminator_is_one_constant_among_the_others() -> None:
    one = Entity("One", {None: KeyShape.of("A#{id}", "A")}, discriminator=("_et", "one"), constants={"_v": "1"})
    other = Entity("Other", {None: KeyShape.of("A#{id}", "A")}, constants={"_et": "other"})
    model = Model("t", (TABLE,), (one, other))
    assert one.identity == {"_et": "one", "_v": "1"}
    assert model.recognise({"pk": "A#x", "sk": "A", "_et": "one", "_v": "1"}) == (one, {"id": "x"})


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: _entity("A", __edb_v__=1), "holds text"),
        (lambda: Entity("A", {None: KeyShape.of("A#{id}", "A")}, {"kind": "S"}, constants={"kind": "a"}), "attributes"),
        (
            lambda: Entity("A", {None: KeyShape.of("A#{id}", "A")}, discriminator=("k", "a"), constants={"k": "b"}),
            "declare it once",
        ),
        (lambda: Model("t", (TABLE, GSI), (_entity("A", gsi1pk="x"),)), "a key attribute, not a constant"),
        (
            lambda: Model("t", (TABLE,), (_entity("A", __edb_v__="1"), _entity("B", __edb_v__="1"))),
            "can be mistaken for each other",
        ),
    ],
)
def test_constants_that_cannot_identify_an_entity_are_refused(make: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


# --- enum values --------------------------------------------------------------------------------------------------


def test_enum_values_that_are_no_graphql_names_get_one() -> None:
    assert [enum_name(one) for one in ("active", "in-progress", "on hold", "2fa", "null", "a--b")] == [
        "active",
        "in_progress",
        "on_hold",
        "_2fa",
        "null",
        "a_b",
    ]
    spec = Attribute("S", enum=("in-progress", "2fa", "null"), enum_names={"2fa": "TWO_FACTOR", "null": "NONE"})
    assert spec.enum_members == {"in-progress": "in_progress", "2fa": "TWO_FACTOR", "null": "NONE"}
    with pytest.raises(ValueError, match=r"'null' cannot be a GraphQL enum value: name 'null' with enum_names="):
        Attribute("S", enum=("null",))
    with pytest.raises(ValueError, match="enum_names names the values of an enum"):
        Attribute("S", enum_names={"a": "A"})


# --- kept times ---------------------------------------------------------------------------------------------------


AT = datetime(2026, 3, 15, 14, 25, 1, 123456, tzinfo=UTC)


def test_a_kept_time_is_written_as_its_clock_says() -> None:
    assert stamp("iso", AT) == stamp(None, AT) == "2026-03-15T14:25:01.123Z"
    assert stamp("seconds", AT) == 1773584701
    assert stamp("milliseconds", AT) == 1773584701123


def test_creates_keep_both_times_and_updates_the_updated_one() -> None:
    entity = Entity(
        "E",
        {None: KeyShape.of("E#{id}", "E")},
        {
            "_ct": Attribute("S", on_create="now"),
            "_md": Attribute("S", on_update="now", clock="iso"),
            "createdAt": Attribute("N", on_create="now", clock="milliseconds"),
            "seen": Attribute("INT", on_update="now", clock="seconds"),
        },
    )
    assert stamps(entity, creating=True, now=AT) == {
        "_ct": "2026-03-15T14:25:01.123Z",
        "_md": "2026-03-15T14:25:01.123Z",
        "createdAt": 1773584701123,
        "seen": 1773584701,
    }
    assert stamps(entity, creating=False, now=AT) == {"_md": "2026-03-15T14:25:01.123Z", "seen": 1773584701}
    assert not any(spec.is_input for spec in entity.declared.values())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Attribute("N", on_create="now"), "clock= one of"),
        (lambda: Attribute("INT", on_update="now", clock="milliseconds"), "declare it 'N'"),
        (lambda: Attribute("S", on_update="now", clock="seconds"), "an S as clock='iso'"),
        (lambda: Attribute("BOOL", on_update="now"), "clock= one of"),
        (lambda: Attribute("S", clock="iso"), "give on_create= or on_update='now'"),
        (lambda: Attribute("S", on_create="now", on_update="now"), "drop on_create="),
        (lambda: Attribute("S", on_update="now", required=True), "no required="),
    ],
)
def test_a_time_that_cannot_be_kept_is_refused(make: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_a_collection_topic_is_the_same_however_a_folded_parent_id_is_typed() -> None:
    store = _store()
    topics = {collection_topic("Store.staff", store, {"storeId": one}) for one in ("Portland HQ", "portland hq")}
    assert topics == {("collection", "Store.staff", "portland hq")}
    plain = Entity("Region", {None: KeyShape.of("REGION#{regionId}", "REGION")})
    assert collection_topic("Region.stores", plain, {"regionId": "EU"}) == ("collection", "Region.stores", "EU")


def test_a_time_kept_on_update_may_order_an_index_and_an_update_moves_the_item_there() -> None:
    entity = Entity(
        "Doc",
        {None: KeyShape.of("DOC#{docId}", "DOC"), "gsi1": KeyShape.of("DOCS", "MD#{_md}")},
        {"_md": Attribute("S", on_update="now")},
    )
    model = Model("t", (TABLE, GSI), (entity,))
    created = model.item(entity, {"docId": "d"}, stamps(entity, creating=True, now=AT))
    assert created["gsi1sk"] == "MD#2026-03-15T14:25:01.123Z"
    later = stamps(entity, creating=False, now=AT.replace(year=2027))
    op = building.update(model, entity, {"docId": "d"}, later, 1, write_id="w")
    assert "MD#2027-03-15T14:25:01.123Z" in op.values.values()


def test_a_tenant_id_that_a_key_folds_is_refused() -> None:
    store = _store()
    with pytest.raises(ValueError, match=r"tenants whose ids differ only in case would share its items"):
        Declaration(Model("t", (TABLE,), (store,)), Tenancy({"storeId": "stores"}))
