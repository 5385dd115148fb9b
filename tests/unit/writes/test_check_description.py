"""``check``'s comparison of a DescribeTable answer with a declaration: pure, one finding per kind of mismatch."""

from __future__ import annotations

import copy
from typing import Any

from gateway.writes.check import Report, check_description
from schema.model import MODEL


def described() -> dict[str, Any]:
    """The demo's table as DynamoDB describes it once created as declared."""
    return {
        "TableName": "t",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": "S"} for name in ("GSI1PK", "GSI1SK", "PK", "SK")
        ],
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "GSI1",
                "KeySchema": [
                    {"AttributeName": "GSI1PK", "KeyType": "HASH"},
                    {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }


def found(description: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    report = Report("t", full=False)
    check_description(description, MODEL, report)
    return [(one.kind, one.severity, one.subject, one.problem) for one in report.findings]


def test_a_table_as_declared_has_no_finding() -> None:
    assert found(described()) == []


def test_a_missing_index_is_named_with_the_indexes_the_table_has() -> None:
    description = described()
    description["GlobalSecondaryIndexes"][0]["IndexName"] = "ByUser"
    [(kind, severity, subject, _)] = found(description)
    assert (kind, severity, subject) == ("index-missing", "error", "index GSI1")
    report = Report("t", full=False)
    check_description(description, MODEL, report)
    assert "ByUser" in report.findings[0].fix


def test_other_key_names_of_the_table_and_of_an_index() -> None:
    description = described()
    description["KeySchema"][1]["AttributeName"] = "sk"
    description["GlobalSecondaryIndexes"][0]["KeySchema"][0]["AttributeName"] = "gsi1pk"
    assert found(description) == [
        ("index-keys", "error", "index GSI1", "has the partition key 'gsi1pk' where 'GSI1PK' is declared"),
        ("table-keys", "error", "the table", "has the sort key 'sk' where 'SK' is declared"),
    ]


def test_a_hash_only_table_where_a_sort_key_is_declared() -> None:
    description = described()
    del description["KeySchema"][1]
    assert found(description) == [("table-keys", "error", "the table", "has no sort key where 'SK' is declared")]


def test_a_number_typed_key_where_text_is_declared() -> None:
    description = described()
    description["AttributeDefinitions"][1]["AttributeType"] = "N"
    assert found(description) == [
        ("key-type", "error", "index GSI1", "its sort key 'GSI1SK' is of type N where S is declared")
    ]


def test_a_narrower_projection_than_declared() -> None:
    for projection in ({"ProjectionType": "KEYS_ONLY"}, {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a"]}):
        description = described()
        description["GlobalSecondaryIndexes"][0]["Projection"] = projection
        [(kind, severity, subject, problem)] = found(description)
        assert (kind, severity, subject) == ("projection", "error", "index GSI1")
        assert problem.startswith(f"projects {projection['ProjectionType']} where ALL is declared")


def test_a_local_index_where_a_global_one_is_declared() -> None:
    description = described()
    lsi = copy.deepcopy(description.pop("GlobalSecondaryIndexes")[0])
    lsi["KeySchema"][0]["AttributeName"] = "PK"
    description["LocalSecondaryIndexes"] = [lsi]
    [(kind, severity, subject, _)] = found(description)
    assert (kind, severity, subject) == ("index-kind", "error", "index GSI1")


def test_streams_off_is_a_warning_not_a_mismatch() -> None:
    for stream in (None, {"StreamEnabled": False}, {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}):
        description = described()
        description["StreamSpecification"] = stream
        report = Report("t", full=False)
        check_description(description, MODEL, report)
        [warning] = report.findings
        assert (warning.kind, warning.severity) == ("streams", "warning")
        assert not report.errors
