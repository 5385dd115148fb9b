"""``tablegraph import workbench``: a NoSQL Workbench model becomes a YAML declaration that builds."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gateway.dynamo.sampling import KeySchema
from gateway.server.cli import main
from gateway.server.declaration_file import load_file
from gateway.server.drafts import SampleGroup, draft
from tests.support.online_shop import SHOP_KEYS
from tests.support.paths import ROOT

MODEL = ROOT / "tests" / "support" / "online_shop_workbench.json"


def _templates(path: Path) -> dict[str, dict[str, tuple[str, str]]]:
    declaration = load_file(path)
    return {
        entity.name: {index or "table": (shape.pk.pattern, shape.sk.pattern) for index, shape in entity.keys.items()}
        for entity in declaration.model.entities
        if not entity.internal
    }


def _import(tmp_path: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    output = tmp_path / "shop.yaml"
    assert main(["import", "workbench", str(model), "--output", str(output)]) == 0
    return output, capsys.readouterr().err


def test_the_online_shop_model_imports_into_a_declaration_that_builds_with_its_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, report = _import(tmp_path, MODEL, capsys)
    assert _templates(output) == SHOP_KEYS
    declaration = load_file(output)
    for entity in declaration.model.entities:
        if not entity.internal:
            assert entity.discriminator is not None and entity.discriminator[0] == "EntityType"
    assert declaration.entity("Product").declared["Price"].text
    assert declaration.entity("Customer").declared["Email"].type == "S"
    assert declaration.entity("Warehouse").declared["Address"].type == "JSON"
    assert "OrderItem.orderedAt: a date, kept as key text" in report
    assert "Customer.customerId: a number, kept as key text" in report
    assert "not inferred:" in report and "relations:" in report


def test_the_relations_it_cannot_infer_are_suggested_as_comments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, _ = _import(tmp_path, MODEL, capsys)
    text = output.read_text()
    assert "#   Invoice.payments:\n#     parent: Invoice\n#     member: Payment\n#     index: GSI1\n" in text
    assert "#   o#{orderId}: Invoice, OrderItem, Payment, Shipment, ShipmentItem" in text
    assert not load_file(output).model.collections


def test_a_model_without_facets_is_grouped_by_its_discriminator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document: dict[str, Any] = json.loads(MODEL.read_text())
    (table,) = document["DataModel"]
    table["TableData"] = [row for facet in table.pop("TableFacets") for row in facet["TableData"]]
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(document))
    output, _ = _import(tmp_path, flat, capsys)
    assert _templates(output) == SHOP_KEYS


def test_a_file_that_is_no_workbench_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"tables": []}')
    assert main(["import", "workbench", str(other)]) == 2
    assert "no DataModel list of tables" in capsys.readouterr().err


def test_key_templates_are_read_from_values_of_one_shape() -> None:
    keys = KeySchema("PK", "SK")
    items = [
        {"PK": f"ORG#{org}", "SK": f"USER#{user}", "username": user, "joined": "2026-01-0" + str(n)}
        for n, (org, user) in enumerate([("acme", "ada"), ("acme", "bo"), ("umbrella", "cyd")], start=1)
    ]
    result = draft([SampleGroup("User", items)], keys, "t")
    assert "pk: ORG#{orgId}" in result.text.replace("'", "")
    assert "sk: USER#{username}" in result.text.replace("'", "")
    assert "username: {type: S, from_id: username}" in result.text
    assert "joined: DATE" in result.text


def test_sets_are_drafted_by_their_elements_binary_ones_too() -> None:
    """A binary set was drafted as a string set, which serves it null; a set of mixed elements is JSON."""
    keys = KeySchema("PK", "SK")
    items = [
        {
            "PK": f"p#{n}",
            "SK": "META",
            "tags": {"red", f"t{n}"},
            "sizes": {Decimal(n), Decimal("2.5")},
            "hashes": {b"\x00", bytes([n])},
            "mixed": {"a", Decimal(n)},
        }
        for n in range(1, 4)
    ]
    text = draft([SampleGroup("Product", items)], keys, "t").text
    drafted = {line.strip() for line in text.splitlines()}
    assert {"tags: SS", "sizes: NS", "hashes: BS", "mixed: JSON"} <= drafted


def test_a_binary_set_in_a_workbench_model_is_drafted_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document: dict[str, Any] = json.loads(MODEL.read_text())
    (table,) = document["DataModel"]
    customers = next(facet for facet in table["TableFacets"] if facet["FacetName"] == "customer")
    for row in customers["TableData"]:
        row["Avatars"] = {"BS": ["AAE=", "/w=="]}
    model = tmp_path / "avatars.json"
    model.write_text(json.dumps(document))
    output, _ = _import(tmp_path, model, capsys)
    (customer,) = [entity for entity in load_file(output).model.entities if entity.name == "Customer"]
    assert customer.declared["Avatars"].type == "BS"
