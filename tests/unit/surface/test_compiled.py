"""Which operations the compiled executor takes from a plan, and what a plan's collections depend on."""

from __future__ import annotations

import pytest
from graphql import FragmentDefinitionNode, OperationDefinitionNode, parse

from gateway.surface.compiled import MAX_FLAG_VARIABLES, Plan


def _plan(text: str) -> Plan:
    document = parse(text)
    (operation,) = [one for one in document.definitions if isinstance(one, OperationDefinitionNode)]
    fragments = {one.name.value: one for one in document.definitions if isinstance(one, FragmentDefinitionNode)}
    return Plan(operation, fragments)


@pytest.mark.parametrize(
    ("text", "compiled"),
    [
        ('{ workspace(workspaceId: "w") { id } }', True),
        ('subscription { workspaceChanged(workspaceId: "w") { kind } }', True),
        ('mutation { deleteWorkspace(input: {workspaceId: "w"}) { __typename } }', False),
        ("{ __schema { queryType { name } } }", False),
        ('{ ...F } fragment F on Query { __type(name: "Query") { name } }', False),
        ('{ workspace(workspaceId: "w") { ... @defer { id } } }', False),
    ],
)
def test_queries_and_subscription_events_are_compiled_and_the_rest_interpreted(text: str, compiled: bool) -> None:
    assert _plan(text).compiled is compiled


def test_a_plan_keys_its_collections_on_the_variables_include_and_skip_name() -> None:
    plan = _plan(
        """query($a: Boolean!, $b: Boolean!, $n: Int) { workspace(workspaceId: "w") {
        id @include(if: $b) ...F projects(first: $n) { nodes { id } } } }
        fragment F on Workspace { displayName @skip(if: $a) region @include(if: true) }"""
    )
    assert plan.compiled
    assert plan.flag_names == ("a", "b")


def test_more_flag_variables_than_a_plan_keeps_are_interpreted() -> None:
    names = [f"v{i}" for i in range(MAX_FLAG_VARIABLES + 1)]

    def operation(used: list[str]) -> str:
        declared = ", ".join(f"${name}: Boolean!" for name in used)
        fields = " ".join(f"id @include(if: ${name})" for name in used)
        return f'query({declared}) {{ workspace(workspaceId: "w") {{ {fields} }} }}'

    assert not _plan(operation(names)).compiled
    assert _plan(operation(names[:-1])).compiled
