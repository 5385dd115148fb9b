"""The selection set as executed: merged fields with coerced arguments, fragments followed, skipped fields left out.

strawberry's ``selected_fields`` hands arguments over as raw strings and ignores ``@skip``/``@include``; this
walks graphql-core's AST instead. The walk that reads ahead and the cost estimate both read selections here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLIncludeDirective,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLResolveInfo,
    GraphQLSchema,
    GraphQLSkipDirective,
    InlineFragmentNode,
    SelectionNode,
    SelectionSetNode,
    VariableNode,
    get_named_type,
    is_abstract_type,
)
from graphql.execution.values import VariableValues, get_argument_values, get_directive_values


@dataclass(frozen=True, slots=True)
class Scope:
    """What reading a selection needs besides its nodes: the schema, the document's fragments, the variables, and
    where the fields read are kept (none: read anew each time)."""

    schema: GraphQLSchema
    fragments: Mapping[str, FragmentDefinitionNode]
    variables: VariableValues
    selections: Selections | None = None

    @classmethod
    def of(cls, info: GraphQLResolveInfo[Any], selections: Selections | None = None) -> Scope:
        # strawberry hands resolvers the plain dict of coerced values; graphql-core's helpers want its container.
        values: Any = info.variable_values
        variables = values if isinstance(values, VariableValues) else VariableValues({}, dict(values))
        return cls(info.schema, info.fragments, variables, selections)


@dataclass(frozen=True, slots=True)
class Field:
    """One selected field, its nodes merged by response key as execution merges them."""

    key: str
    nodes: tuple[FieldNode, ...]
    definition: GraphQLField
    args: dict[str, Any]
    """Coerced; empty when they do not coerce (the field itself reports that when it runs)."""
    given: frozenset[str] = frozenset()
    """The arguments the operation sets, as opposed to those ``args`` holds by their default."""

    @property
    def name(self) -> str:
        return self.nodes[0].name.value

    @property
    def named(self) -> GraphQLNamedType:
        return get_named_type(self.definition.type)

    @property
    def is_list(self) -> bool:
        type_ = self.definition.type
        if isinstance(type_, GraphQLNonNull):
            type_ = type_.of_type
        return isinstance(type_, GraphQLList)

    @property
    def selection_sets(self) -> list[SelectionSetNode]:
        return [node.selection_set for node in self.nodes if node.selection_set is not None]


Selections = dict[tuple[str, tuple[int, ...]], list[Field]]
"""Fields read from selection sets, by parent type and the selection sets' identities: valid for one document and
one set of variable values."""


def fields(scope: Scope, parent: GraphQLObjectType, selection_sets: Sequence[SelectionSetNode]) -> list[Field]:
    """The child fields of ``parent`` selected in ``selection_sets``; ``__typename`` and introspection left out.

    Kept in ``scope.selections``, when it has one: the walk asks again for each object of a list.
    """
    kept = scope.selections
    if kept is None:
        return _fields(scope, parent, selection_sets)
    key = (parent.name, tuple(map(id, selection_sets)))
    found = kept.get(key)
    if found is None:
        found = kept[key] = _fields(scope, parent, selection_sets)
    return found


def _fields(scope: Scope, parent: GraphQLObjectType, selection_sets: Sequence[SelectionSetNode]) -> list[Field]:
    grouped: dict[str, list[FieldNode]] = {}
    for selection_set in selection_sets:
        for node in _field_nodes(scope, parent, selection_set, frozenset()):
            grouped.setdefault((node.alias or node.name).value, []).append(node)
    out = []
    for key, nodes in grouped.items():
        definition = parent.fields.get(nodes[0].name.value)
        if definition is None:
            continue
        try:
            args = get_argument_values(definition, nodes[0], scope.variables)
        except GraphQLError:
            args = {}
        out.append(Field(key, tuple(nodes), definition, args, given(nodes[0], scope.variables)))
    return out


def given(node: FieldNode, variables: VariableValues) -> frozenset[str]:
    """The arguments the operation sets on ``node``: written out, or passed in a variable that has a value."""
    return frozenset(
        argument.name.value
        for argument in node.arguments or ()
        if not isinstance(argument.value, VariableNode) or argument.value.name.value in variables.coerced
    )


def children(scope: Scope, field: Field, type_name: str | None = None) -> list[Field]:
    """The fields selected under ``field`` on objects of its type, or of ``type_name`` for an abstract type."""
    named = scope.schema.get_type(type_name) if type_name is not None else field.named
    if not isinstance(named, GraphQLObjectType):
        return []
    return fields(scope, named, field.selection_sets)


def object_types(scope: Scope, named: GraphQLNamedType) -> Sequence[GraphQLObjectType]:
    """The object types a value of ``named`` can have."""
    if isinstance(named, GraphQLObjectType):
        return [named]
    if is_abstract_type(named):
        return scope.schema.get_possible_types(named)
    return []


def _field_nodes(
    scope: Scope, parent: GraphQLObjectType, selection_set: SelectionSetNode, seen: frozenset[str]
) -> list[FieldNode]:
    nodes: list[FieldNode] = []
    for selection in selection_set.selections:
        if not _included(scope, selection):
            continue
        if isinstance(selection, FieldNode):
            if not selection.name.value.startswith("__"):
                nodes.append(selection)
        elif isinstance(selection, InlineFragmentNode):
            condition = selection.type_condition.name.value if selection.type_condition else None
            if fragment_applies(scope.schema, condition, parent):
                nodes += _field_nodes(scope, parent, selection.selection_set, seen)
        elif isinstance(selection, FragmentSpreadNode):
            fragment = scope.fragments.get(selection.name.value)
            if fragment is None or fragment.name.value in seen:
                continue
            if fragment_applies(scope.schema, fragment.type_condition.name.value, parent):
                nodes += _field_nodes(scope, parent, fragment.selection_set, seen | {fragment.name.value})
    return nodes


def _included(scope: Scope, node: SelectionNode) -> bool:
    skip = get_directive_values(GraphQLSkipDirective, node, scope.variables)
    if skip and skip.get("if") is True:
        return False
    include = get_directive_values(GraphQLIncludeDirective, node, scope.variables)
    return not (include and include.get("if") is False)


def fragment_applies(schema: GraphQLSchema, condition: str | None, parent: GraphQLObjectType) -> bool:
    """Whether a fragment with this type condition selects fields on objects of type ``parent``."""
    if condition is None or condition == parent.name:
        return True
    condition_type = schema.get_type(condition)
    return is_abstract_type(condition_type) and schema.is_sub_type(condition_type, parent)
