"""The ASGI application: GraphQL at /graphql (GraphiQL in a browser), /healthz, /readyz and /metrics."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import strawberry
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Match, Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.dynamo.store import Store
from gateway.execution.cost import Budget, Planner
from gateway.live.fanout import Feed
from gateway.server import observe
from gateway.server.auth import API_KEY_HEADER, AUTHORIZATION_HEADER, Authenticator
from gateway.server.checkup import StartupCheck
from gateway.server.declaration_file import load_model
from gateway.server.documents import Documents
from gateway.server.frontdoor import REQUEST_ID_HEADER, FrontDoor
from gateway.server.http import ACCOUNTING_HEADER, EXPLAIN_HEADER, GraphQLEndpoint
from gateway.server.playground import ASSETS_PATH
from gateway.server.transports import LiveEndpoint, closing_on_exit
from gateway.surface.graph import build
from gateway.surface.toolkit import graphql_schema

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["ACCOUNTING_HEADER", "EXPLAIN_HEADER", "app_from_env", "create_app"]

YOUNG_COLLECTION = 10_000
"""The garbage collector's first threshold while serving, where CPython's is 700: a collection of the youngest
objects starts once that many more have been made than freed. A request frees what it made when it is answered
(it holds no reference cycle), but a page of a hundred items has more than 700 objects alive at once, so at 700
collections ran two or three times per such request, each walking objects about to be freed (measured: 3% of the
CPU of a 100-edge page). Cyclic garbage, which the requests do not make, waits a little longer for its collection.
"""


def create_app(
    settings: Settings,
    declaration: Declaration | None = None,
    schema: strawberry.Schema | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Starlette:
    """The application serving ``declaration`` (by default the one ``settings.model`` names) through the schema
    derived from it, or through ``schema`` when given; refuses settings that configure no authentication
    (``auth_open`` must be explicit). Requests are traced into ``tracer_provider``, by default an OTLP exporter
    when ``settings.otlp_endpoint`` is set."""
    declaration = declaration or load_model(settings.model)
    schema = schema or build(declaration, settings.default_page_size).schema
    if observe.Observed not in schema.extensions:
        # First, so that it exits last and sees each operation's outcome as the other extensions leave it.
        schema.extensions = (observe.Observed, *schema.extensions)
    exporting = tracer_provider is None and bool(settings.otlp_endpoint)
    if exporting:
        tracer_provider = observe.otlp_tracer_provider(settings.otlp_endpoint)
    model, tenancy = declaration.model, declaration.tenancy
    authenticator = Authenticator.from_settings(settings, tenancy.grant_names)
    planner = Planner(graphql_schema(schema), model, Budget.from_settings(settings))
    door = FrontDoor(authenticator, Documents.from_settings(settings), settings.max_body_bytes)
    endpoint: Any = GraphQLEndpoint(schema, settings, door, tenancy, planner)
    live = LiveEndpoint(schema, settings, door, tenancy, planner)
    tracer = tracer_provider.get_tracer("tablegraph") if tracer_provider is not None else None
    graphql: ASGIApp = observe.WatchedEndpoint(
        live.events(endpoint), observe.OperationNames(settings.metrics_operation_names), tracer
    )
    if tracer_provider is not None:
        graphql = observe.traced(graphql, tracer_provider)

    checkup = StartupCheck(settings, declaration)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with Store.open(settings, model) as store, Feed.open(settings, store, observe.task_crashed) as feed:
            observe.watch(store.hooks)
            app.state.store = store
            app.state.feed = feed
            # On a client of its own: its Scan is neither a request's nor counted among the store's calls.
            checking = asyncio.create_task(checkup.run()) if checkup.state == "running" else None
            # What start-up built (modules, the schema, botocore's service model) lives as long as the process.
            # Frozen, it is left out of the full collections that the objects of requests in flight trigger, which
            # would otherwise walk all of it every few requests (measured: a sixth of the CPU of reading 100 edges).
            gc.freeze()
            thresholds = gc.get_threshold()
            gc.set_threshold(max(YOUNG_COLLECTION, thresholds[0]), *thresholds[1:])
            try:
                with closing_on_exit(feed, live):
                    yield
            finally:
                if checking is not None:
                    checking.cancel()
                gc.set_threshold(*thresholds)
                gc.unfreeze()
                if exporting and tracer_provider is not None:
                    tracer_provider.shutdown()  # sends the spans still in the batch

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        store: Store = request.app.state.store
        feed: Feed = request.app.state.feed
        check = checkup.readiness()
        if feed.unreachable is not None:
            body = {"status": "unavailable", "table": store.table, "feed": feed.unreachable, "check": check}
            return JSONResponse(body, status_code=503)
        if feed.down:
            body = {"status": "unavailable", "table": store.table, "feed": "restarting", "check": check}
            return JSONResponse(body, status_code=503)
        if await store.ping():
            return JSONResponse({"status": "ok", "table": store.table, "check": check})
        return JSONResponse({"status": "unavailable", "table": store.table, "check": check}, status_code=503)

    async def home(request: Request) -> Response:
        return RedirectResponse("/graphql")

    routes: list[BaseRoute] = [
        Route("/", home),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/graphql", graphql),
    ]
    subscriptions = WebSocketRoute("/graphql", live.websocket)
    routes.append(subscriptions)
    if settings.metrics:
        routes.append(Route("/metrics", observe.metrics))
    if endpoint.playground is not None:
        routes.append(Route(f"{ASSETS_PATH}/{{name}}", endpoint.playground.asset))
    return _Gateway(subscriptions, routes=routes, middleware=_cors(settings), lifespan=lifespan)


class _Gateway(Starlette):
    """The application, except that its WebSocket at /graphql is served without starlette's middleware and routing.

    A WebSocket's application runs for the connection's life, suspended down the whole stack: each layer (the error
    and exception middlewares, the router, the route, their exception wrappers and send closures) keeps a frame or a
    closure, 3.6 KiB a connection in all, and an idle subscriber is mostly its connection. None of them acts on this
    WebSocket: the error middleware and CORS pass WebSockets through, and the endpoint handles its own errors, never
    raising the HTTP or WebSocket exceptions that the exception middleware would turn into a close."""

    def __init__(self, subscriptions: WebSocketRoute, **options: Any) -> None:
        super().__init__(**options)
        self._subscriptions = subscriptions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            match, child_scope = self._subscriptions.matches(scope)
            if match is Match.FULL:
                scope["app"] = self
                scope.update(child_scope)
                await self._subscriptions.endpoint(WebSocket(scope, receive, send))
                return
        await super().__call__(scope, receive, send)


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
