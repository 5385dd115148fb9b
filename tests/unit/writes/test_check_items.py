"""``check``'s reading of items, without I/O: a value inside a typed map or list is checked where it is."""

from __future__ import annotations

from decimal import Decimal

from gateway import Attribute, Entity, Index, KeyShape, Model
from gateway.design.declaration import Declaration
from gateway.design.model import Shape
from gateway.writes.check import ItemCheck, Report

ADDRESS = Shape("Address", {"zip": "INT", "city": "S"})
ORDER = Entity(
    "Order",
    {None: KeyShape.of("O#{orderId}", "O")},
    {
        "address": Attribute("M", shape=ADDRESS),
        "lines": Attribute("L", shape=ADDRESS),
        "tags": Attribute("L", element="DATE"),
        "placed": "BOOL",
    },
)
DECLARATION = Declaration(Model("orders", (Index(None, "PK", "SK"),), (ORDER,)))


def found(*items: dict[str, object]) -> list[tuple[str, str, str, int]]:
    report = Report("orders", full=False)
    ItemCheck(DECLARATION.writes, report).see(list(items))
    return [(one.kind, one.subject, one.problem, one.count) for one in report.findings]


def test_values_inside_maps_and_lists_are_checked_where_they_are() -> None:
    good = {"address": {"zip": Decimal(12345), "city": "Oslo"}, "tags": ["2024-01-02"], "placed": False}
    assert found({"PK": "O#1", "SK": "O", **good}) == []
    bad = {
        "address": {"zip": "N1 9GU", "city": "London"},
        "lines": [{"zip": Decimal(1)}, {"zip": Decimal("1.5")}, {"zip": Decimal("2.5")}],
        "tags": ["soon", "later"],
        "placed": "yes",
    }
    assert found({"PK": "O#2", "SK": "O", **bad}) == [
        ("attribute-type", "Order.address.zip", "holds text (S) where INT is declared", 1),
        ("attribute-type", "Order.lines[].zip", "holds a number that is no 32-bit integer", 1),
        ("attribute-type", "Order.placed", "holds S where BOOL is declared", 1),
        ("attribute-type", "Order.tags[]", "holds text that is no YYYY-MM-DD date", 1),
    ]


def test_an_item_of_no_entity_is_grouped_by_the_heads_of_its_keys() -> None:
    assert found({"PK": "X#1", "SK": "Y#1"}, {"PK": "X#2", "SK": "Y#2"}, {"PK": "O#3", "SK": "O"}) == [
        ("unrecognised", "PK=X#… SK=Y#…", "no declared entity has this table key", 2)
    ]
