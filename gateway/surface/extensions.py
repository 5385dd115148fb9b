"""Schema extensions: error policy, limits before execution, DynamoDB accounting and observation, one job each."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import strawberry
from graphql import DocumentNode, GraphQLError, OperationDefinitionNode
from graphql.execution.values import VariableValues
from graphql.validation import ASTValidationRule, NoSchemaIntrospectionCustomRule
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document
from strawberry.types import ExecutionContext, ExecutionResult

from gateway.errors import GatewayError
from gateway.execution.cost import Estimate, InvalidVariables, Planner, Prepared
from gateway.surface.context import Context
from gateway.surface.toolkit import graphql_schema

log = logging.getLogger("gateway.errors")


def is_expected(error: GraphQLError) -> bool:
    """Errors the client caused or may retry: ours with a code, and the GraphQL layer's own."""
    original = error.original_error
    if original is None:
        return True
    if isinstance(original, GraphQLError):
        return is_expected(original)
    return isinstance(original, GatewayError) and original.code != "INTERNAL"


def _request_id(execution_context: ExecutionContext | None) -> str | None:
    context = execution_context.context if execution_context else None
    return context.request_id if isinstance(context, Context) else None


class ErrorPolicy(SchemaExtension):
    """Every error leaves with ``extensions.code``; unexpected ones are masked, with the request id to quote."""

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if result is not None and result.errors:
            request_id = _request_id(self.execution_context)
            result.errors = [public(error, request_id) for error in result.errors]


def public(error: GraphQLError, request_id: str | None) -> GraphQLError:
    """``error`` as the client sees it: with a code, or masked when unexpected (logged by ``log_unexpected``)."""
    if not is_expected(error):
        return GraphQLError(
            "Internal error; quote the request id when reporting it.",
            nodes=error.nodes,
            source=error.source,
            positions=error.positions,
            path=error.path,
            extensions={"code": "INTERNAL", "requestId": request_id},
        )
    if "code" not in (error.extensions or {}):
        error.extensions = {**(error.extensions or {}), "code": error_code(error)}
    return error


def log_unexpected(errors: Iterable[GraphQLError], request_id: str | None) -> None:
    """Log the unexpected ones of ``errors``, with their traceback and the request id the client is told."""
    for error in errors:
        if not is_expected(error):
            log.error("unexpected error in request %s at %s", request_id, error.path, exc_info=error.original_error)


# graphql-core's wording when a variable's value cannot be coerced: bad input. Other messages about variables
# ("is never used", "is not defined") come from validation of the document itself.
_BAD_VARIABLE = re.compile(r"Variable '\$\w+' (has invalid value|got invalid value|of required type|of non-null type)")


def error_code(error: GraphQLError) -> str:
    """The code of an error the GraphQL layer raised without one."""
    if error.message.startswith("Syntax Error"):
        return "GRAPHQL_PARSE_FAILED"
    if _BAD_VARIABLE.match(error.message):
        return "BAD_USER_INPUT"
    return "GRAPHQL_VALIDATION_FAILED"


