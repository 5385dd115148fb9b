"""Schema extensions: error policy and DynamoDB accounting, one job each."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.types import ExecutionContext

from gateway.context import Context
from gateway.errors import GatewayError

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
            result.errors = [self._public(error) for error in result.errors]

    def _public(self, error: GraphQLError) -> GraphQLError:
        if not is_expected(error):
            return GraphQLError(
                "Internal error; quote the request id when reporting it.",
                nodes=error.nodes,
                source=error.source,
                positions=error.positions,
                path=error.path,
                extensions={"code": "INTERNAL", "requestId": _request_id(self.execution_context)},
            )
        if "code" not in (error.extensions or {}):
            error.extensions = {**(error.extensions or {}), "code": _graphql_code(error)}
        return error


def _graphql_code(error: GraphQLError) -> str:
    if error.message.startswith("Syntax Error"):
        return "GRAPHQL_PARSE_FAILED"
    if error.message.startswith("Variable "):
        return "BAD_USER_INPUT"
    return "GRAPHQL_VALIDATION_FAILED"


class Accounting(SchemaExtension):
    """``extensions.dynamodb``: the calls, rounds and consumed capacity of this request, when asked for."""

    def get_results(self) -> dict[str, Any]:
        context = self.execution_context.context
        if isinstance(context, Context) and context.accounting:
            return {"dynamodb": context.ledger.summary()}
        return {}


class GatewaySchema(strawberry.Schema):
    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        for error in errors:
            if not is_expected(error):
                log.error(
                    "unexpected error in request %s at %s",
                    _request_id(execution_context),
                    error.path,
                    exc_info=error.original_error,
                )
