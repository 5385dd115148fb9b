"""What an HTTP client sees: health, GraphiQL, request ids, accounting on request, masked unexpected errors."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
import strawberry

from gateway.errors import BadUserInput
from gateway.surface.compiled import CompiledExecutor
from gateway.surface.extensions import Accounting, ErrorPolicy, GatewaySchema, Limits
from gateway.surface.kept import Kept, answerable
from tests.support.gateway import Gateway


def test_readiness_is_ok_when_the_table_answers(gateway: Gateway) -> None:
    response = gateway.http.get("/readyz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_readiness_is_503_when_the_table_is_missing(gateway_factory: Callable[..., Gateway]) -> None:
    with gateway_factory("no-such-table") as broken:
        response = broken.http.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"


def test_graphiql_is_served_to_browsers(gateway: Gateway) -> None:
    response = gateway.http.get("/graphql", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert "graphiql" in response.text.lower()
    home = gateway.http.get("/", follow_redirects=False)
    assert home.status_code in (302, 307)
    assert home.headers["location"] == "/graphql"


def test_accounting_is_reported_only_when_asked_for(gateway: Gateway) -> None:
    body = gateway.http.post("/graphql", json={"query": '{ workspace(workspaceId: "ws-main") { displayName } }'}).json()
    assert body["data"] == {"workspace": {"displayName": "Main"}}
    assert "dynamodb" not in body.get("extensions", {})


def test_a_request_id_is_returned_and_a_sane_one_is_kept(gateway: Gateway) -> None:
    query = {"query": "{ __typename }"}
    minted = gateway.http.post("/graphql", json=query).headers["x-request-id"]
    assert len(minted) == 32
    assert (
        gateway.http.post("/graphql", json=query, headers={"x-request-id": "abc-123"}).headers["x-request-id"]
        == "abc-123"
    )
    # Values the HTTP parser lets through but that do not belong in a log line are replaced by a minted id.
    for bad in ("bad id;<script>", "x" * 65):
        replaced = gateway.http.post("/graphql", json=query, headers={"x-request-id": bad}).headers["x-request-id"]
        assert replaced != bad and len(replaced) == 32


@strawberry.type
class _Broken:
    @strawberry.field
    def crash(self) -> int | None:
        raise RuntimeError("secret detail from deep inside")

    @strawberry.field
    def refuse(self) -> int | None:
        raise BadUserInput("no, thanks", argument="x")


@pytest.fixture
def broken(gateway_factory: Callable[..., Gateway], contract_table: str) -> Gateway:
    schema = GatewaySchema(
        query=_Broken, extensions=[ErrorPolicy, Limits, Accounting], execution_context_class=CompiledExecutor
    )
    assert answerable(schema, recorded=())
    return gateway_factory(contract_table, schema=schema)


def test_unexpected_errors_are_masked_and_logged_with_the_request_id(
    broken: Gateway, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twice: the document's first request goes through strawberry's extensions, the second is a kept document's
    query answered without them (``gateway/surface/kept.py``, spied); each masks and logs the same way."""
    kept: list[Kept] = []
    real = Kept.run

    async def spy(self: Kept) -> Any:
        kept.append(self)
        return await real(self)

    monkeypatch.setattr(Kept, "run", spy)
    with broken:
        for request in ("first", "kept"):
            caplog.clear()
            caplog.set_level(logging.ERROR)
            response = broken.http.post(
                "/graphql", json={"query": "{ crash refuse }"}, headers={"x-request-id": f"req-{request}"}
            )
            assert len(kept) == (request == "kept")
            body = response.json()
            assert response.status_code == 200
            crash, refuse = sorted(body["errors"], key=lambda e: e["path"])
            assert crash["message"] == "Internal error; quote the request id when reporting it."
            assert crash["extensions"] == {"code": "INTERNAL", "requestId": f"req-{request}"}
            assert "secret detail" not in response.text and "Traceback" not in response.text
            assert refuse["extensions"] == {"code": "BAD_USER_INPUT", "argument": "x"}
            assert refuse["message"] == "no, thanks"
            (logged,) = [record for record in caplog.records if record.name == "gateway.errors"]
            assert f"req-{request}" in logged.getMessage() and "secret detail from deep inside" in caplog.text
