"""Every error a client can see, each with the code it carries in ``extensions.code``.

GatewayError                     INTERNAL                 anything unexpected: logged with the request id, masked
 ├─ BadUserInput                 BAD_USER_INPUT           malformed id, out-of-range argument, tampered cursor
 ├─ Unauthenticated              UNAUTHENTICATED          missing, bad or expired credentials
 ├─ Forbidden                    FORBIDDEN                a tenant the caller was not granted
 ├─ NotFound                     NOT_FOUND                a mutation's item or its parent does not exist
 ├─ Conflict                     CONFLICT                 exists already, stale version, has children, token reused
 ├─ Throttled                    THROTTLED                DynamoDB kept throttling after retries
 ├─ Unavailable                  UNAVAILABLE              DynamoDB could not be reached
 ├─ CostLimit                    COST_LIMIT               the operation would read more than the limits allow
 ├─ UnreadableItem               UNREADABLE_ITEM          a stored value a response cannot carry
 ├─ DataMismatch                 DATA_MISMATCH            an item or stored value the declaration contradicts
 ├─ PositionExpired              POSITION_EXPIRED         a stream position older than the stream's retention
 ├─ FellBehind                   FELL_BEHIND              a subscriber too slow for the changes it asked for
 ├─ FeedInterrupted              FEED_INTERRUPTED         the fan-out broker dropped: resume from the last position
 ├─ PersistedQueryNotFound       PERSISTED_QUERY_NOT_FOUND       a hash the gateway does not know: send the text
 ├─ PersistedQueryNotSupported   PERSISTED_QUERY_NOT_SUPPORTED   persisted documents are off
 └─ PersistedQueryRequired       PERSISTED_QUERY_REQUIRED        only registered documents run here

Refusals of a request as a whole, before any GraphQL runs (the HTTP status says the same):
BAD_REQUEST (400), METHOD_NOT_ALLOWED (405), NOT_ACCEPTABLE (406), PAYLOAD_TOO_LARGE (413),
UNSUPPORTED_MEDIA_TYPE (415); and GraphQL's own GRAPHQL_PARSE_FAILED and GRAPHQL_VALIDATION_FAILED.
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


class CostLimit(GatewayError):
    code = "COST_LIMIT"


class UnreadableItem(GatewayError):
    """A stored value a response cannot carry: text that is not valid Unicode, or a value no decoder reads."""

    code = "UNREADABLE_ITEM"


class DataMismatch(GatewayError):
    """The table contradicts the declaration where a request reads: an item at an entity's key that does not read
    as that entity (its discriminator, its index keys), or a stored value of another type than declared (an enum
    value outside the set, text where a number is declared). Served as an error at its field, never as a null: the
    answer would be wrong. ``extensions`` names the entity, the item's table key and, for a value, the attribute."""

    code = "DATA_MISMATCH"


class PositionExpired(GatewayError):
    """A stream position the stream no longer holds: older than its retention (24 hours), or of a stream that was
    replaced. The client reads the current state again and subscribes without a position."""

    code = "POSITION_EXPIRED"


class FellBehind(GatewayError):
    code = "FELL_BEHIND"


class FeedInterrupted(GatewayError):
    """The connection to the fan-out broker (``fanout_url``) dropped, so changes may have passed unseen: the client
    subscribes again with ``after`` its last position, which replays them from the stream."""

    code = "FEED_INTERRUPTED"


class PersistedQueryNotFound(GatewayError):
    code = "PERSISTED_QUERY_NOT_FOUND"


class PersistedQueryNotSupported(GatewayError):
    code = "PERSISTED_QUERY_NOT_SUPPORTED"


class PersistedQueryRequired(GatewayError):
    code = "PERSISTED_QUERY_REQUIRED"
