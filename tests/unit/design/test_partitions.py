"""Partition entities (``Entity(partition=True)``): a parent with no item of its own, refused where an item would
be needed, never read at the head of its members' Query."""

from __future__ import annotations

import pytest

from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Link, Model

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")
ORDER = Entity("Order", {None: KeyShape.of("o#{orderId}", "o#{orderId}")}, partition=True)
LINE = Entity("Line", {None: KeyShape.of("o#{orderId}", "p#{productId}")}, {"Quantity": Attribute("N", text=True)})


def test_a_partition_entity_is_a_parent_of_collections_and_a_link_target_never_read_with_its_members() -> None:
    lines = Collection("Order.lines", ORDER, LINE)
    model = Model("t", (TABLE,), (ORDER, LINE), collections=(lines,), links=(Link("Line.order", LINE, ORDER),))
    assert not model.parent_sorts_with_members(lines)  # 'o#' sorts before 'p#', but there is no item to read there


@pytest.mark.parametrize(
    "options",
    [
        {"attributes": {"note": "S"}},
        {"keys": {None: KeyShape.of("o#{orderId}", "O"), "GSI1": KeyShape.of("x#{orderId}", "O")}},
        {"discriminator": ("EntityType", "order")},
    ],
)
def test_a_partition_entity_with_anything_an_item_would_hold_is_refused(options: dict[str, object]) -> None:
    keys = options.pop("keys", {None: KeyShape.of("o#{orderId}", "O")})
    with pytest.raises(ValueError, match="a partition entity has no item"):
        Entity("Order", keys, partition=True, **options)  # type: ignore[arg-type]


def test_a_partition_entity_cannot_be_listed() -> None:
    with pytest.raises(ValueError, match=r"Line\.orders: Order has no items to list"):
        Model("t", (TABLE,), (ORDER, LINE), collections=(Collection("Line.orders", LINE, ORDER),))


def test_a_partition_entity_of_an_items_shape_is_no_rival_to_it() -> None:
    """Regression: a partition entity whose key shape an entity's items also have was refused as if one item could
    be both; it has no item, so items are recognised as the other entity, and its object's ids as its own."""
    cart = Entity("Cart", {None: KeyShape.of("c#{cartId}", "c#{cartId}")}, partition=True)
    customer = Entity("Customer", {None: KeyShape.of("c#{customerId}", "c#{customerId}")}, {"name": "S"})
    model = Model("t", (TABLE,), (cart, customer))
    item = {"PK": "c#7", "SK": "c#7"}
    assert model.recognise(item) == (customer, {"customerId": "7"})
    assert model.ids_of(cart, model.key(cart, {"cartId": "7"})) == {"cartId": "7"}
