"""Relay-style connections, built by hand: strawberry's relay helper strips ``first``/``after`` from resolvers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar

import strawberry

from gateway.loaders import Member, Page
from gateway.lookahead import Selected, selected
from gateway.model import attribute_values
from gateway.writes import Counted

Node = TypeVar("Node")
Info = strawberry.Info[Any, None]


@strawberry.type
class PageInfo:
    has_next_page: bool
    page: strawberry.Private[Page]

    @strawberry.field
    def end_cursor(self) -> str | None:
        return self.page.end_cursor


@strawberry.type
class Edge(Generic[Node]):
    member: strawberry.Private[Member]

    @strawberry.field
    def cursor(self) -> str:
        return self.member.cursor

    node: Node


@strawberry.type
class Connection(Generic[Node]):
    edges: list[Edge[Node]]
    page_info: PageInfo

    @strawberry.field
    def nodes(self) -> list[Node]:
        return [edge.node for edge in self.edges]

    @classmethod
    def of(cls, page: Page, node: Callable[[dict[str, str], dict[str, Any]], Node]) -> Connection[Node]:
        return cls(
            edges=[Edge(member=m, node=node(m.ids, m.item)) for m in page.members],
            page_info=page_info(page),
        )


VERSION = (
    "The item's version, raised by every update: pass it as expectedVersion to change the item only if nobody "
    "else has since. 0 for an item another tool wrote."
)
TOTAL_COUNT = (
    "How many members there are in all, from the parent's counter (no extra request when the parent was read); "
    "null on a table another tool wrote until `tablegraph recount` has run."
)


@strawberry.type
class CountedConnection(Connection[Node]):
    """A connection whose parent counts its members, so it can tell how many there are in all."""

    counted: strawberry.Private[Counted]
    parent_ids: strawberry.Private[dict[str, str]]

    @strawberry.field(description=TOTAL_COUNT)
    async def total_count(self, info: Info) -> int | None:
        return await total_count(info, self.counted, self.parent_ids)

    @classmethod
    def counting(
        cls,
        page: Page,
        node: Callable[[dict[str, str], dict[str, Any]], Node],
        counted: Counted,
        parent_ids: dict[str, str],
    ) -> Self:
        return cls(
            edges=[Edge(member=m, node=node(m.ids, m.item)) for m in page.members],
            page_info=page_info(page),
            counted=counted,
            parent_ids=parent_ids,
        )


async def total_count(info: Info, counted: Counted, parent_ids: dict[str, str]) -> int | None:
    """The parent's counter, read through the request's batched loader (a cache hit when the parent was read)."""
    parent = counted.collection.parent
    item = await info.context.reader.get(parent, parent_ids)
    if item is None:
        return None
    count: int | None = attribute_values(parent, item)[counted.attribute]
    return count


def page_info(page: Page) -> PageInfo:
    return PageInfo(has_next_page=page.has_next, page=page)


def lookahead(info: Info) -> list[Selected]:
    """The fields selected under the one being resolved (strawberry keeps graphql-core's info as ``_raw_info``)."""
    return selected(info._raw_info)
