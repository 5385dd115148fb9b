"""A request's variables, coerced as graphql-core coerces them, without its general machinery where they need none.

graphql-core coerces every value through ``coerce_input_value``, item by item, whatever the type: a hundred ids
cost a hundred calls of it, and a few more of the scalar's parser, for values that come out as they went in. Most
variables clients send are like that: ids, strings, numbers and flags, alone or in a list, which JSON has already
typed. Those are taken as they are, after the same checks; any other value (a type to convert, a null where none
may be, a missing variable with its default, an enum, an input object, a custom scalar) is coerced by
graphql-core itself, errors and all. The result is the same either way, which
``tests/unit/execution/test_variables.py`` checks on generated types and values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from typing import Any

from graphql import (
    GraphQLBoolean,
    GraphQLError,
    GraphQLFloat,
    GraphQLID,
    GraphQLInputType,
    GraphQLInt,
    GraphQLList,
    GraphQLNonNull,
    GraphQLSchema,
    GraphQLString,
    VariableDefinitionNode,
)
from graphql.execution.get_variable_signature import get_variable_signature
from graphql.execution.values import VariableValues, VariableValueSource, get_variable_values
from graphql.pyutils import Undefined
from graphql.type import GraphQLScalarType

from gateway.design.model import INT_RANGE

_AS_IS: dict[GraphQLScalarType, Callable[[Any], bool]] = {
    GraphQLID: lambda value: type(value) is str,
    GraphQLString: lambda value: type(value) is str,
    GraphQLBoolean: lambda value: type(value) is bool,
    GraphQLInt: lambda value: type(value) is int and value in INT_RANGE,
    GraphQLFloat: lambda value: type(value) is float and math.isfinite(value),
}
"""graphql-core's own scalars, and the values each one's coercion returns unchanged (an ``int`` for an ``ID``
becomes a ``str``, an integral ``float`` for an ``Int`` an ``int``: those go to graphql-core)."""


def coerce_variables(
    schema: GraphQLSchema, definitions: Collection[VariableDefinitionNode], inputs: Mapping[str, Any]
) -> VariableValues | list[GraphQLError]:
    """``inputs`` coerced to ``definitions``, as graphql-core's ``get_variable_values`` coerces them: the values,
    or the errors."""
    plain = _as_they_are(schema, definitions, inputs)
    if plain is not None:
        return plain
    return get_variable_values(schema, definitions, dict(inputs))


def _as_they_are(
    schema: GraphQLSchema, definitions: Collection[VariableDefinitionNode], inputs: Mapping[str, Any]
) -> VariableValues | None:
    sources: dict[str, VariableValueSource] = {}
    coerced: dict[str, Any] = {}
    for definition in definitions:
        name = definition.variable.name.value
        if name not in inputs:
            return None  # its default, or its absence, is graphql-core's to decide
        signature = get_variable_signature(schema, definition)
        if isinstance(signature, GraphQLError):
            return None
        value = inputs[name]
        kept = _as_is(signature.type, value)
        if kept is Undefined:
            return None
        sources[name] = VariableValueSource(signature, value)
        coerced[name] = kept
    return VariableValues(sources, coerced)


def _as_is(type_: GraphQLInputType, value: Any) -> Any:
    """``value`` as coercing it to ``type_`` returns it, when that takes no conversion; Undefined otherwise."""
    if isinstance(type_, GraphQLNonNull):
        if value is None:
            return Undefined
        type_ = type_.of_type
    elif value is None:
        return None
    if isinstance(type_, GraphQLList):
        if type(value) is not list:
            return Undefined  # a single value stands for a list of one: graphql-core wraps it
        item_type = type_.of_type
        if isinstance(item_type, GraphQLNonNull) and isinstance(item_type.of_type, GraphQLScalarType):
            # A list of values none of which may be null, of a scalar (a list of ids, most often): each item is
            # checked by the scalar's test alone, in one pass.
            accepts = _AS_IS.get(item_type.of_type)
            if accepts is None:
                return Undefined
            return list(value) if all(map(accepts, value)) else Undefined
        items = [_as_is(item_type, item) for item in value]
        return Undefined if any(item is Undefined for item in items) else items
    accepts = _AS_IS.get(type_) if isinstance(type_, GraphQLScalarType) else None
    return value if accepts is not None and accepts(value) else Undefined
