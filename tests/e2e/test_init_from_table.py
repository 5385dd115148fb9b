"""``tablegraph init --from-table``: a bounded sample of a live table drafts the declaration its authors wrote."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from gateway.design.model import Entity, Model
from gateway.server.cli import main
from gateway.server.declaration_file import load_file
from schema.model import MODEL
from tests.support import online_shop
from tests.support.online_shop import SHOP_KEYS

_FIELD = re.compile(r"\{[^}]*\}")


@pytest.fixture(scope="module")
def shop_table(dynamodb: Any) -> Iterator[str]:
    name = f"shop-{uuid.uuid4().hex[:8]}"
    online_shop.create_table(dynamodb, name)
    online_shop.load(dynamodb, name, online_shop.items())
    yield name
    dynamodb.delete_table(TableName=name)


def _init(endpoint: str, table: str, tmp_path: Path, *more: str) -> Model:
    output = tmp_path / "draft.yaml"
    argv = ["init", "--from-table", table, "--endpoint-url", endpoint, "--output", str(output), *more]
    assert main(argv) == 0
    return load_file(output).model


def _templates(entity: Entity) -> dict[str, tuple[str, str]]:
    return {index or "table": (shape.pk.pattern, shape.sk.pattern) for index, shape in entity.keys.items()}


def _anonymous(entity: Entity) -> tuple[tuple[str, str, str], ...]:
    """The entity's key templates with its fields numbered in order of appearance: their shape, not their names."""
    names: dict[str, int] = {}

    def number(match: re.Match[str]) -> str:
        return f"{{{names.setdefault(match.group(0), len(names))}}}"

    return tuple(
        (index or "table", _FIELD.sub(number, shape.pk.pattern), _FIELD.sub(number, shape.sk.pattern))
        for index, shape in entity.keys.items()
    )


def test_init_on_the_online_shop_table_drafts_its_entity_types_and_key_templates(
    endpoint: str, shop_table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _init(endpoint, shop_table, tmp_path, "--sample", "500")
    drafted = {entity.name: _templates(entity) for entity in model.entities if not entity.internal}
    assert drafted == SHOP_KEYS
    # The table holds fewer items than the sample's bound: the progress ends at all of them.
    everything = len(online_shop.items())
    assert f"100% {everything}/{everything}" in capsys.readouterr().err


def test_init_on_the_demo_table_drafts_its_entity_types_and_key_shapes(
    endpoint: str, contract_table: str, dynamodb: Any, tmp_path: Path
) -> None:
    model = _init(endpoint, contract_table, tmp_path, "--sample", "1000")
    written = {_anonymous(entity) for entity in MODEL.entities if not entity.internal}
    drafted = {_anonymous(entity) for entity in model.entities if not entity.internal}
    assert drafted == written
    decode = TypeDeserializer().deserialize
    items = [{k: decode(v) for k, v in raw.items()} for raw in dynamodb.scan(TableName=contract_table)["Items"]]
    for item in items:
        theirs, mine = MODEL.recognise(item), model.recognise(item)
        assert (theirs is None) == (mine is None)
        if theirs is not None and mine is not None:
            assert _anonymous(theirs[0]) == _anonymous(mine[0])
            assert sorted(theirs[1].values()) == sorted(mine[1].values())


def test_init_reads_no_more_items_than_its_sample(
    endpoint: str, shop_table: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _init(endpoint, shop_table, tmp_path, "--sample", "3")
    assert capsys.readouterr().err.count("3/3") >= 1
    assert len([entity for entity in model.entities if not entity.internal]) <= 3


def test_init_refuses_a_sample_of_nothing(endpoint: str, shop_table: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--from-table", shop_table, "--endpoint-url", endpoint, "--sample", "0"]) == 2
    assert "--sample takes a number of items" in capsys.readouterr().err


def test_init_on_a_missing_table_says_so(endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--from-table", "no-such-table", "--endpoint-url", endpoint]) == 1
    assert "the table is not available" in capsys.readouterr().err


def test_init_says_in_its_help_that_it_scans(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "read with Scan (with recount and check, the only commands that scan" in " ".join(
        capsys.readouterr().out.split()
    )
