"""The GraphQL types every declaration shares: scalars, ordering, pages, mutation results, argument types."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from enum import Enum
from typing import Annotated, Any, NewType

import strawberry

from gateway.design.model import AttributeType, Item, parse_date
from gateway.dynamo.wire import Unreadable
from gateway.errors import BadUserInput, UnreadableItem
from gateway.execution.queries import ASCENDING
from gateway.execution.reader import Member, Page


def _serialize_date(value: date | str) -> str:
    return value.isoformat() if isinstance(value, date) else value


def _parse_date(value: object) -> date:
    parsed = parse_date(value) if isinstance(value, str) else None
    if parsed is None:
        raise BadUserInput(f"{value!r} is not a Date: a calendar date written YYYY-MM-DD")
    return parsed


Date = NewType("Date", str)
"""A DATE attribute's value: stored as S ``YYYY-MM-DD``, served as the ``Date`` scalar."""
DATE_SCALAR = strawberry.scalar(
    name="Date",
    description="A calendar date, written YYYY-MM-DD (ISO 8601), e.g. 2026-09-01.",
    serialize=_serialize_date,
    parse_value=_parse_date,
)

_EXACT_FLOAT = 2**53
"""Past it a float no longer holds every whole number: a larger one must come as an integer or as digits."""


def _serialize_long(value: object) -> int:
    # Ids are text (``1700000000123``); a number key's INT attribute arrives as a Decimal or an int.
    return int(value)  # type: ignore[call-overload,no-any-return]


def _parse_long(value: object) -> str:
    """A whole number as the id text keys hold (plain decimal digits): from a JSON integer, a float that is one
    exactly, or its digits as a string."""
    exact = isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_FLOAT
    if exact or (isinstance(value, str) and LONG_TEXT.fullmatch(value)):
        value = int(value)  # type: ignore[call-overload]
    if not isinstance(value, int) or isinstance(value, bool) or len(str(abs(value))) > LONG_DIGITS:
        raise BadUserInput(f"{value!r} is not a Long: a whole number of at most {LONG_DIGITS} digits")
    return str(value)


LONG_DIGITS = 38
"""DynamoDB's precision: a number holds at most 38 significant digits."""
LONG_TEXT = re.compile(r"-?[0-9]{1,38}")
Long = NewType("Long", str)
"""A number key's id (an epoch time in milliseconds): held as its decimal text, served as the ``Long`` scalar."""
LONG_SCALAR = strawberry.scalar(
    name="Long",
    description="A whole number of any size (an epoch time in milliseconds, beyond Int's 32 bits), written as a JSON"
    " number; taken as a number or as a string of its digits. JavaScript numbers hold it exactly up to 2^53.",
    serialize=_serialize_long,
    parse_value=_parse_long,
)

SCALARS: dict[AttributeType, Any] = {
    "S": str,
    "INT": int,
    "N": float,
    "BOOL": bool,
    "DATE": Date,
    "JSON": strawberry.scalars.JSON,
    "BS": list[str],  # base64, one string per element
}
CONDITION_NAMES: dict[AttributeType, str] = {
    "S": "String",
    "INT": "Int",
    "N": "Float",
    "BOOL": "Boolean",
    "DATE": "Date",
}


@strawberry.enum(description="Which way a connection's members are ordered by the key that sorts them.")
class SortOrder(Enum):
    ASCENDING = strawberry.enum_value(ASCENDING, description="Lowest key first.")
    DESCENDING = strawberry.enum_value("DESCENDING", description="Highest key first.")


ORDER = (
    "Ascending or descending by the key that sorts the members; the default is the collection's own order. Either "
    "way is one Query (DynamoDB reads an index both ways); a cursor reads on in the order it is given with."
)
WHERE = "Only the members that meet this filter; pages still fill (see the filter's description)."

VERSION_FIELD = (
    "The item's version, raised by every update: pass it as expectedVersion to change the item only if nobody "
    "else has since. 0 for an item another tool wrote."
)
TOTAL_COUNT = (
    "How many members there are in all, from the parent's counter (no extra request when the parent was read); "
    "null on a table another tool wrote until `tablegraph recount` has run."
)
EXPECTED_VERSION = "The version read last; the change applies only if the item is still at it (0: written elsewhere)."
OPTIONAL_VERSION = "When given, delete only if the item is still at this version."
CASCADE = "Also delete the members (and their members), in bounded batches; without it, a parent with members stays."
KEEP = "Omitted: unchanged; null: removed."
UNCHANGED = "Omitted: unchanged."
CURSOR = "Where this edge is: pass it as after to read on from it, or as before to read back from it."
TOKEN = (
    "Makes the mutation idempotent for 24 hours: sent again with the same token and arguments, it is applied once "
    "and answers as the first time did; the same token with other arguments is a TOKEN_REUSED conflict."
)

First = Annotated[
    int | None,
    strawberry.argument(
        description=(
            "How many to return from the start (or after `after`), from 1 to the page limit; null: the server's "
            "default page size. Leave it out when paging backwards with last or before."
        )
    ),
]
After = Annotated[
    str | None,
    strawberry.argument(description="Resume after this cursor, taken from this same field of this same parent."),
]
Last = Annotated[
    int | None,
    strawberry.argument(
        description=(
            "How many to return from the end (or before `before`), from 1 to the page limit; null with before: "
            "the server's default page size. Members come in the same order as forwards. Not with first or after."
        )
    ),
]
Before = Annotated[
    str | None,
    strawberry.argument(
        description="Read back from this cursor, taken from this same field of this same parent. Not with after."
    ),
]
ClientToken = Annotated[str | None, strawberry.argument(description=TOKEN, name="clientToken")]


