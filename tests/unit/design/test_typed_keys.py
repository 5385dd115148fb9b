"""Number and binary key attributes: declared per index, refused at build where a template cannot hold them, and
turned between their stored values and the text of ids."""

from __future__ import annotations

import json
from decimal import Decimal

import jsonschema
import pytest
import yaml
from boto3.dynamodb.types import Binary

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Model
from gateway.design.model import key_text, key_value
from gateway.dynamo.store import QueryRequest, table_definition
from gateway.errors import BadUserInput
from gateway.server.declaration_file import SCHEMA_PATH, DeclarationFileError, parse

TIME_SERIES = Index(None, "PK", "SK", sk_type="N")


def _reading(sk: str) -> Entity:
    return Entity("Reading", {None: KeyShape.of("DEVICE#{deviceId}", sk)}, {"celsius": "N"})


def _refusal(*entities: Entity, indexes: tuple[Index, ...] = (TIME_SERIES,)) -> str:
    with pytest.raises(ValueError) as raised:
        Model("t", indexes, entities)
    return str(raised.value)


def test_a_number_key_template_with_text_is_refused_naming_the_fix_in_both_syntaxes() -> None:
    message = _refusal(_reading("TS#{ts}"))
    assert message.startswith("Reading: SK is a number key (N), which holds one value and no text")
    assert "write sk='{ts}' (YAML: sk: '{ts}')" in message
    assert "sk_type='S'; YAML: sk_type: S" in message


@pytest.mark.parametrize("sk", ["{ts:013}", "{day:date}", "{a}#{b}", "{ts}Z", "zero"])
def test_a_number_key_holds_one_plain_field_or_one_number(sk: str) -> None:
    assert "one field alone (or one constant whole number)" in _refusal(_reading(sk))


def test_a_number_key_may_be_a_constant_number() -> None:
    head = Entity("Head", {None: KeyShape.of("HEAD#{deviceId}", "0")}, {"label": "S"})
    Model("t", (TIME_SERIES,), (head, _reading("{ts}")))


def test_a_binary_key_template_with_text_is_refused() -> None:
    message = _refusal(_reading("B#{digest}"), indexes=(Index(None, "PK", "SK", sk_type="B"),))
    assert message.startswith("Reading: SK is a binary key (B)")


def test_an_attribute_in_a_number_key_is_an_int() -> None:
    player = Entity(
        "Player",
        {None: KeyShape.of("P#{playerId}", "P"), "GSI1": KeyShape.of("BOARD", "{score}")},
        {"score": Attribute("S", required=True)},
    )
    message = _refusal(player, indexes=(Index(None, "PK", "SK"), Index("GSI1", "GSI1PK", "GSI1SK", sk_type="N")))
    assert "it holds the attribute score, so score is a number: declare it INT" in message


def test_one_attribute_has_one_type_in_every_index() -> None:
    indexes = (Index(None, "PK", "SK", sk_type="N"), Index("GSI1", "SK", "PK"))
    assert "SK is a key of index None as N and of index 'GSI1' as S" in _refusal(_reading("{ts}"), indexes=indexes)


def test_an_unknown_key_type_is_refused() -> None:
    bad = Index(None, "PK", "SK", sk_type="X")  # type: ignore[arg-type]
    assert "not one of S, N, B" in _refusal(_reading("{ts}"), indexes=(bad,))


def test_a_number_partition_key_on_the_table_is_refused_for_the_gateways_own_records() -> None:
    reading = Entity("Reading", {None: KeyShape.of("{deviceId}", "{ts}")}, {"celsius": "N"})
    with pytest.raises(ValueError, match="serves tables whose partition key is S"):
        Declaration(Model("t", (Index(None, "PK", "SK", pk_type="N", sk_type="N"),), (reading,)))


def test_a_number_key_reads_a_number_and_the_text_round_trips() -> None:
    assert key_value("N", "1700000000123") == Decimal(1700000000123)
    assert key_text("N", Decimal("1.700000000123E+12")) == "1700000000123"
    assert key_text("N", Decimal("1.5")) is None
    assert key_text("N", "1700") is None
    with pytest.raises(BadUserInput):
        key_value("N", "1.5", "ts")
    with pytest.raises(BadUserInput):
        key_value("N", "NaN", "ts")


def test_a_binary_key_is_base64_text() -> None:
    assert key_value("B", "AAH/") == b"\x00\x01\xff"
    assert key_text("B", Binary(b"\x00\x01\xff")) == "AAH/"
    assert key_text("B", b"\x00\x01\xff") == "AAH/"
    with pytest.raises(BadUserInput):
        key_value("B", "not base64!", "digest")


