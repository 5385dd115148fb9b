"""``tablegraph check``: each kind of mismatch between a declaration and a table written with plain boto3 is found,
with an example key and the exit code; ``serve`` refuses contradicting keys and reports a sample in the background."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.dynamo.store import table_definition
from gateway.server.cli import EXIT_FAILED, EXIT_NO_TABLE, EXIT_UNREACHABLE, main
from gateway.server.declaration_file import load_model
from schema.model import MODEL
from tests.support.contract import create_table
from tests.support.gateway import Gateway

Tables = Callable[..., str]

# Two entities whose table keys are the same shape, told apart by a discriminator.
SHOP = """\
table: shop
keys: {pk: PK, sk: SK}
entities:
  Customer:
    keys:
      table: {pk: "c#{customerId}", sk: "c#{customerId}"}
    discriminator: {attribute: EntityType, value: customer}
    attributes:
      email: {type: S}
  Supplier:
    keys:
      table: {pk: "c#{supplierId}", sk: "c#{supplierId}"}
    discriminator: {attribute: EntityType, value: supplier}
    attributes:
      email: {type: S}
"""


@pytest.fixture
def tables(dynamodb: Any) -> Iterator[Tables]:
    """``tables(*items, definition=...)``: a new table (the demo's keys by default) holding ``items``, each written
    with plain boto3 as DynamoDB's JSON."""
    made: list[str] = []

    def make(*items: dict[str, Any], definition: dict[str, Any] | None = None) -> str:
        name = f"check-{uuid.uuid4().hex[:8]}"
        if definition is None:
            create_table(dynamodb, name)
        else:
            dynamodb.create_table(TableName=name, **definition)
        made.append(name)
        for item in items:
            dynamodb.put_item(TableName=name, Item=item)
        return name

    yield make
    for name in made:
        dynamodb.delete_table(TableName=name)


def check(
    endpoint: str, table: str, capsys: pytest.CaptureFixture[str], *options: str, model: str = "schema.demo:DEMO"
) -> tuple[int, dict[str, Any]]:
    """Run ``tablegraph check --json``: its exit code and its report."""
    capsys.readouterr()
    code = main(["check", "--endpoint-url", endpoint, "--table", table, "--model", model, "--json", *options])
    return code, json.loads(capsys.readouterr().out)


def finding(report: dict[str, Any], kind: str) -> dict[str, Any]:
    (found,) = [one for one in report["findings"] if one["kind"] == kind]
    assert isinstance(found, dict)
    return found


def s(text: str) -> dict[str, str]:
    return {"S": text}


def n(number: int) -> dict[str, str]:
    return {"N": str(number)}


WORKSPACE = {"PK": s("WS#w1"), "SK": s("META"), "displayName": s("W")}


def test_the_contract_data_is_clean_with_the_demo_declaration(
    endpoint: str, contract_table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--endpoint-url", endpoint, "--table", contract_table, "--model", "schema.demo:DEMO"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"table {contract_table}: a sample of" in out and "no mismatch with the declaration" in out
    # Counters another tool never wrote are a warning: recount sets them.
    assert "warning counter-absent: Workspace.projectCount" in out

    code = main(["check", "--endpoint-url", endpoint, "--table", contract_table, "--full", "--json"])
    assert code == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert "checking  [##############################] 100%" in err, "a progress bar on stderr, as recount's"
    assert report["mode"] == "full" and report["complete"] and report["clean"]
    assert report["scanned"] > 600
    assert {one["severity"] for one in report["findings"]} == {"warning"}


def test_json_report_has_its_documented_shape(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    project = {"PK": s("WS#w1"), "SK": s("PROJ#p1"), "title": s("T"), "status": s("ACTIVE")}
    table = tables({**WORKSPACE, "projectCount": n(1)}, project)
    code, report = check(endpoint, table, capsys, "--sample", "1")
    assert code in (0, EXIT_FAILED)
    assert set(report) == {"table", "mode", "scanned", "complete", "clean", "counts", "findings"}
    assert (report["table"], report["mode"], report["scanned"], report["complete"]) == (table, "sample", 1, False)
    code, report = check(endpoint, table, capsys)
    assert code == EXIT_FAILED
    assert report["complete"] and not report["clean"]
    assert report["counts"] == {"enum": 1}
    (enum,) = report["findings"]
    assert set(enum) == {"kind", "severity", "subject", "problem", "fix", "count", "examples"}
    assert enum["examples"] == [{"key": {"PK": "WS#w1", "SK": "PROJ#p1"}, "detail": "holds 'ACTIVE'"}]


def test_the_stream_readers_lease_is_the_gateways_own_item(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    lease = {"PK": s("TABLEGRAPH#STREAM-LEASE"), "SK": s("LEASE"), "holder": s("h"), "until": n(0)}
    code, report = check(endpoint, tables({**WORKSPACE, "projectCount": n(0)}, lease), capsys)
    assert (code, report["scanned"], report["findings"]) == (0, 2, [])


def test_a_sort_key_typo_is_unrecognised_and_named_near_its_template(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    org = {"PK": s("ORG#o1"), "SK": s("METADATA#o1"), "name": s("O")}
    table = tables(org, {"PK": s("ORG#o1"), "SK": s("USRE#bob"), "name": s("Bob")})
    code, report = check(endpoint, table, capsys)
    assert code == EXIT_FAILED
    found = finding(report, "unrecognised")
    assert found["subject"] == "PK=ORG#… SK=USRE#…"
    assert found["examples"] == [{"key": {"PK": "ORG#o1", "SK": "USRE#bob"}}]
    assert found["fix"].startswith("the key is close to User's 'ORG#{orgName}' / 'USER#{username}'")


def test_a_discriminator_value_in_another_case(
    endpoint: str, tables: Tables, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declaration = tmp_path / "shop.yaml"
    declaration.write_text(SHOP)
    definition = dict(table_definition(load_model(str(declaration)).model))
    good = {"PK": s("c#1"), "SK": s("c#1"), "EntityType": s("customer")}
    table = tables(good, {"PK": s("c#2"), "SK": s("c#2"), "EntityType": s("Customer")}, definition=definition)
    code, report = check(endpoint, table, capsys, model=str(declaration))
    assert code == EXIT_FAILED
    found = finding(report, "discriminator")
    assert found["problem"] == "discriminator value 'Customer' where 'customer' is declared"
    assert found["fix"].startswith(
        "declare discriminator=('EntityType', 'Customer') (YAML: discriminator: {attribute: EntityType, value: "
        "Customer}): the items write it in that case"
    )
    assert found["examples"] == [{"key": {"PK": "c#2", "SK": "c#2"}}]


def test_an_item_two_entities_could_be(
    endpoint: str, tables: Tables, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declaration = tmp_path / "shop.yaml"
    declaration.write_text(SHOP)
    definition = dict(table_definition(load_model(str(declaration)).model))
    table = tables({"PK": s("c#3"), "SK": s("c#3"), "email": s("x@example.com")}, definition=definition)
    code, report = check(endpoint, table, capsys, model=str(declaration))
    assert code == EXIT_FAILED
    found = finding(report, "ambiguous")
    assert found["subject"] == "Customer and Supplier"
    assert "'EntityType'" in found["fix"]
    assert found["examples"] == [{"key": {"PK": "c#3", "SK": "c#3"}}]


def test_text_where_a_number_is_declared_and_a_date_that_is_none(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    student = {"PK": s("STU#s1"), "SK": s("PROFILE"), "name": s("S"), "year": s("third")}
    other = {"PK": s("STU#s2"), "SK": s("PROFILE"), "name": s("T"), "year": s("3")}
    enrolment = {
        "PK": s("STU#s1"),
        "SK": s("ENROLL#CRS#c1"),
        "GSI1PK": s("CRS#c1"),
        "GSI1SK": s("STU#s1"),
        "enrolledOn": s("2024/01/02"),
    }
    course = {"PK": s("CRS#c1"), "SK": s("METADATA"), "title": s("C"), "credits": n(5)}
    code, report = check(endpoint, tables(student, other, enrolment, course), capsys)
    assert code == EXIT_FAILED
    found = {one["problem"]: one for one in report["findings"] if one["subject"] == "Student.year"}
    numeral = found.pop("holds a number as text (S) where INT is declared")
    assert numeral["fix"].startswith("declare Attribute('INT', text=True) (YAML: {type: INT, text: true})")
    assert numeral["examples"] == [{"key": {"PK": "STU#s2", "SK": "PROFILE"}, "detail": "holds '3'"}]
    found = {one["subject"]: one for one in report["findings"] if one["kind"] == "attribute-type"}
    assert set(found) == {"Student.year", "Enrollment.enrolledOn"}
    assert found["Student.year"]["problem"] == "holds text (S) where INT is declared"
    assert found["Student.year"]["fix"] == "declare it S if the items hold text there, or rewrite them"
    assert found["Student.year"]["examples"] == [{"key": {"PK": "STU#s1", "SK": "PROFILE"}, "detail": "holds 'third'"}]
    assert found["Enrollment.enrolledOn"]["problem"] == "holds text that is no YYYY-MM-DD date"


def test_an_enum_value_outside_the_declared_set(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tables(WORKSPACE, {"PK": s("WS#w1"), "SK": s("PROJ#p1"), "title": s("T"), "status": s("ACTIVE")})
    code, report = check(endpoint, table, capsys)
    assert code == EXIT_FAILED
    found = finding(report, "enum")
    assert found["subject"] == "Project.status"
    assert found["problem"] == "holds 'ACTIVE', outside its enum (active, paused, archived)"
    assert "'active' as 'ACTIVE'" in found["fix"]
    assert found["examples"][0]["key"] == {"PK": "WS#w1", "SK": "PROJ#p1"}


def demo_definition(**gsi: Any) -> dict[str, Any]:
    """The demo's table definition, with GSI1 changed by ``gsi`` (None: without it)."""
    definition: dict[str, Any] = json.loads(json.dumps(table_definition(MODEL)))
    if not gsi:
        del definition["GlobalSecondaryIndexes"]
        definition["AttributeDefinitions"] = [s_ for s_ in definition["AttributeDefinitions"] if "GSI" not in str(s_)]
        return definition
    definition["GlobalSecondaryIndexes"][0].update(gsi)
    return definition


def test_a_missing_index(endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = check(endpoint, tables(WORKSPACE, definition=demo_definition()), capsys)
    assert code == EXIT_FAILED
    found = finding(report, "index-missing")
    assert (found["subject"], found["count"]) == ("index GSI1", 1)
    assert "the table has: none" in found["fix"]


def test_an_index_with_other_key_names(endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]) -> None:
    keys = [{"AttributeName": "gsi1pk", "KeyType": "HASH"}, {"AttributeName": "gsi1sk", "KeyType": "RANGE"}]
    definition = demo_definition(KeySchema=keys)
    definition["AttributeDefinitions"] = [
        {"AttributeName": name, "AttributeType": "S"} for name in ("PK", "SK", "gsi1pk", "gsi1sk")
    ]
    code, report = check(endpoint, tables(WORKSPACE, definition=definition), capsys)
    assert code == EXIT_FAILED
    problems = {one["problem"] for one in report["findings"] if one["kind"] == "index-keys"}
    assert problems == {
        "has the partition key 'gsi1pk' where 'GSI1PK' is declared",
        "has the sort key 'gsi1sk' where 'GSI1SK' is declared",
    }


def test_a_keys_only_projection_where_all_is_declared(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    definition = demo_definition(Projection={"ProjectionType": "KEYS_ONLY"})
    code, report = check(endpoint, tables(WORKSPACE, definition=definition), capsys)
    assert code == EXIT_FAILED
    found = finding(report, "projection")
    assert found["subject"] == "index GSI1"
    assert found["problem"].startswith("projects KEYS_ONLY where ALL is declared")


def user(name: str, *, in_gsi1: str | None = None, copy: str | None = None) -> dict[str, Any]:
    """A user of org o1 named ``name`` in its table key, ``in_gsi1`` in its GSI1 sort key and ``copy`` in its stored
    copy of the username (``name`` when not given)."""
    return {
        "PK": s("ORG#o1"),
        "SK": s(f"USER#{name}"),
        "GSI1PK": s(f"ORG#o1#USER#{name}"),
        "GSI1SK": s(f"USER#{in_gsi1 or name}"),
        "username": s(copy or name),
    }


def test_index_keys_that_are_not_the_entitys_shape_there(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = check(endpoint, tables(user("bob", in_gsi1="carol")), capsys)
    assert code == EXIT_FAILED
    found = finding(report, "index-key")
    assert found["subject"] == "User in GSI1"
    assert found["examples"] == [{"key": {"PK": "ORG#o1", "SK": "USER#bob"}}]


def test_a_stored_copy_that_disagrees_with_its_id(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = check(endpoint, tables(user("alice", copy="bob")), capsys)
    assert code == EXIT_FAILED
    found = finding(report, "copy")
    assert found["subject"] == "User.username"
    assert found["examples"] == [
        {"key": {"PK": "ORG#o1", "SK": "USER#alice"}, "detail": "holds 'bob', the key says 'alice'"}
    ]


def test_a_counter_off_by_one(endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]) -> None:
    projects = [{"PK": s("WS#w1"), "SK": s(f"PROJ#p{i}"), "title": s("T")} for i in range(3)]
    table = tables({**WORKSPACE, "projectCount": n(2)}, *projects)
    code, report = check(endpoint, table, capsys, "--full")
    assert code == EXIT_FAILED
    found = finding(report, "counter")
    assert found["subject"] == "Workspace.projectCount"
    assert found["examples"] == [{"key": {"PK": "WS#w1", "SK": "META"}, "detail": "holds 2, 3 counted"}]
    # A sample that is not the whole table cannot count members, and says so.
    code, report = check(endpoint, table, capsys, "--sample", "2")
    assert (code, report["complete"], report["counts"]) == (0, False, {})


def test_text_output_groups_findings_with_their_fix_and_examples(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = [{"PK": s("WS#w1"), "SK": s(f"PROJ#p{i}"), "title": s("T"), "status": s("Done")} for i in range(7)]
    table = tables(WORKSPACE, *projects)
    assert main(["check", "--endpoint-url", endpoint, "--table", table, "--examples", "2", "--sample", "5"]) == 1
    out = capsys.readouterr().out
    assert f"table {table}: a sample of 5 items read, of about" in out and "`check --full` reads every item" in out
    assert "error enum: Project.status: holds 'Done', outside its enum (active, paused, archived) (" in out
    assert "  fix: add 'Done' to the enum, or rewrite the items" in out
    assert out.count("  e.g. PK='WS#w1' SK='PROJ#p") == 2


def test_a_missing_table_and_an_unreachable_endpoint_have_their_own_exit_codes(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for full in ([], ["--full"]):
        missing = ["check", "--endpoint-url", endpoint, "--table", f"nosuch-{uuid.uuid4().hex[:6]}", *full]
        assert main(missing) == EXIT_NO_TABLE
        assert "does not exist" in capsys.readouterr().err
    assert main(["check", "--endpoint-url", "http://127.0.0.1:9", "--full"]) == EXIT_UNREACHABLE


# --- serve ------------------------------------------------------------------------------------------------------


def test_serve_refuses_a_table_whose_keys_contradict_the_declaration(
    endpoint: str, tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tables(definition=demo_definition())
    code = main(["serve", "--endpoint-url", endpoint, "--table", table, "--port", "0", "--auth-open"])
    err = capsys.readouterr().err
    assert code == EXIT_FAILED, err
    (line,) = [line for line in err.splitlines() if line.startswith("tablegraph: ")]
    assert f"table {table!r} contradicts the declaration's keys" in line
    assert "index GSI1 is declared but the table has no such index" in line
    assert "Traceback" not in err


def checked(gateway: Gateway) -> httpx.Response:
    """``/readyz``'s answer once the check at start-up has ended."""
    deadline = time.monotonic() + 30
    while (ready := gateway.http.get("/readyz")).json()["check"]["state"] == "running":
        assert time.monotonic() < deadline, "the check at start-up did not end"
        time.sleep(0.05)
    return ready


def test_serve_reports_its_background_sample_in_readiness_metrics_and_the_log(
    tables: Tables, gateway_factory: Callable[..., Gateway], caplog: pytest.LogCaptureFixture
) -> None:
    project = {"PK": s("WS#w1"), "SK": s("PROJ#p1"), "title": s("T"), "status": s("ACTIVE")}
    table = tables({**WORKSPACE, "projectCount": n(1)}, project)
    with caplog.at_level("WARNING", logger="tablegraph.check"), gateway_factory(table, check_sample=500) as gateway:
        ready = checked(gateway)
        metrics = gateway.http.get("/metrics").text
    assert ready.status_code == 200, "findings never make the gateway unready"
    assert ready.json()["check"] == {"state": "done", "sampled": 2, "clean": False, "findings": {"enum": 1}}
    assert 'tablegraph_check_findings{kind="enum"} 1.0' in metrics
    (line,) = [record.getMessage() for record in caplog.records if record.name == "tablegraph.check"]
    assert "enum Project.status: holds 'ACTIVE'" in line and "'PK': 'WS#w1', 'SK': 'PROJ#p1'" in line

    with gateway_factory(table, check_sample=0) as quiet:
        assert quiet.http.get("/readyz").json()["check"] == {"state": "off"}


def test_the_background_check_of_a_missing_table_says_it_failed(gateway_factory: Callable[..., Gateway]) -> None:
    with gateway_factory(f"nosuch-{uuid.uuid4().hex[:6]}", check_sample=10) as gateway:
        check = checked(gateway).json()["check"]
    assert check["state"] == "failed" and check["error"]