@strawberry.interface(description="An object with a global id: node(id:) and nodes(ids:) read it back.")
class Node:
    id: strawberry.ID = strawberry.field(description="Opaque, and unique across all types.")


def _start_cursor(root: PageInfo) -> str | None:
    return root.page.start_cursor


def _end_cursor(root: PageInfo) -> str | None:
    return root.page.end_cursor


@strawberry.type(description="Where a page starts and ends, and whether more members lie beyond it.")
class PageInfo:
    has_previous_page: bool = strawberry.field(
        description=(
            "Read backwards (last): whether members precede this page, to read back with startCursor as before. "
            "Read forwards: whether the page was read after a cursor, so members came before it when the cursor "
            "was given out (false for a page read from the start)."
        )
    )
    has_next_page: bool = strawberry.field(
        description=(
            "Read forwards (first): whether members follow this page, to read on with endCursor as after. Read "
            "backwards: whether the page was read before a cursor, so members came after it when the cursor was "
            "given out (false for a page read from the end)."
        )
    )
    start_cursor: str | None = strawberry.field(
        resolver=_start_cursor,
        description="The cursor of the first edge, to pass as before; null on an empty page.",
    )
    read_limit_reached: bool = strawberry.field(
        description=(
            "A filtered page that stopped at its read budget before it filled: more members may match past "
            "endCursor (before startCursor, read backwards), which then marks where reading stopped rather than "
            "the last edge. Always false on a page without a filter."
        )
    )
    end_cursor: str | None = strawberry.field(
        resolver=_end_cursor, description="The cursor of the last edge, to pass as after; null on an empty page."
    )
    page: strawberry.Private[Page]


@strawberry.interface(description="An expected reason why a mutation changed nothing.")
class MutationError:
    message: str = strawberry.field(description="What went wrong, for a person to read.")


@strawberry.type(description="The item, or a parent it needs, does not exist.")
class NotFoundError(MutationError):
    entity: str = strawberry.field(description="The kind of item that is missing, e.g. Workspace.")


@strawberry.enum(description="Why a mutation found the table in a state it could not apply to.")
class ConflictReason(Enum):
    ALREADY_EXISTS = strawberry.enum_value("ALREADY_EXISTS", description="A create found the item there already.")
    VERSION_MISMATCH = strawberry.enum_value(
        "VERSION_MISMATCH", description="The item is no longer at expectedVersion: someone changed it since."
    )
    HAS_CHILDREN = strawberry.enum_value(
        "HAS_CHILDREN", description="A delete without cascade found members under the item."
    )
    NOT_COUNTED = strawberry.enum_value(
        "NOT_COUNTED", description="A parent's counter is missing (written by another tool): run tablegraph recount."
    )
    TOKEN_REUSED = strawberry.enum_value(
        "TOKEN_REUSED", description="The clientToken was used before with other arguments."
    )
    CHANGED = strawberry.enum_value("CHANGED", description="The item changed while the mutation ran; read it again.")
    RULE = strawberry.enum_value(
        "RULE", description="A write rule of the design refused the change (a counter's bound, a condition): see rule."
    )


@strawberry.type(description="The table is not in the state the mutation needs; nothing was changed.")
class ConflictError(MutationError):
    reason: ConflictReason = strawberry.field(description="What kind of conflict it is.")
    current_version: int | None = strawberry.field(
        description="The item's version now, when it exists: read it again, or retry with this expectedVersion."
    )
    rule: str | None = strawberry.field(
        default=None, description="The name of the design's write rule that refused it, when reason is RULE."
    )


@strawberry.type(description="An argument is not acceptable; no request was sent.")
class ValidationFailedError(MutationError):
    field: str = strawberry.field(description="The argument or input field that was refused.")


@strawberry.type(description="How many items of one type a delete removed.")
class DeletedItems:
    type: str = strawberry.field(description="The entity, e.g. Project.")
    count: int = strawberry.field(description="How many items of the type were removed.")


@strawberry.type(description="What a delete removed: the item, and with cascade its members, by type.")
class Deleted:
    items: list[DeletedItems] = strawberry.field(description="One entry per type that lost items, by type name.")


def served_values(values: dict[str, Any], item: Item, stored: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The plain field values of ``item``, by the Python attribute of each (``stored`` names the stored attribute of
    those that are not their own); an error, reported at its field, in place of each one it cannot serve.

    Plain attribute fields are nullable, so the object (or edge) is still served with everything else it holds:
    one unreadable item never nulls its list or page.
    """
    if type(item) is not Unreadable:
        return values
    names = stored or {}
    out = {}
    for name, value in values.items():
        held = names.get(name, name)
        out[name] = (
            UnreadableItem(f"the stored {held} cannot be served: it is not valid Unicode text, or not readable")
            if held in item.invalid
            else value
        )
    return out


MUTATION_ERRORS = (NotFoundError, ConflictError, ValidationFailedError)
DeleteResult = Annotated[
    Deleted | NotFoundError | ConflictError | ValidationFailedError,
    strawberry.union("DeleteResult", description="What was deleted, or why nothing was."),
]


def page_info(page: Page) -> PageInfo:
    return PageInfo(
        has_previous_page=page.has_previous,
        has_next_page=page.has_next,
        read_limit_reached=page.stopped is not None,
        page=page,
    )


class Unread:
    """An edge's node that its connection did not read: its resolver reads it."""


UNREAD = Unread()


def edge_cursor(root: Any) -> str:
    member: Member = root._member
    return member.cursor
