"""A query of a kept document, answered without strawberry's per-request machinery.

For every request strawberry builds an execution context, an instance of each schema extension, a middleware
manager and a context manager per phase and extension (the operation, parsing, validation, execution), and
graphql-core coerces the variables that the estimate has coerced already. For a query whose document the planner
keeps (``execution.cost.Prepared``), already valid under the caller's rules, compiled and not explained, none of
those phases has anything to do that the extensions' own functions cannot do directly, in their order:

- ``Limits``: the document is the kept one; its estimate is checked with the variables, coerced once
  (``checked``), and the reader shares the document's selections and plans;
- execution: the compiled executor (``CompiledExecutor``), built with those coerced variables;
- ``Accounting``: the reader settles, and ``extensions.dynamodb`` is added when asked for;
- ``GatewaySchema.process_errors``: unexpected errors are logged (``log_unexpected``);
- ``ErrorPolicy``: each error leaves with its code, unexpected ones masked (``public``).

The answer is strawberry's: the same result types, the same errors, the same extensions; the caller records the
operation as its observation extension would (``operation_name``, ``operation_type``, ``context``, ``result``).
Everything else (first requests, mutations, subscriptions, explain, introspection, compilation turned off, a
schema with an extension of another kind) takes strawberry's path: ``Kept.of`` answers None for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from inspect import isawaitable
from typing import Any, ClassVar

import strawberry
from graphql import ExecutionResult as GraphQLExecutionResult
from graphql import (
    FragmentDefinitionNode,
    GraphQLError,
    OperationDefinitionNode,
    default_field_resolver,
    default_type_resolver,
    specified_rules,
)
from graphql import OperationType as GraphQLOperationType
from graphql.execution.collect_fields import FragmentDetails
from graphql.utilities import get_operation_ast
from strawberry.execution.is_awaitable import optimized_is_awaitable
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError
from strawberry.types.graphql import OperationType

from gateway.execution.cost import InvalidVariables, Prepared
from gateway.surface.compiled import CompiledExecutor
from gateway.surface.context import Context
from gateway.surface.extensions import (
    Accounting,
    ErrorPolicy,
    GatewaySchema,
    Limits,
    checked,
    log_unexpected,
    public,
    validation_rules,
)
from gateway.surface.toolkit import graphql_schema

_ANSWERED = frozenset({ErrorPolicy, Limits, Accounting})
"""The schema extensions whose work ``Kept`` does itself."""


def answerable(schema: strawberry.Schema, recorded: Iterable[type]) -> bool:
    """Whether ``Kept`` answers as ``schema`` would: a schema of ``graph.build`` (its class, its executor) whose
    extensions are those whose work ``Kept`` does, or ``recorded`` ones, whose work its caller does."""
    extra = set(recorded)
    return (
        type(schema) is GatewaySchema
        and getattr(schema, "execution_context_class", None) is CompiledExecutor
        and all(one in _ANSWERED or one in extra for one in schema.extensions)
    )


_RULES = tuple(specified_rules)
"""The rules strawberry validates a request by (``ExecutionContext.validation_rules``)."""


class Kept:
    """One request for a query of a kept document, answered by ``run``."""

    __slots__ = (
        "_extensions",
        "_fragments",
        "_operation",
        "_prepared",
        "_schema",
        "_variables",
        "context",
        "operation_name",
        "result",
    )

    operation_type: ClassVar[OperationType] = OperationType.QUERY

    def __init__(
        self,
        schema: strawberry.Schema,
        prepared: Prepared,
        operation: OperationDefinitionNode,
        fragments: dict[str, FragmentDefinitionNode],
        variables: dict[str, Any] | None,
        extensions: dict[str, Any] | None,
        context: Context,
    ) -> None:
        self._schema = schema
        self._extensions = extensions
        self._prepared = prepared
        self._operation = operation
        self._fragments = fragments
        self._variables = variables
        self.context = context
        self.operation_name = operation.name.value if operation.name is not None else None
        """The operation's name, as strawberry names the operation it runs."""
        self.result: ExecutionResult | None = None
        """The answer, once ``run`` has made it."""

    @classmethod
    def of(
        cls,
        schema: strawberry.Schema,
        query: str,
        operation_name: str | None,
        variables: dict[str, Any] | None,
        extensions: dict[str, Any] | None,
        context: Context,
        allowed: Iterable[OperationType],
    ) -> Kept | None:
        """The request, when it is a query of a kept document that this path answers as strawberry would; None
        when it must take strawberry's path."""
        planner = context.planner
        if planner is None or not context.compiled or context.explain or OperationType.QUERY not in allowed:
            return None
        if planner.schema is not graphql_schema(schema):
            return None
        prepared = planner.prepared(query)
        if prepared is None or validation_rules(planner, context, _RULES) not in prepared.valid:
            return None
        operation = get_operation_ast(prepared.document, operation_name)
        if operation is None or operation.operation is not GraphQLOperationType.QUERY:
            return None  # strawberry says why there is no such operation, or runs a mutation serially
        fragments = {
            one.name.value: one for one in prepared.document.definitions if isinstance(one, FragmentDefinitionNode)
        }
        if any(one.variable_definitions for one in fragments.values()):
            return None  # fragment arguments: graphql-core works out their signatures
        return cls(schema, prepared, operation, fragments, variables, extensions, context)

    async def run(self) -> ExecutionResult:
        """The answer, as strawberry's path would have made it (also kept in ``result``)."""
        context = self.context
        try:
            result = await self._answer()
        except Exception as error:  # as strawberry ends an operation that raised: a request error, logged
            failure = error if isinstance(error, GraphQLError) else GraphQLError(str(error), original_error=error)
            result = PreExecutionError(data=None, errors=[failure])
            log_unexpected(result.errors or (), context.request_id)
        if result.errors:
            result.errors = [public(error, context.request_id) for error in result.errors]
        self.result = result
        return result

    async def _answer(self) -> ExecutionResult:
        context, planner, operation = self.context, self.context.planner, self._operation
        assert planner is not None
        try:
            coerced = planner.coerce(operation, self._variables)
        except InvalidVariables as invalid:
            return self._refused(invalid.errors)
        _, errors = checked(
            planner, context, self._prepared.document, self.operation_name, self._variables, self._prepared, coerced
        )
        if errors:
            return self._refused(errors)
        executor = CompiledExecutor(
            graphql_schema(self._schema),
            self._fragments,
            {name: FragmentDetails(one, None) for name, one in self._fragments.items()},
            None,
            context,
            operation,
            coerced,
            default_field_resolver,
            default_type_resolver,
            default_field_resolver,
            is_awaitable=optimized_is_awaitable,
            operation_extensions=self._extensions,
        )
        executed = executor.execute_operation()
        if isawaitable(executed):
            executed = await executed
        assert isinstance(executed, GraphQLExecutionResult)  # a query without @defer or @stream
        await context.reader.settle()
        if executed.errors:
            log_unexpected(executed.errors, context.request_id)
        return ExecutionResult(data=executed.data, errors=executed.errors, extensions=self._results())

    def _refused(self, errors: list[GraphQLError]) -> PreExecutionError:
        log_unexpected(errors, self.context.request_id)
        return PreExecutionError(data=None, errors=errors, extensions=self._results())

    def _results(self) -> dict[str, Any]:
        context = self.context
        return {"dynamodb": context.ledger.summary()} if context.accounting else {}
