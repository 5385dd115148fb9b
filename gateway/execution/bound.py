"""The worst case of an operation's variables: values under which the walk reads at least as much as under any.

An operation sent with variables is estimated once with these values, and that estimate bounds every request's
(``execution.cost``). Only the uses whose worst case is plain get a value: ``@include``/``@skip`` (the field
kept), ``first`` (the page limit), ``after`` (a cursor given: the page cannot come with its parent), and the ids of
a root field that names entities by their table key (made-up ids, no two alike; a list at its limit). Any other
use (a global id, a filter, a level of a sort key, ``last``/``before``, a value inside a list or an input object)
leaves the operation without a bound, and each of its requests is estimated with its own variables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    ArgumentNode,
    DirectiveNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    Node,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
)

from gateway.design.model import Model
from gateway.execution import queries

MADE_UP_ID = "bound~"
"""What the ids of the worst case start with; each variable's own follow, so no two variables share an id."""
MADE_UP_CURSOR = "bound~cursor"
_PAGING_BACKWARDS = frozenset({"last", "before"})


class _Unbounded(Exception):
    """A variable is used where its worst case is not plain."""


def worst_case(
    model: Model,
    max_page_size: int,
    operation: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDefinitionNode],
) -> dict[str, Any] | None:
    """The variables of ``operation`` at their worst case; None when some use of one has no plain worst case."""
    uses = _Uses(model, max_page_size, fragments)
    try:
        uses.selection_set(operation.selection_set, root=True, seen=frozenset())
        uses.directives(operation.directives)
    except _Unbounded:
        return None
    return uses.values


class _Uses:
    def __init__(self, model: Model, max_page_size: int, fragments: Mapping[str, FragmentDefinitionNode]) -> None:
        self._model = model
        self._max_page_size = max_page_size
        self._fragments = fragments
        self.values: dict[str, Any] = {}

    def selection_set(self, selection_set: SelectionSetNode, *, root: bool, seen: frozenset[str]) -> None:
        for selection in selection_set.selections:
            self.directives(selection.directives)
            if isinstance(selection, FieldNode):
                self._arguments(selection, root=root)
                if selection.selection_set is not None:
                    self.selection_set(selection.selection_set, root=False, seen=seen)
            elif isinstance(selection, InlineFragmentNode):
                self.selection_set(selection.selection_set, root=root, seen=seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = self._fragments.get(name)
                if fragment is not None and name not in seen:
                    self.directives(fragment.directives)
                    self.selection_set(fragment.selection_set, root=root, seen=seen | {name})

    def directives(self, directives: tuple[DirectiveNode, ...] | None) -> None:
        for directive in directives or ():
            for argument in directive.arguments or ():
                if not _uses_variables(argument.value):
                    continue
                name = directive.name.value
                if name not in ("include", "skip") or not isinstance(argument.value, VariableNode):
                    raise _Unbounded
                # A field kept reads at least what it reads when left out.
                self._use(argument.value, name == "include")

    def _arguments(self, field: FieldNode, *, root: bool) -> None:
        arguments: tuple[ArgumentNode, ...] = tuple(field.arguments or ())
        names = {argument.name.value for argument in arguments}
        for argument in arguments:
            if not _uses_variables(argument.value):
                continue
            if not isinstance(argument.value, VariableNode):
                raise _Unbounded
            variable = argument.value
            self._use(variable, self._worst(field, argument.name.value, variable.name.value, names, root=root))

    def _worst(self, field: FieldNode, argument: str, variable: str, names: set[str], *, root: bool) -> Any:
        if argument in ("first", "after") and not names & _PAGING_BACKWARDS:
            return self._max_page_size if argument == "first" else MADE_UP_CURSOR
        found = self._model.roots.get(field.name.value) if root else None
        if found is not None and found.entity is not None:
            ids = dict(found.arguments)
            if argument in ids:
                made_up = f"{MADE_UP_ID}{variable}~"
                if found.many:
                    return [f"{made_up}{n}" for n in range(queries.MAX_BATCH_IDS)]
                return made_up
        raise _Unbounded

    def _use(self, variable: VariableNode, worst: Any) -> None:
        name = variable.name.value
        if name in self.values and self.values[name] != worst:
            raise _Unbounded  # two uses whose worst cases differ
        self.values[name] = worst


def _uses_variables(value: Node) -> bool:
    if isinstance(value, VariableNode):
        return True
    return any(_uses_variables(child) for key in value.keys for child in _nodes(getattr(value, key, None)))


def _nodes(value: Any) -> list[Node]:
    if isinstance(value, Node):
        return [value]
    if isinstance(value, tuple | list):
        return [one for one in value if isinstance(one, Node)]
    return []
