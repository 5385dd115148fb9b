"""The ASGI application: GraphQL at /graphql (GraphiQL in a browser), a health check at /healthz."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import strawberry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from gateway.accounting import Ledger
from gateway.config import Settings
from gateway.context import Context
from gateway.cursor import CursorCodec
from gateway.loaders import Reader
from gateway.model import Model
from gateway.store import Store

ACCOUNTING_HEADER = "x-tablegraph-accounting"
REQUEST_ID_HEADER = "x-request-id"
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class _GraphQL(GraphQL[Context, None]):
    def __init__(self, schema: strawberry.Schema, settings: Settings) -> None:
        super().__init__(schema, graphql_ide="graphiql")
        self._settings = settings
        self._codec = CursorCodec(settings.cursor_secret)

    async def get_context(self, request: Request | WebSocket, response: Response | WebSocket) -> Context:
        store: Store = request.app.state.store
        ledger = Ledger()
        given = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = given if _SANE_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        if isinstance(response, Response):
            response.headers[REQUEST_ID_HEADER] = request_id
        return Context(
            request_id=request_id,
            reader=Reader(store, self._settings, self._codec, ledger),
            ledger=ledger,
            accounting=request.headers.get(ACCOUNTING_HEADER, "").lower() in {"1", "true", "on"},
        )


def create_app(settings: Settings, schema: strawberry.Schema | None = None, model: Model | None = None) -> Starlette:
    if schema is None or model is None:
        from schema import MODEL, SCHEMA

        schema, model = schema or SCHEMA, model or MODEL

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with Store.open(settings, model) as store:
            app.state.store = store
            yield

    async def healthz(request: Request) -> Response:
        store: Store = request.app.state.store
        if await store.ping():
            return JSONResponse({"status": "ok", "table": store.table})
        return JSONResponse({"status": "unavailable", "table": store.table}, status_code=503)

    async def home(request: Request) -> Response:
        return RedirectResponse("/graphql")

    graphql: Any = _GraphQL(schema, settings)
    return Starlette(
        routes=[
            Route("/", home),
            Route("/healthz", healthz),
            Route("/graphql", graphql, methods=["GET", "POST"]),
        ],
        lifespan=lifespan,
    )
