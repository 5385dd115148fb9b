"""Errors a client is meant to see, each with the code it carries in ``extensions.code``.

GatewayError
 ├─ BadUserInput        BAD_USER_INPUT   malformed id, out-of-range argument, tampered cursor
 ├─ Unauthenticated     UNAUTHENTICATED
 ├─ Forbidden           FORBIDDEN
 ├─ NotFound            NOT_FOUND        a mutation's item or its parent does not exist
 ├─ Conflict            CONFLICT         exists already, stale version, has children, token reused
 ├─ Throttled           THROTTLED        DynamoDB kept throttling after retries
 └─ Unavailable         UNAVAILABLE      DynamoDB could not be reached

Anything else raised while serving is a bug: it is logged with the request id and masked as INTERNAL.
"""

from __future__ import annotations

from typing import Any, ClassVar


class GatewayError(Exception):
    code: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        # graphql-core copies ``extensions`` of the original error onto the GraphQL error it reports.
        self.extensions: dict[str, Any] = {"code": self.code, **details}


class BadUserInput(GatewayError):
    code = "BAD_USER_INPUT"


class Unauthenticated(GatewayError):
    code = "UNAUTHENTICATED"


class Forbidden(GatewayError):
    code = "FORBIDDEN"


class NotFound(GatewayError):
    code = "NOT_FOUND"


class Conflict(GatewayError):
    code = "CONFLICT"


class Throttled(GatewayError):
    code = "THROTTLED"


class Unavailable(GatewayError):
    code = "UNAVAILABLE"