class Limits(SchemaExtension):
    """Refuses, before any DynamoDB request, a request that names no operation of several, or an operation too
    large or too costly; with explain, only plans it.

    Validation runs here, ahead of strawberry's own, because an error added after validation would not stop
    execution; strawberry skips its validation when an extension has done it. A document text seen before is
    neither parsed nor validated again, and its estimate is reused when it takes no variables (``Prepared``).
    """

    def __init__(self) -> None:
        self._estimate: Estimate | None = None
        self._prepared: Prepared | None = None
        self._named = False

    def _planner(self) -> Planner | None:
        context = self.execution_context.context
        return context.planner if isinstance(context, Context) else None

    def on_operation(self) -> Iterator[None]:
        planner = self._planner()
        if planner is not None:
            self.execution_context.parse_options["max_tokens"] = planner.budget.max_tokens
        # Until a document is parsed, strawberry's operation_name is the request's; then, when the request names
        # none, it is the first operation's, which strawberry would run.
        self._named = self.execution_context.operation_name is not None
        yield

    def on_parse(self) -> Iterator[None]:
        planner, execution = self._planner(), self.execution_context
        query = execution.query
        # The documents a planner keeps were validated against its schema: they mean nothing under another one.
        if planner is not None and planner.schema is not graphql_schema(execution.schema):
            planner = None
        if planner is not None and query is not None:
            self._prepared = planner.prepared(query)
            if self._prepared is not None:
                # A document already set makes strawberry skip parsing.
                execution.graphql_document = self._prepared.document
        yield
        document = execution.graphql_document
        if document is None:
            return
        if planner is not None and query is not None and self._prepared is None:
            self._prepared = planner.prepare(query, document)
        if not self._named and _operations(document) > 1:
            # GraphQL's GetOperation: a request error, before the operation's type is even looked at. Raised from
            # here, it ends the request as one that did not run.
            raise GraphQLError(
                "Must provide operation name if query contains multiple operations.",
                extensions={"code": "BAD_USER_INPUT"},
            )

    def on_validate(self) -> Iterator[None]:
        planner, execution = self._planner(), self.execution_context
        if planner is not None and execution.graphql_document is not None:
            context: Context = execution.context
            rules = validation_rules(planner, context, execution.validation_rules)
            prepared = self._prepared
            if prepared is not None and prepared.document is not execution.graphql_document:
                prepared = None
            if prepared is not None and rules in prepared.valid:
                errors: list[GraphQLError] = []
            else:
                errors = validate_document(graphql_schema(execution.schema), execution.graphql_document, rules)
                if prepared is not None and not errors:
                    prepared.valid.add(rules)
            if not errors:
                self._estimate, errors = checked(
                    planner,
                    context,
                    execution.graphql_document,
                    execution.operation_name,
                    execution.variables,
                    prepared,
                )
            execution.pre_execution_errors = errors
        yield

    def on_execute(self) -> Iterator[None]:
        if self._explaining():
            # A result already set makes strawberry skip execution: the plan is the answer, with the fields the
            # guard refuses answered FORBIDDEN where execution would answer it.
            forbidden = self._estimate.forbidden if self._estimate is not None else ()
            errors = [
                GraphQLError(error.message, path=path.split("."), original_error=error, extensions=error.extensions)
                for path, error in forbidden
            ]
            self.execution_context.result = ExecutionResult(data=None, errors=errors or None)
        yield

    def get_results(self) -> dict[str, Any]:
        planner = self._planner()
        if planner is not None and self._explaining() and self._estimate is not None:
            return {"explain": self._estimate.explain(planner.budget)}
        return {}

    def _explaining(self) -> bool:
        context = self.execution_context.context
        return isinstance(context, Context) and context.explain


def validation_rules(
    planner: Planner, context: Context, rules: tuple[type[ASTValidationRule], ...]
) -> tuple[type[ASTValidationRule], ...]:
    """The rules a document is validated by for this caller: ``rules``, and no introspection where it is not
    allowed to them."""
    introspection = planner.budget.introspection
    if introspection == "off" or (introspection == "admin" and not context.guard.principal.admin):
        return (*rules, NoSchemaIntrospectionCustomRule)
    return rules


def checked(
    planner: Planner,
    context: Context,
    document: DocumentNode,
    operation_name: str | None,
    variables: dict[str, Any] | None,
    prepared: Prepared | None,
    coerced: VariableValues | None = None,
) -> tuple[Estimate | None, list[GraphQLError]]:
    """A valid operation's estimate, checked against the budget (only planned, with explain); the errors that
    refuse it instead. The reader of a kept document's request shares the document's selections and plans."""
    try:
        estimate = planner.check(
            document,
            operation_name,
            variables,
            enforce=not context.explain,
            prepared=prepared,
            guard=context.guard if context.explain else None,
            coerced=coerced,
        )
    except GatewayError as error:
        return None, [GraphQLError(error.message, original_error=error, extensions=error.extensions)]
    except InvalidVariables as invalid:
        return None, invalid.errors
    if prepared is not None:
        context.reader.share(prepared.selections_of(operation_name, variables))
        context.plans = prepared.plans
    return estimate, []


def _operations(document: DocumentNode) -> int:
    return sum(isinstance(definition, OperationDefinitionNode) for definition in document.definitions)


class Accounting(SchemaExtension):
    """``extensions.dynamodb``: the calls, rounds and consumed capacity of this request, when asked for."""

    async def on_execute(self) -> AsyncIterator[None]:
        yield
        context = self.execution_context.context
        if isinstance(context, Context):
            await context.reader.settle()

    def get_results(self) -> dict[str, Any]:
        context = self.execution_context.context
        if isinstance(context, Context) and context.accounting:
            return {"dynamodb": context.ledger.summary()}
        return {}


class GatewaySchema(strawberry.Schema):
    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        log_unexpected(errors, _request_id(execution_context))
