"""The ASGI application: GraphQL at /graphql (GraphiQL in a browser), a health check at /healthz."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import strawberry
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from gateway.auth import API_KEY_HEADER, AUTHORIZATION_HEADER, Authenticator
from gateway.config import Settings
from gateway.declaration import Declaration, load
from gateway.documents import Documents
from gateway.graph import build
from gateway.http import ACCOUNTING_HEADER, EXPLAIN_HEADER, REQUEST_ID_HEADER, GraphQLEndpoint
from gateway.limits import Budget, Planner
from gateway.store import Store

__all__ = ["ACCOUNTING_HEADER", "EXPLAIN_HEADER", "app_from_env", "create_app"]


def create_app(
    settings: Settings, declaration: Declaration | None = None, schema: strawberry.Schema | None = None
) -> Starlette:
    """The application serving ``declaration`` (by default the one ``settings.model`` names) through the schema
    derived from it, or through ``schema`` when given; refuses settings that configure no authentication
    (``auth_open`` must be explicit)."""
    declaration = declaration or load(settings.model)
    schema = schema or build(declaration).schema
    model, tenancy = declaration.model, declaration.tenancy
    graphql: Any = GraphQLEndpoint(
        schema,
        settings,
        Authenticator.from_settings(settings, tenancy.grant_names),
        tenancy,
        Planner(schema._schema, model, Budget.from_settings(settings)),
        Documents.from_settings(settings),
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with Store.open(settings, model) as store:
            app.state.store = store
            # What start-up built (modules, the schema, botocore's service model) lives as long as the process.
            # Frozen, it is left out of the full collections that the objects of requests in flight trigger, which
            # would otherwise walk all of it every few requests (measured: a sixth of the CPU of reading 100 edges).
            gc.freeze()
            try:
                yield
            finally:
                gc.unfreeze()

    async def healthz(request: Request) -> Response:
        store: Store = request.app.state.store
        if await store.ping():
            return JSONResponse({"status": "ok", "table": store.table})
        return JSONResponse({"status": "unavailable", "table": store.table}, status_code=503)

    async def home(request: Request) -> Response:
        return RedirectResponse("/graphql")

    return Starlette(
        routes=[
            Route("/", home),
            Route("/healthz", healthz),
            Route("/graphql", graphql),
        ],
        middleware=_cors(settings),
        lifespan=lifespan,
    )


def app_from_env() -> Starlette:
    """The application as configured by ``TABLEGRAPH_*`` variables: what each ``serve --workers`` process runs."""
    return create_app(Settings.from_env())


def _cors(settings: Settings) -> list[Middleware]:
    """Browsers on the allowed origins may call; without any, only same-origin pages can."""
    origins = [origin.strip() for origin in settings.cors_origins.split(",") if origin.strip()]
    if not origins:
        return []
    headers = [
        AUTHORIZATION_HEADER,
        "content-type",
        API_KEY_HEADER,
        ACCOUNTING_HEADER,
        EXPLAIN_HEADER,
        REQUEST_ID_HEADER,
    ]
    return [
        Middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST"],
            allow_headers=headers,
            expose_headers=[REQUEST_ID_HEADER],
            max_age=600,
        )
    ]