def test_recognition_reads_number_keys_as_their_ids() -> None:
    model = Model("t", (TIME_SERIES,), (_reading("{ts}"),))
    found = model.recognise({"PK": "DEVICE#d1", "SK": Decimal(1700000000123), "celsius": Decimal(20)})
    assert found is not None and found[1] == {"deviceId": "d1", "ts": "1700000000123"}
    assert model.recognise({"PK": "DEVICE#d1", "SK": Decimal("1.5")}) is None
    assert model.table_key_of({"PK": "DEVICE#d1", "SK": Decimal(7)}) == ("DEVICE#d1", "7")


def test_ids_of_a_number_key_are_canonical_and_checked() -> None:
    reading = _reading("{ts}")
    model = Model("t", (TIME_SERIES,), (reading,))
    assert model.canonical(reading, {"deviceId": "d1", "ts": "007"}) == {"deviceId": "d1", "ts": "7"}
    with pytest.raises(BadUserInput):
        model.canonical(reading, {"deviceId": "d1", "ts": "soon"})
    assert model.id_type(reading, "ts") == "N" and model.id_type(reading, "deviceId") == "S"


def test_keys_go_on_the_wire_as_their_types() -> None:
    request = QueryRequest(("PK", "DEVICE#d1"), ("SK", "between", "9"), sort_end="10", start_key={"PK": "x", "SK": "9"})
    params = request.params("t", {"SK": "N"})
    assert params["ExpressionAttributeValues"] == {":pk": {"S": "DEVICE#d1"}, ":sk": {"N": "9"}, ":sk_end": {"N": "10"}}
    assert params["ExclusiveStartKey"] == {"PK": {"S": "x"}, "SK": {"N": "9"}}
    assert request.params("t")["ExpressionAttributeValues"][":sk"] == {"S": "9"}


def test_the_table_is_created_with_the_declared_types() -> None:
    model = Model(
        "t",
        (TIME_SERIES, Index("GSI1", "GSI1PK", "GSI1SK", sk_type="B")),
        (
            Entity(
                "Reading",
                {None: KeyShape.of("DEVICE#{deviceId}", "{ts}"), "GSI1": KeyShape.of("D#{deviceId}", "{digest}")},
            ),
        ),
    )
    assert table_definition(model)["AttributeDefinitions"] == [
        {"AttributeName": "GSI1PK", "AttributeType": "S"},
        {"AttributeName": "GSI1SK", "AttributeType": "B"},
        {"AttributeName": "PK", "AttributeType": "S"},
        {"AttributeName": "SK", "AttributeType": "N"},
    ]


SERIES_FILE = """\
table: series
keys: {pk: PK, sk: SK, sk_type: N}
entities:
  Reading:
    keys:
      table: {pk: "DEVICE#{deviceId}", sk: "{ts}"}
    attributes:
      celsius: N
"""


def test_a_file_declares_key_types() -> None:
    model = parse(SERIES_FILE, "series.yaml").model
    assert model.index(None).sk_type == "N"
    jsonschema.validate(yaml.safe_load(SERIES_FILE), json.loads(SCHEMA_PATH.read_text()))


def test_a_file_names_a_wrong_key_type_and_a_template_it_cannot_hold_with_their_lines() -> None:
    with pytest.raises(DeclarationFileError) as raised:
        parse(SERIES_FILE.replace("sk_type: N", "sk_type: NUMBER"), "series.yaml")
    assert str(raised.value) == (
        "series.yaml:2: keys.sk_type: a key attribute's type is S (text), N (a number) or B (binary), not 'NUMBER'"
    )
    with pytest.raises(DeclarationFileError) as raised:
        parse(SERIES_FILE.replace('sk: "{ts}"', 'sk: "TS#{ts}"'), "series.yaml")
    assert "series.yaml:" in str(raised.value) and "write sk='{ts}' (YAML: sk: '{ts}')" in str(raised.value)


def test_a_range_on_a_binary_sort_key_is_refused() -> None:
    file = Entity("File", {None: KeyShape.of("FILE#{fileId}", "FILE")}, partition=True)
    chunk = Entity("Chunk", {None: KeyShape.of("FILE#{fileId}", "{digest}")}, {"size": "INT"})
    with pytest.raises(ValueError, match="range='digest' on a binary sort key"):
        Model(
            "t",
            (Index(None, "PK", "SK", sk_type="B"),),
            (file, chunk),
            (Collection("File.chunks", file, chunk, range="digest"),),
        )
