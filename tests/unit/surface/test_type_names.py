"""An entity's name is its GraphQL type's: a name the schema already gives another type is refused, never lost."""

from __future__ import annotations

import pytest

from gateway import Entity, Index, KeyShape, Model
from gateway.design.declaration import Declaration
from gateway.server.declaration_file import DeclarationFileError, parse
from gateway.surface.graph import build
from schema.model import MODEL

DEMO_TYPES = sorted(
    name
    for name in build(Declaration(MODEL)).schema.schema_converter.type_map
    if name not in {entity.name for entity in MODEL.entities}
)


def _with_entity(name: str) -> Declaration:
    """The demo, plus an entity called ``name`` at a key shape of its own."""
    extra = Entity(name, {None: KeyShape.of("EXTRA#{extraId}", "EXTRA")}, {"title": "S"})
    return Declaration(Model(MODEL.table, MODEL.indexes, (*MODEL.entities, extra), MODEL.collections, MODEL.links))


@pytest.mark.parametrize("name", DEMO_TYPES)
def test_an_entity_named_like_any_other_type_of_the_schema_is_refused(name: str) -> None:
    # Before, Query, Mutation and Subscription kept the root's fields and lost the entity's, and PageInfo, Date or
    # SortOrder served the entity in the place of the type every connection or date field needs, all silently.
    with pytest.raises(ValueError, match=f"^{name}: .*rename the entity"):
        build(_with_entity(name))


def test_names_no_other_type_has_are_served() -> None:
    schema = build(_with_entity("Extra")).schema
    assert schema.schema_converter.type_map["Extra"].definition.origin.__name__ == "Extra"


def test_a_root_type_name_is_refused_when_the_model_is_built_and_says_the_fix() -> None:
    table = Index(None, "PK", "SK")
    with pytest.raises(ValueError, match=r"^Subscription: the GraphQL schema already has a type named 'Subscription'"):
        Model("t", (table,), (Entity("Subscription", {None: KeyShape.of("S#{id}", "META")}, {"plan": "S"}),))


FILE = """\
table: payments
keys: {pk: PK, sk: SK}
entities:
  Course:
    keys:
      table: {pk: "C#{courseId}", sk: META}
  CourseResult:
    keys:
      table: {pk: "R#{resultId}", sk: META}
"""


def test_a_clash_of_a_declared_and_a_derived_type_name_names_the_file_line_and_entity() -> None:
    with pytest.raises(DeclarationFileError) as refused:
        parse(FILE, "payments.yaml")
    assert str(refused.value).startswith("payments.yaml:7: entities.CourseResult: CourseResult: the entity")


def test_a_root_type_name_in_a_file_names_its_line() -> None:
    text = FILE.replace("CourseResult:", "Subscription:")
    with pytest.raises(DeclarationFileError, match=r"^payments\.yaml:7: entities\.Subscription: Subscription: the Gr"):
        parse(text, "payments.yaml")
