"""Lookups (``Model.lookups``): an entity found through a secondary index by ids its table key lacks, refused when
the model is built unless one Query with both index keys equal can read it."""

from __future__ import annotations

import pytest

from gateway.design.model import Attribute, Entity, Index, KeyShape, Lookup, Model
from gateway.execution.queries import lookup_query

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1-PK", "GSI1-SK")
INVOICE = Entity(
    "Invoice",
    {None: KeyShape.of("o#{orderId}", "i#{invoiceId}"), "GSI1": KeyShape.of("i#{invoiceId}", "i#{invoiceId}")},
)


def _model(*lookups: Lookup, entities: tuple[Entity, ...] = (INVOICE,)) -> Model:
    return Model("t", (TABLE, GSI1), entities, lookups=lookups)


def test_a_lookup_takes_the_ids_of_its_index_key_and_reads_it_with_both_keys_equal() -> None:
    lookup = Lookup("invoiceById", INVOICE, "GSI1")
    model = _model(lookup)
    assert lookup.arguments == (("invoiceId", "invoiceId"),)
    request = lookup_query(model, lookup, {"invoiceId": "7"})
    assert (request.index, request.partition, request.sort, request.limit) == (
        "GSI1",
        ("GSI1-PK", "i#7"),
        ("GSI1-SK", "=", "i#7"),
        2,
    )


def _stamped() -> Entity:
    return Entity(
        "Stamped",
        {None: KeyShape.of("s#{orderId}", "s#{stampId}"), "GSI1": KeyShape.of("s#{stampId}", "{when}")},
        {"when": Attribute("S", required=True)},
    )


@pytest.mark.parametrize(
    ("lookups", "entities", "message"),
    [
        ((Lookup("invoice", INVOICE, "GSI1"),), (INVOICE,), "needs a name of its own"),
        ((Lookup("byId", INVOICE, "GSI1"), Lookup("byId", INVOICE, "GSI1")), (INVOICE,), "needs a name of its own"),
        ((Lookup("byId", INVOICE, "GSI2"),), (INVOICE,), "has no keys in index 'GSI2'"),
        (
            (
                Lookup(
                    "byKey",
                    Entity("Plain", {None: KeyShape.of("p#{a}", "p#{a}"), "GSI1": KeyShape.of("x#{a}", "X")}),
                    "GSI1",
                ),
            ),
            None,
            "hold Plain's whole table key",
        ),
        ((Lookup("byStamp", _stamped(), "GSI1"),), None, "are values, not ids"),
        (
            (Lookup("other", Entity("Elsewhere", {None: KeyShape.of("e#{a}", "E")}), "GSI1"),),
            (INVOICE,),
            "not a served",
        ),
    ],
)
def test_a_lookup_that_one_query_cannot_answer_is_refused(
    lookups: tuple[Lookup, ...], entities: tuple[Entity, ...] | None, message: str
) -> None:
    with pytest.raises(ValueError) as refused:
        _model(*lookups, entities=entities or (lookups[0].entity,))
    assert "lookup '" in str(refused.value) and message in str(refused.value)
