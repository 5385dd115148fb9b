"""The GraphQL surface derived from a model built here: its types, fields and arguments, read by introspection."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
import strawberry
from graphql import get_introspection_query, graphql_sync

from gateway.design.declaration import Declaration
from gateway.design.model import (
    Attribute,
    Collection,
    Entity,
    Index,
    KeyShape,
    Link,
    Model,
    Shape,
    served_value,
)
from gateway.design.naming import python_attribute
from gateway.dynamo.wire import Unreadable
from gateway.errors import DataMismatch
from gateway.surface.builder import Builder
from gateway.surface.graph import build
from gateway.surface.inputs import plain_attributes
from gateway.surface.toolkit import graphql_schema
from gateway.surface.types import UnreadableItem, served_values

SHELF = Entity(
    "Shelf",
    {None: KeyShape.of("SHELF#{shelfId}", "META")},
    {"label": Attribute("S", "What the shelf holds.", required=True)},
    description="A shelf of jars.",
)
JAR = Entity(
    "Jar",
    {None: KeyShape.of("SHELF#{shelfId}", "JAR#{jarId}")},
    {
        "contents": Attribute("S", "What is in the jar."),
        "size": Attribute("S", "How big it is.", enum={"small": "Fits a hand.", "large": "Needs two."}),
    },
    description="A jar on a shelf.",
)
MODEL = Model(
    table="pantry",
    indexes=(Index(None, "PK", "SK"),),
    entities=(SHELF, JAR),
    collections=(Collection("Shelf.jars", SHELF, JAR, description="By jar id."),),
    links=(Link("Jar.shelf", JAR, SHELF, "The shelf the jar stands on."),),
)


def _types(page_size: int = 20) -> dict[str, dict[str, Any]]:
    schema = build(Declaration(MODEL), page_size).schema
    result = graphql_sync(graphql_schema(schema), get_introspection_query())
    assert result.errors is None and result.data is not None
    return {one["name"]: one for one in result.data["__schema"]["types"]}


def _fields(kind: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {one["name"]: one for one in kind["fields"] or kind["inputFields"] or []}


def _named(type_: dict[str, Any]) -> str:
    """A field's type as SDL spells it."""
    if type_["kind"] == "NON_NULL":
        return _named(type_["ofType"]) + "!"
    if type_["kind"] == "LIST":
        return "[" + _named(type_["ofType"]) + "]"
    return str(type_["name"])


def test_each_entity_is_an_object_type_with_its_ids_attributes_and_relations() -> None:
    types = _types()
    shelf, jar = _fields(types["Shelf"]), _fields(types["Jar"])
    assert {"id", "shelfId", "label", "jars"} <= set(shelf)
    assert {"id", "shelfId", "jarId", "contents", "size", "shelf"} <= set(jar)
    # Required when written; an item another tool wrote may still lack it, so it may be null when read.
    assert _named(shelf["label"]["type"]) == "String"
    assert _named(_fields(types["CreateShelfInput"])["label"]["type"]) == "String!"
    assert types["Shelf"]["description"] == "A shelf of jars."
    assert shelf["label"]["description"] == "What the shelf holds."


def test_a_collection_is_a_connection_with_paging_arguments_and_the_built_page_size() -> None:
    jars = _fields(_types(page_size=7)["Shelf"])["jars"]
    arguments = {one["name"]: one for one in jars["args"]}
    assert {"first", "after"} <= set(arguments)
    assert arguments["first"]["defaultValue"] == "7"
    connection = _named(jars["type"]).rstrip("!")
    assert {"nodes", "pageInfo"} <= set(_fields(_types()[connection]))


def test_a_closed_value_set_is_an_enum_with_its_values_described() -> None:
    types = _types()
    size = _named(_fields(types["Jar"])["size"]["type"])
    values = {one["name"]: one["description"] for one in types[size]["enumValues"]}
    assert types[size]["kind"] == "ENUM"
    assert sorted(values.values()) == ["Fits a hand.", "Needs two."]


def test_each_entity_is_read_by_its_ids_and_written_by_mutations_named_after_it() -> None:
    types = _types()
    roots = _fields(types["Query"])
    assert {one["name"] for one in roots["jar"]["args"]} == {"shelfId", "jarId"}
    assert {"createShelf", "updateShelf", "deleteShelf", "createJar", "updateJar", "deleteJar"} <= set(
        _fields(types["Mutation"])
    )
    assert _named(_fields(types["CreateJarInput"])["shelfId"]["type"]) == "ID!"


# --- serving an item's values -------------------------------------------------------------------------------------

