"""Variables taken as they are coerce exactly as graphql-core coerces them: values, sources and errors."""

from __future__ import annotations

import math
from typing import Any

import graphql.execution.values as graphql_values
import pytest
from graphql import GraphQLError, OperationDefinitionNode, build_schema, parse
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.execution.variables import coerce_variables

SCHEMA = build_schema(
    """
    enum Color { RED GREEN }
    input Filter { name: String!, limit: Int = 3 }
    scalar Date
    type Query { echo(
        id: ID, s: String, n: Int, f: Float, b: Boolean, c: Color, d: Date, filter: Filter,
        ids: [ID!], nested: [[Int]]
    ): String }
    """
)

NAMED = ["ID", "String", "Int", "Float", "Boolean", "Color", "Date", "Filter"]


@st.composite
def variable_types(draw: Any) -> str:
    """A variable's type: a named input type, perhaps in a list, perhaps non-null at either level."""
    text = draw(st.sampled_from(NAMED) | st.sampled_from(NAMED[:5]))  # the scalars taken as they are, more often
    if draw(st.booleans()):
        text = f"[{text}{'!' if draw(st.booleans()) else ''}]"
        if draw(st.integers(0, 5)) == 0:
            text = f"[{text}]"
    return text + ("!" if draw(st.booleans()) else "")


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**33), 2**33),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 3.0, -0.0, 2**31 - 1, 2**31, -(2**31), "RED", "", "7", "x", "2026-11-25"]),
    st.text(max_size=4),
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["name", "limit"]), inner)
)


def _plain(result: Any) -> Any:
    """A coercion's outcome in comparable form: its values and sources, or its errors' messages."""
    if isinstance(result, list):
        return [error.message for error in result]
    sources = {
        name: (source.signature.name, str(source.signature.type), source.value)
        for name, source in result.sources.items()
    }
    return result.coerced, sources


def _same(left: Any, right: Any) -> bool:
    """Equal, with NaN equal to itself (``==`` says NaN is not NaN)."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[key], right[key]) for key in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


_FITTING = {
    "ID": st.one_of(st.text(max_size=4), st.integers(-3, 3), st.floats(-3, 3)),
    "String": st.one_of(st.text(max_size=4), st.integers(-3, 3), st.booleans()),
    "Int": st.one_of(
        st.integers(-(2**31) - 1, 2**31), st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 3.0])
    ),
    "Float": st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([math.nan, math.inf, -math.inf, 0.5]),
        st.integers(-3, 3),
    ),
    "Boolean": st.one_of(st.booleans(), st.sampled_from([0, 1])),
    "Color": st.sampled_from(["RED", "GREEN", "BLUE"]),
    "Date": st.sampled_from(["2026-11-25", "x"]),
    "Filter": st.fixed_dictionaries({"name": st.text(max_size=3)}, optional={"limit": st.integers(-3, 3)}),
}


def value_for(text: str) -> st.SearchStrategy[Any]:
    """Mostly a value of the variable's type (or one a coercion converts), at times null, a stray value or a
    single item for a list."""
    inner = text.removesuffix("!")
    if inner.startswith("["):
        item = value_for(inner[1:-1])
        fitting = st.lists(item, max_size=4) | item
    else:
        fitting = _FITTING[inner]
    return st.one_of(fitting, fitting, fitting, st.none(), VALUES)


@settings(max_examples=600, deadline=None)
@given(st.data(), st.lists(variable_types(), min_size=1, max_size=3))
def test_variables_coerce_as_graphql_core_coerces_them(data: st.DataObject, types: list[str]) -> None:
    declared, inputs = [], {}
    for n, text in enumerate(types):
        nullable_default = not text.endswith("!") and data.draw(st.integers(0, 5)) == 0
        declared.append(f"$v{n}: {text}{' = null' if nullable_default else ''}")
        if data.draw(st.integers(0, 9)) > 0:  # at times the variable is absent
            inputs[f"v{n}"] = data.draw(value_for(text))
    document = parse(f"query Q({', '.join(declared)}) {{ echo }}", no_location=True)
    operation = document.definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    definitions = operation.variable_definitions
    ours = coerce_variables(SCHEMA, definitions, inputs)
    theirs = graphql_values.get_variable_values(SCHEMA, definitions, dict(inputs))
    assert _same(_plain(ours), _plain(theirs)), (types, inputs)


def test_plain_values_are_taken_as_they_are_and_the_rest_is_left_to_graphql_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A spy around graphql-core's coercion: a hundred ids, a string, a number and a flag do not reach it; an int
    for an ID (converted to a string), a missing variable (its default) and an enum do."""
    calls = {"count": 0}
    real = graphql_values.get_variable_values

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls["count"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr("gateway.execution.variables.get_variable_values", spy)
    operation = parse("query Q($ids: [ID!]!, $s: String, $n: Int!, $b: Boolean) { echo }").definitions[0]
    assert isinstance(operation, OperationDefinitionNode)
    definitions = operation.variable_definitions
    ids = [f"id-{n}" for n in range(100)]
    plain = coerce_variables(SCHEMA, definitions, {"ids": ids, "s": "x", "n": 7, "b": True})
    assert not isinstance(plain, list) and plain.coerced == {"ids": ids, "s": "x", "n": 7, "b": True}
    assert calls["count"] == 0
    converted = coerce_variables(SCHEMA, definitions, {"ids": [1, "2"], "s": None, "n": 7, "b": False})
    assert not isinstance(converted, list) and converted.coerced["ids"] == ["1", "2"]
    assert calls["count"] == 1
    missing = coerce_variables(SCHEMA, definitions, {"ids": ids, "n": 7})
    assert not isinstance(missing, list) and "s" not in missing.coerced
    refused = coerce_variables(SCHEMA, definitions, {"ids": ids, "n": 2**31})
    assert isinstance(refused, list) and all(isinstance(one, GraphQLError) for one in refused)
    assert calls["count"] == 3
