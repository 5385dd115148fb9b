"""The Online Shop ships as Python (schema/online_shop.py) and as YAML (schema/online_shop.yaml): both serve the same
API, the same way, with its partition entity, sort-key ranges and lookups."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

import jsonschema
import pytest
import yaml
from graphql import parse

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, Collection, Entity, Link
from gateway.execution.cost import Budget, Planner
from gateway.server.cli import main
from gateway.server.declaration_file import SCHEMA_PATH, load_file
from gateway.surface.graph import build
from gateway.surface.toolkit import graphql_schema
from schema.online_shop import SHOP
from tests.support.paths import ROOT

SHOP_YAML = ROOT / "schema" / "online_shop.yaml"
WORKBENCH = ROOT / "tests" / "support" / "online_shop_workbench.json"

# Access patterns of docs/online-shop.md, as tests/designs/test_online_shop.py asks them.
PATTERNS = {
    "01 a customer": '{ customer(customerId: "10001") { customerId email name } }',
    "02 a product and its detail map": '{ product(productId: "20002") { productId price'
    " detail { name description } } }",
    "04 a product's inventory": '{ product(productId: "20001") { inventory(first: 50, order: DESCENDING)'
    " { nodes { warehouseId quantity } } } }",
    "05 all of an order's details": '{ order(orderId: "40002") { details { nodes { __typename ... on OrderItem'
    " { productId } ... on Invoice { invoiceId } ... on Payment { paymentId } ... on Shipment { shipmentId }"
    " ... on ShipmentItem { shipmentItemId } } } } }",
    "07 an order's invoice and back": '{ order(orderId: "40003") { invoices { nodes { invoiceId order { orderId'
    " items(first: 1) { nodes { productId } } } } } } }",
    "09 a range of a product's orders": '{ product(productId: "20001") { orders(first: 50, orderedAt:'
    ' { between: ["2020-06-01", "2020-06-15"] }) { nodes { orderId orderedAt } } } }',
    "10 an invoice by its id alone": '{ invoiceById(invoiceId: "50003") { orderId invoiceId amount'
    " detail { payments { type amount } } } }",
    "11 an invoice's payment items": '{ invoiceById(invoiceId: "50001") { payments { nodes { paymentId amount } } } }',
    "12 a shipment and its items": '{ shipmentById(shipmentId: "70001") { type items { nodes { productId quantity } }'
    " warehouse { warehouseId } } }",
    "13 14 a warehouse's shipments and inventory": '{ warehouse(warehouseId: "30002") { shipments(first: 50)'
    " { nodes { shipmentId } } inventory(first: 50) { nodes { productId } } } }",
    "15 a customer's invoices since": '{ customer(customerId: "10001") { invoices(first: 50, invoicedAt:'
    ' { gte: "2020-06-01" }) { nodes { invoiceId } } } }',
    "16 what a customer ordered, by prefix": '{ customer(customerId: "10001") { orderedProducts(first: 50,'
    ' orderedAt: { beginsWith: "2020-06" }) { nodes { productId product { price } } } } }',
}


@pytest.fixture(scope="module")
def from_yaml() -> Declaration:
    return load_file(SHOP_YAML)


def _attributes(declared: Mapping[str, Attribute]) -> dict[str, object]:
    """Attributes by content: shapes compare by identity, so each is its name, description and fields."""
    return {
        name: (
            dataclasses.replace(attribute, shape=None),
            None
            if attribute.shape is None
            else (attribute.shape.name, attribute.shape.description, _attributes(attribute.shape.declared)),
        )
        for name, attribute in declared.items()
    }


def _fields(relation: Collection | Link) -> dict[str, object]:
    """A relation's declared fields, with each entity by its name."""
    values = {one.name: getattr(relation, one.name) for one in dataclasses.fields(relation) if one.init}
    return {name: _named(value) for name, value in values.items()}


def _named(value: object) -> object:
    """An entity by its name, and a union's members by theirs."""
    if isinstance(value, tuple) and value and all(isinstance(one, Entity) for one in value):
        return tuple(one.name for one in value)
    return value.name if isinstance(value, Entity) else value


def _plan(declaration: Declaration, query: str) -> dict[str, object]:
    planner = Planner(graphql_schema(build(declaration).schema), declaration.model, Budget.from_settings(Settings()))
    estimate = planner.check(parse(query), None, None, enforce=False)
    assert estimate is not None
    return estimate.explain(planner.budget)


def test_the_shop_file_validates_against_the_published_schema() -> None:
    jsonschema.validate(yaml.safe_load(SHOP_YAML.read_text()), json.loads(SCHEMA_PATH.read_text()))


def test_the_shop_file_exports_the_same_schema_as_the_python_declaration(from_yaml: Declaration) -> None:
    assert build(from_yaml).schema.as_str() == build(SHOP).schema.as_str()


def test_the_shop_file_declares_the_same_model_as_the_python_declaration(from_yaml: Declaration) -> None:
    mine, theirs = from_yaml.model, SHOP.model
    assert (mine.table, mine.indexes) == (theirs.table, theirs.indexes)
    assert [entity.name for entity in mine.entities] == [entity.name for entity in theirs.entities]
    for one, other in zip(mine.entities, theirs.entities, strict=True):
        assert (one.keys, _attributes(one.declared), one.discriminator, one.partition, one.description) == (
            other.keys,
            _attributes(other.declared),
            other.discriminator,
            other.partition,
            other.description,
        ), one.name
    assert [_fields(one) for one in mine.collections] == [_fields(one) for one in theirs.collections]
    assert [_fields(one) for one in mine.links] == [_fields(one) for one in theirs.links]
    assert [(one.name, one.entity.name, one.index, one.description) for one in mine.lookups] == [
        (one.name, one.entity.name, one.index, one.description) for one in theirs.lookups
    ]
    assert from_yaml.tenancy == SHOP.tenancy


@pytest.mark.parametrize("query", PATTERNS.values(), ids=PATTERNS.keys())
def test_the_shop_file_plans_each_access_pattern_as_the_python_declaration(from_yaml: Declaration, query: str) -> None:
    planned = _plan(from_yaml, query)
    assert planned == _plan(SHOP, query)
    # The estimate does not count a lookup's Query yet (gateway/execution/cost.py knows no lookups): 0 calls there.
    if "ById(" not in query:
        assert planned["calls"] and planned["rounds"]


def test_the_workbench_import_drafts_the_item_entities_of_the_file_and_none_of_its_relations(
    from_yaml: Declaration, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What docs/declarations.md says the import of the shop's Workbench model got right, and what it left."""
    output = tmp_path / "draft.yaml"
    assert main(["import", "workbench", str(WORKBENCH), "--output", str(output)]) == 0
    capsys.readouterr()
    drafted = load_file(output).model
    items = [entity for entity in from_yaml.model.entities if not entity.internal and not entity.partition]
    assert [
        (one.name, one.keys, one.discriminator, set(one.declared)) for one in drafted.entities if not one.internal
    ] == [(one.name, one.keys, one.discriminator, set(one.declared)) for one in items]
    assert (drafted.table, drafted.indexes) == (from_yaml.model.table, from_yaml.model.indexes)
    assert not drafted.collections and not drafted.links and not drafted.lookups
