"""Root connections (``Collection.root``): a collection listed from the Query root by its parent's ids, refused when
the model is built unless its root field has a name of its own."""

from __future__ import annotations

import re

import pytest

from gateway.design.model import Collection, Entity, Index, KeyShape, Lookup, Model

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1-PK", "GSI1-SK")
WAREHOUSE = Entity("Warehouse", {None: KeyShape.of("w#{warehouseId}", "w#{warehouseId}")})
SHIPMENT = Entity(
    "Shipment",
    {
        None: KeyShape.of("o#{orderId}", "sh#{shipmentId}"),
        "GSI1": KeyShape.of("w#{warehouseId}", "sh#{shipmentId}"),
    },
)


def _model(*roots: str | None, lookups: tuple[Lookup, ...] = (), internal: bool = False) -> Model:
    warehouse = Entity(WAREHOUSE.name, WAREHOUSE.keys, internal=internal)
    collections = tuple(
        Collection(f"Warehouse.shipments{i or ''}", warehouse, SHIPMENT, "GSI1", root=root)
        for i, root in enumerate(roots)
    )
    return Model("t", (TABLE, GSI1), (warehouse, SHIPMENT), collections=collections, lookups=lookups)


def test_a_root_connection_is_found_by_its_root_field_name() -> None:
    model = _model("warehouseShipments", None)
    assert model.root_collections == {"warehouseShipments": model.collections[0]}


@pytest.mark.parametrize(
    ("roots", "lookups", "taken", "owner"),
    [
        (("warehouse",), (), "warehouse", "Warehouse's root field"),
        (("warehouses",), (), "warehouses", "Warehouse's list by ids"),
        (("node",), (), "node", "the global id field"),
        (("shipmentById",), (Lookup("shipmentById", SHIPMENT, "GSI1"),), "shipmentById", "the lookup shipmentById"),
        (("listed", "listed"), (), "listed", "Warehouse.shipments's root connection"),
    ],
)
def test_a_root_name_taken_by_another_root_field_is_refused_naming_what_has_it_and_the_fix(
    roots: tuple[str, ...], lookups: tuple[Lookup, ...], taken: str, owner: str
) -> None:
    message = (
        rf"^Warehouse\.shipments1?: its root field {re.escape(repr(taken))} is taken by another root field"
        rf" \({re.escape(owner)}\): give root= a name of its own"
    )
    with pytest.raises(ValueError, match=message):
        _model(*roots, lookups=lookups)


def test_a_root_name_that_is_no_graphql_name_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^Warehouse\.shipments: its root field 'two words' is no GraphQL name"):
        _model("two words")


def test_a_root_connection_of_an_internal_parent_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^Warehouse\.shipments: Warehouse is internal.*drop root="):
        _model("listed", internal=True)


def test_a_parent_id_named_like_a_connection_argument_is_refused() -> None:
    holder = Entity("Holder", {None: KeyShape.of("h#{order}", "h#{order}")})
    held = Entity("Held", {None: KeyShape.of("h#{order}", "x#{heldId}")})
    with pytest.raises(ValueError, match=r"^Holder\.held: the root field 'listed' would take \['order'\] twice"):
        Model("t", (TABLE,), (holder, held), collections=(Collection("Holder.held", holder, held, root="listed"),))
