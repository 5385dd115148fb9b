"""Look-ahead at the selection set: which child fields a query asks for, with their coerced arguments.

strawberry's ``selected_fields`` hands arguments over as raw strings and ignores ``@skip``/``@include``; this
walks graphql-core's AST instead, so arguments are coerced by the schema's types, variables are substituted,
fragments are followed and skipped fields are left out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLIncludeDirective,
    GraphQLObjectType,
    GraphQLResolveInfo,
    GraphQLSchema,
    GraphQLSkipDirective,
    InlineFragmentNode,
    SelectionNode,
    SelectionSetNode,
    get_named_type,
    is_abstract_type,
)
from graphql.execution.values import VariableValues, get_argument_values, get_directive_values


@dataclass(frozen=True)
class Selected:
    """One selected child field; ``children`` walks one level further down."""

    name: str
    args: dict[str, Any]
    _nodes: tuple[FieldNode, ...]
    _type: GraphQLObjectType | None
    _info: GraphQLResolveInfo[Any]

    def children(self) -> list[Selected]:
        if self._type is None:
            return []
        return list(_collect(self._info, self._type, [n.selection_set for n in self._nodes if n.selection_set]))


def selected(info: GraphQLResolveInfo[Any]) -> list[Selected]:
    """The child fields selected under the field being resolved."""
    parent = get_named_type(info.return_type)
    if not isinstance(parent, GraphQLObjectType):
        return []
    return list(_collect(info, parent, [n.selection_set for n in info.field_nodes if n.selection_set]))


def _collect(
    info: GraphQLResolveInfo[Any], parent: GraphQLObjectType, selection_sets: Sequence[SelectionSetNode]
) -> Iterator[Selected]:
    grouped: dict[str, list[FieldNode]] = {}
    for selection_set in selection_sets:
        for node in _fields(info, parent, selection_set, set()):
            grouped.setdefault((node.alias or node.name).value, []).append(node)
    for nodes in grouped.values():
        name = nodes[0].name.value
        definition = parent.fields.get(name)
        if definition is None:  # __typename and other introspection fields
            continue
        child = get_named_type(definition.type)
        yield Selected(
            name=name,
            args=get_argument_values(definition, nodes[0], _variables(info)),
            _nodes=tuple(nodes),
            _type=child if isinstance(child, GraphQLObjectType) else None,
            _info=info,
        )


def _fields(
    info: GraphQLResolveInfo[Any], parent: GraphQLObjectType, selection_set: SelectionSetNode, seen: set[str]
) -> Iterator[FieldNode]:
    for selection in selection_set.selections:
        if not _included(info, selection):
            continue
        if isinstance(selection, FieldNode):
            yield selection
        elif isinstance(selection, InlineFragmentNode):
            if fragment_applies(info.schema, _condition(selection), parent):
                yield from _fields(info, parent, selection.selection_set, seen)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = info.fragments.get(name)
            if fragment is None or name in seen or not fragment_applies(info.schema, _condition(fragment), parent):
                continue
            seen.add(name)
            yield from _fields(info, parent, fragment.selection_set, seen)


def _included(info: GraphQLResolveInfo[Any], node: SelectionNode) -> bool:
    skip = get_directive_values(GraphQLSkipDirective, node, _variables(info))
    if skip and skip.get("if") is True:
        return False
    include = get_directive_values(GraphQLIncludeDirective, node, _variables(info))
    return not (include and include.get("if") is False)


def _variables(info: GraphQLResolveInfo[Any]) -> VariableValues:
    # strawberry hands resolvers the plain dict of coerced values; graphql-core's helpers want its container.
    values: Any = info.variable_values
    return values if isinstance(values, VariableValues) else VariableValues({}, dict(values))


def _condition(node: InlineFragmentNode | FragmentDefinitionNode) -> str | None:
    return node.type_condition.name.value if node.type_condition else None


def fragment_applies(schema: GraphQLSchema, condition: str | None, parent: GraphQLObjectType) -> bool:
    """Whether a fragment with this type condition selects fields on objects of type ``parent``."""
    if condition is None or condition == parent.name:
        return True
    condition_type = schema.get_type(condition)
    return is_abstract_type(condition_type) and schema.is_sub_type(condition_type, parent)
