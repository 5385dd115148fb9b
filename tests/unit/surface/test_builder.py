"""The GraphQL surface derived from a model built here: its types, fields and arguments, read by introspection."""

from __future__ import annotations

from typing import Any

from graphql import get_introspection_query, graphql_sync

from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Link, Model
from gateway.surface.graph import build
from gateway.surface.toolkit import graphql_schema

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
