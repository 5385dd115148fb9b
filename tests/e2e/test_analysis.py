"""A document is analysed once: its estimate, and the selections the look-ahead walk reads, are kept with it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from graphql import parse
from graphql.execution.values import get_argument_values

from gateway.execution import selection
from gateway.execution.cost import SHARED_SELECTIONS, SHARED_VARIABLES_BYTES, Estimate, Planner, Prepared
from tests.support.contract import student_id
from tests.support.gateway import Gateway


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Spies around the real functions: the planner's walks, and the selections' argument coercion (graphql-core's
    ``get_argument_values``, once per field the walk reads from the document)."""
    counts = {"estimates": 0, "arguments": 0}
    estimate = Planner.estimate

    def counted_estimate(self: Planner, *args: Any) -> Estimate | None:
        counts["estimates"] += 1
        return estimate(self, *args)

    def counted_arguments(*args: Any) -> dict[str, Any]:
        counts["arguments"] += 1
        return get_argument_values(*args)

    monkeypatch.setattr(Planner, "estimate", counted_estimate)
    monkeypatch.setattr(selection, "get_argument_values", counted_arguments)
    return counts


def _each(gateway: Gateway, analysed: dict[str, int], query: str, variables: list[dict[str, Any]]) -> list[Any]:
    """Send ``query`` with each of ``variables``; what each request analysed, and its data."""
    seen = []
    for one in variables:
        before = dict(analysed)
        body = gateway.query(query, one)
        assert "errors" not in body, body
        seen.append(({name: analysed[name] - before[name] for name in analysed}, body["data"]))
    return seen


def _unique(query: Callable[[str], str]) -> str:
    """A document text no other test sends: the gateway's kept documents start without it."""
    return query(f"a{uuid.uuid4().hex[:8]}")


def test_a_document_without_variables_is_analysed_by_its_first_request_only(
    gateway: Gateway, analysed: dict[str, int]
) -> None:
    query = _unique(
        lambda alias: (
            f'{{ {alias}: student(studentId: "{student_id(1)}") {{ name '
            "courses(first: 3) { nodes { title students(first: 2) { nodes { name } } } } } }"
        )
    )
    (first, first_data), *again = _each(gateway, analysed, query, [{}, {}, {}])
    assert first["estimates"] == 1 and first["arguments"] > 0
    assert [counts for counts, _ in again] == [{"estimates": 0, "arguments": 0}] * 2
    assert [data for _, data in again] == [first_data] * 2


def test_an_operation_with_variables_is_estimated_once_and_its_selection_read_once_a_request(
    gateway: Gateway, analysed: dict[str, int]
) -> None:
    query = _unique(
        lambda alias: (
            f"query($s: ID!, $n: Int) {{ {alias}: student(studentId: $s) {{ name "
            "courses(first: $n) { nodes { title students(first: 2) { nodes { name } } } } } }"
        )
    )
    variables = [{"s": student_id(1), "n": size} for size in (2, 20, 5)]
    (first, _), *later = _each(gateway, analysed, query, variables)
    assert first["estimates"] == 1
    assert [counts["estimates"] for counts, _ in later] == [0, 0]
    # The fields under the courses are read from the document once per request, not once per course.
    assert len({counts["arguments"] for counts, _ in later}) == 1
    many, few = (len(data[next(iter(data))]["courses"]["nodes"]) for _, data in later)
    assert many > few == 5


def test_the_selection_read_with_some_variables_is_kept_for_the_next_request_with_the_same(
    gateway: Gateway, analysed: dict[str, int]
) -> None:
    """Clients send one operation with variables over and over: the fields the walk reads are kept with the document
    for each set of variable values, so a request that repeats a set reads none, and one with other values (another
    page size, another ``@include``) reads its own and answers by them."""
    query = _unique(
        lambda alias: (
            f"query($s: ID!, $n: Int, $titles: Boolean!) {{ {alias}: student(studentId: $s) {{ name "
            "courses(first: $n) { nodes { courseId title @include(if: $titles) } } } }"
        )
    )
    two = {"s": student_id(1), "n": 2, "titles": True}
    three = {"s": student_id(1), "n": 3, "titles": False}
    seen = _each(gateway, analysed, query, [two, two, three, three, two])
    reads = [counts["arguments"] for counts, _ in seen]
    assert reads[0] > 0 and reads[2] > 0
    assert reads[1] == reads[3] == reads[4] == 0
    pages = [data[next(iter(data))]["courses"]["nodes"] for _, data in seen]
    assert [len(page) for page in pages] == [2, 2, 3, 3, 2]
    assert all("title" in one for one in pages[4]) and not any("title" in one for one in pages[3])
    assert pages[0] == pages[1] == pages[4]


def test_a_document_keeps_the_selections_of_its_last_sets_of_variables_only() -> None:
    prepared = Prepared(parse("query($n: Int) { workspaces(first: $n) { nodes { name } } }"), set(), {})
    first = prepared.selections_of(None, {"n": 0})
    assert prepared.selections_of(None, {"n": 0}) is first
    for n in range(1, SHARED_SELECTIONS):
        prepared.selections_of(None, {"n": n})
    assert prepared.selections_of(None, {"n": 0}) is first  # used again: the most recent now
    prepared.selections_of(None, {"n": SHARED_SELECTIONS})  # the least recently used, n=1, goes
    assert len(prepared.selections) == SHARED_SELECTIONS
    assert (None, b'{"n":1}') not in prepared.selections
    assert prepared.selections_of(None, {"n": 0}) is first
    large = {"n": 1, "cursor": "x" * SHARED_VARIABLES_BYTES}  # a request's own: the document does not keep it
    assert prepared.selections_of(None, large) is not prepared.selections_of(None, large)
    assert all(len(given) <= SHARED_VARIABLES_BYTES for _, given in prepared.selections)