SPOT = Shape("Spot", {"row": "INT", "side": Attribute("S", enum=("left", "right"))})
CRATE = Entity(
    "Crate",
    {None: KeyShape.of("CRATE#{crateId}", "META")},
    {
        "label": Attribute("S"),
        "kind": Attribute("S", enum=("wood", "plastic")),
        "sealed": Attribute("BOOL"),
        "weight": Attribute("N"),
        "count": Attribute("INT"),
        "price": Attribute("N", text=True),
        "packed": Attribute("DATE"),
        "spot": Attribute("M", shape=SPOT),
        "spots": Attribute("L", shape=SPOT),
        "tags": Attribute("SS"),
        "extra": Attribute("JSON"),
    },
)
CRATES = Model(table="crates", indexes=(Index(None, "PK", "SK"),), entities=(CRATE,))
CRATE_ITEMS: list[dict[str, Any]] = [
    {
        "label": "apples",
        "kind": "wood",
        "sealed": True,
        "weight": Decimal("12.5"),
        "count": Decimal(40),
        "price": "3.20",
        "packed": "2026-11-24",
        "spot": {"row": Decimal(2), "side": "left"},
        "spots": [{"row": Decimal(1), "side": "right"}, {"row": Decimal(3), "side": "left"}],
        "tags": {"red", "fresh"},
        "extra": {"a": [Decimal(1), "b"]},
    },
    # Every value of another type than declared, or outside its enum: each is a DATA_MISMATCH error.
    {
        "label": Decimal(7),
        "kind": "metal",
        "sealed": "yes",
        "weight": "heavy",
        "count": Decimal("1.5"),
        "price": "cheap",
        "packed": "someday",
        "spot": ["not", "a", "map"],
        "spots": {"row": Decimal(1)},
        "tags": {Decimal(1)},
    },
    {"label": None, "sealed": False, "kind": None},
    {},
    # A value deep in a list of maps: the whole attribute is the error, its message says where.
    {"spots": [{"row": Decimal(1), "side": "right"}, {"row": "x", "side": "up"}]},
]


def _crate_builder() -> Builder:
    """A builder with its object types made and decorated, as ``graph.build`` leaves them."""
    builder = Builder(Declaration(CRATES), 20)
    for entity in builder.entities:
        builder.object_type(entity)
    for cls, description in builder.pending:
        strawberry.type(cls, description=description)
    return builder


def _one_by_one(builder: Builder, entity: Entity, names: list[str], item: dict[str, Any]) -> dict[str, Any]:
    """The values as each attribute's declaration serves it, decided for this one item: the oracle. A value the
    declaration cannot serve is a DATA_MISMATCH error."""
    out: dict[str, Any] = {}
    for name in names:
        spec = entity.declared[name]
        try:
            value = served_value(spec, item.get(name), f"{entity.name}.{name}")
        except DataMismatch as mismatch:
            out[name] = mismatch
            continue
        enum = builder.enums.get((entity.name, name))
        if enum is not None and value is not None:
            value = enum(value)
        out[name] = builder.shaped(spec, value) if spec.type in ("M", "L") else value
    return served_values(out, item)


@pytest.mark.parametrize("stored", CRATE_ITEMS, ids=["typed", "mistyped", "nulls", "empty", "nested"])
def test_an_items_values_are_served_as_each_declaration_says(stored: dict[str, Any]) -> None:
    builder = _crate_builder()
    names = [name for name, _ in plain_attributes(CRATE)]
    item = {"PK": "CRATE#c1", "SK": "META", **stored}
    served = builder.values_of(CRATE, names)(item)
    assert _comparable(served) == _comparable(_one_by_one(builder, CRATE, names, item))
    for name, value in served.items():
        if isinstance(value, DataMismatch):  # the field's error names what the table holds, and where
            assert value.extensions == {
                "code": "DATA_MISMATCH",
                "entity": "Crate",
                "attribute": name,
                "key": {"PK": "CRATE#c1", "SK": "META"},
            }
    # An item holding what a response cannot carry: those values are errors, the others are served.
    unreadable = Unreadable(item, ["label", "spot"])
    served = builder.values_of(CRATE, names)(unreadable)
    assert _comparable(served) == _comparable(_one_by_one(builder, CRATE, names, unreadable))
    assert isinstance(served["label"], UnreadableItem) and isinstance(served["spot"], UnreadableItem)


def test_an_unreadable_value_of_a_stored_name_is_an_error_at_its_own_attribute() -> None:
    tally = Entity("Tally", {None: KeyShape.of("T#{tallyId}", "META")}, {"_et": "S", "post#": "INT"})
    builder = Builder(Declaration(Model("tally", (Index(None, "PK", "SK"),), (tally,))), 20)
    builder.object_type(tally)
    item = Unreadable({"PK": "T#t1", "SK": "META", "_et": "?", "post#": Decimal(2)}, ["_et"])
    served = builder.values_of(tally, ["_et", "post#"])(item)
    assert set(served) == {python_attribute("_et"), python_attribute("post#")}
    assert isinstance(served[python_attribute("_et")], UnreadableItem)
    assert "the stored _et cannot be served" in str(served[python_attribute("_et")])
    assert served[python_attribute("post#")] == 2


def _comparable(values: dict[str, Any]) -> dict[str, Any]:
    """Errors compare by identity: each as its message."""
    return {name: str(value) if isinstance(value, Exception) else value for name, value in values.items()}


def test_how_values_are_served_is_decided_once_per_entity_and_names() -> None:
    builder = _crate_builder()
    first = builder.values_of(CRATE, ["label", "kind"])
    assert builder.values_of(CRATE, ["label", "kind"]) is first
    assert builder.values_of(CRATE, ["label"]) is not first
    served = first({"PK": "CRATE#c1", "SK": "META", "label": "pears", "kind": "plastic", "weight": Decimal(1)})
    assert served == {"label": "pears", "kind": builder.enums[("Crate", "kind")]("plastic")}
