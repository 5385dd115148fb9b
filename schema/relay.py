"""Relay-style connections, built by hand: strawberry's relay helper strips ``first``/``after`` from resolvers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import strawberry

from gateway.loaders import Page
from gateway.lookahead import Selected, selected

Node = TypeVar("Node")
Info = strawberry.Info[Any, None]


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class Edge(Generic[Node]):
    cursor: str
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
            edges=[Edge(cursor=m.cursor, node=node(m.ids, m.item)) for m in page.members],
            page_info=page_info(page),
        )


def page_info(page: Page) -> PageInfo:
    return PageInfo(has_next_page=page.has_next, end_cursor=page.end_cursor)


def lookahead(info: Info) -> list[Selected]:
    """The fields selected under the one being resolved (strawberry keeps graphql-core's info as ``_raw_info``)."""
    return selected(info._raw_info)
