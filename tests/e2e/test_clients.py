"""The schema as TypeScript clients meet it: graphql-codegen + `tsc --strict` on the docs' operations, and
Apollo Client's normalising cache (possibleTypes from `export-schema`, Relay pagination) against live gateways."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from graphql import get_introspection_query

from gateway.server.cli import main
from schema import DEMO
from tests.support.contract import PROJECTS, project_id
from tests.support.docs import examples
from tests.support.gateway import Gateway
from tests.support.paths import ROOT

CLIENTS = ROOT / "tests" / "clients"
MODULES = ROOT / "node_modules"
PACKAGES = (
    "@graphql-codegen/cli",
    "@graphql-codegen/typescript",
    "@graphql-codegen/typescript-operations",
    "@graphql-codegen/typed-document-node",
    "@apollo/client",
    "typescript",
)


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    missing = [package for package in PACKAGES if not (MODULES / package / "package.json").is_file()]
    if found and not missing:
        return found
    what = "Node.js" if not found else ", ".join(missing)
    if not os.environ.get("CI"):
        pytest.skip(f"{what} is not installed (scripts/setup dev installs the devDependencies)")
    pytest.fail(f"{what} is not installed (scripts/setup dev installs the devDependencies)")


def _run(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120, **options)


def test_codegen_types_the_readme_operations_and_tsc_strict_accepts_them(node: str, tmp_path: Path) -> None:
    generated = tmp_path / "generated.ts"
    schema_types = tmp_path / "schema-types.ts"
    done = _run(
        [node, str(MODULES / "@graphql-codegen" / "cli" / "esm" / "bin.js"), "--config", str(CLIENTS / "codegen.js")],
        cwd=ROOT,
        env={
            **os.environ,
            "TABLEGRAPH_CODEGEN_OUT": str(generated),
            "TABLEGRAPH_CODEGEN_SCHEMA_OUT": str(schema_types),
        },
    )
    assert done.returncode == 0, done.stdout + done.stderr
    types = generated.read_text()
    for name in ("OrganizationUsersTicketsDocument", "NodeByIdDocument", "UpdateWorkspaceDocument"):
        assert f"export const {name} = " in types
    shutil.copy(CLIENTS / "use.ts", tmp_path / "use.ts")
    config = {
        "compilerOptions": {
            "strict": True,
            "noEmit": True,
            "target": "ES2022",
            "module": "commonjs",
            "moduleResolution": "node",
            "skipLibCheck": True,
            "noUnusedLocals": True,
            "baseUrl": str(tmp_path),
            "paths": {"*": [str(MODULES / "*")]},
            "typeRoots": [str(MODULES / "@types")],
            "types": [],
        },
        "files": ["use.ts", "generated.ts", "schema-types.ts"],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    done = _run([node, str(MODULES / "typescript" / "bin" / "tsc"), "--strict", "--noEmit", "-p", str(tmp_path)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""


def test_apollo_client_merges_pages_normalises_every_entity_and_applies_a_mutation(
    node: str,
    gateway_factory: Callable[..., Gateway],
    contract_table: str,
    fresh_table: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    matcher = tmp_path / "possible-types.json"
    assert main(["export-schema", "--possible-types", str(matcher)]) == 0
    capsys.readouterr()
    assert "Workspace" in json.loads(matcher.read_text())["possibleTypes"]["WorkspaceResult"]
    with gateway_factory(contract_table) as read, gateway_factory(fresh_table) as write:
        created = write.query(
            'mutation { createWorkspace(input: {workspaceId: "ws-apollo", displayName: "Before"}) '
            "{ __typename ... on Workspace { version } } }"
        )["data"]["createWorkspace"]
        assert created["__typename"] == "Workspace", created
        done = _run([node, str(CLIENTS / "apollo.js"), read.url, write.url, str(matcher), "ws-apollo"], cwd=ROOT)
        assert done.returncode == 0, done.stderr
        seen: dict[str, Any] = json.loads(done.stdout)
        stored = write.query('{ workspace(workspaceId: "ws-apollo") { displayName version } }')["data"]["workspace"]

    # Pagination: the second page appended to the first, nothing lost, nothing repeated, its pageInfo kept.
    newest = [project_id(n) for n in range(PROJECTS, 0, -1)]
    assert seen["page1"] == newest[:4]
    assert seen["page2"] == newest[4:8]
    assert seen["merged"] == newest[:8]
    assert seen["mergedHasNextPage"] is True
    assert seen["mergedEndCursor"] == seen["page2EndCursor"]
    assert seen["backMerged"] == newest[-8:]
    assert seen["backHasPreviousPage"] is True
    assert seen["totalCount"] is None  # the contract data is written by boto3: no projectCount until a recount

    # Normalisation: every entity a record of its own under `Type:<global id>`, referenced, never embedded.
    assert seen["embedded"] == []
    entities = {key: record for key, record in seen["records"].items() if not key.startswith("ROOT_")}
    assert set(seen["keys"]) - set(entities) == {"ROOT_QUERY"}
    for key, record in entities.items():
        assert key == f"{record['__typename']}:{record['id']}"
    kinds = {record["__typename"] for record in entities.values()}
    assert {"Workspace", "Project", "Organization", "User", "Ticket"} <= kinds
    assert sum(record["__typename"] == "Project" for record in entities.values()) == 8
    assert seen["nodeTypename"] == "User"
    assert seen["workspaceNode"]["displayName"] == "Main"
    assert seen["readRequests"] == ["Projects", "Projects", "Organization", "Node", "Node"]  # watchQuery: cached

    # The mutation: its result updated the cached Workspace (and the watching query) with no refetch.
    assert seen["before"]["displayName"] == "Before"
    assert seen["mutation"]["__typename"] == "Workspace", seen["mutation"]
    assert seen["after"]["displayName"] == "Renamed by Apollo"
    assert seen["after"]["version"] == seen["before"]["version"] + 1 == stored["version"]
    assert seen["watched"][-1] == "Renamed by Apollo"
    assert seen["writeRequests"] == ["Workspace", "UpdateWorkspace"]
    assert stored["displayName"] == "Renamed by Apollo"


def _client(node: str, script: str, gateway: Gateway, files: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """Runs a client script on the gateway with ``files`` written as JSON, in the order given, as its arguments."""
    paths = []
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content))
        paths.append(str(tmp_path / name))
    done = subprocess.run(
        [node, str(CLIENTS / script), gateway.url, *paths],
        cwd=ROOT,
        env={**os.environ, "NODE_ENV": "development"},  # both clients warn only outside production
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def _introspection(gateway: Gateway) -> dict[str, Any]:
    answer: dict[str, Any] = gateway.http.post("/graphql", json={"query": get_introspection_query()}).json()["data"]
    return answer


def _graphcache(node: str, gateway: Gateway, operations: list[str], tmp_path: Path) -> dict[str, Any]:
    files = {"schema.json": _introspection(gateway), "operations.json": operations}
    return _client(node, "graphcache.js", gateway, files, tmp_path)


def _docs_queries() -> list[str]:
    """The demo's query operations in the README and docs/, as a frontend would copy them."""
    queries = [
        example.text
        for example in examples()
        if example.design is None and not example.text.lstrip().startswith(("mutation", "subscription"))
    ]
    assert queries
    return queries


def test_urql_graphcache_keys_every_entity_of_the_docs_queries(
    node: str, served: Callable[..., Gateway], tmp_path: Path
) -> None:
    if not (MODULES / "@urql" / "exchange-graphcache" / "package.json").is_file():
        pytest.fail("@urql/exchange-graphcache is not installed: scripts/setup dev")
    demo = served(DEMO, seeded=True)
    seen = _graphcache(node, demo, _docs_queries(), tmp_path)
    assert seen["warnings"] == []
    for answer in seen["answers"]:
        assert answer["error"] is None
        assert answer["fetched"] is not None and answer["cached"] == answer["fetched"]


def test_urql_graphcache_warns_about_an_entity_read_without_its_id(
    node: str, served: Callable[..., Gateway], tmp_path: Path
) -> None:
    # The check above is not vacuous: the same client, given an organization without `id`, says so.
    demo = served(DEMO, seeded=True)
    seen = _graphcache(node, demo, ['{ organization(orgName: "acme") { name } }'], tmp_path)
    assert len(seen["warnings"]) == 1 and "Organization" in seen["warnings"][0]


def _apollo_cache(
    node: str,
    gateway: Gateway,
    operations: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    connection_policies: bool = False,
) -> dict[str, Any]:
    matcher = tmp_path / "possible-types.json"
    assert main(["export-schema", "--possible-types", str(matcher)]) == 0
    capsys.readouterr()
    files = {"possible-types.json": json.loads(matcher.read_text()), "operations.json": operations}
    if connection_policies:
        files["introspection.json"] = _introspection(gateway)
    return _client(node, "apollo-cache.js", gateway, files, tmp_path)


@pytest.mark.parametrize("connection_policies", [False, True], ids=["plain-cache", "relay-pagination-policies"])
def test_apollo_client_caches_every_docs_query_without_a_warning(
    node: str,
    served: Callable[..., Gateway],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    connection_policies: bool,
) -> None:
    # Both as a new InMemoryCache comes and with the connection policy docs/graphql.md gives Apollo users.
    demo = served(DEMO, seeded=True)
    seen = _apollo_cache(node, demo, _docs_queries(), tmp_path, capsys, connection_policies)
    assert seen["messages"] == []
    assert len(seen["answers"]) == len(_docs_queries())
    for answer in seen["answers"]:
        assert answer["errors"] == []
        assert answer["fetched"] is not None and answer["cached"] == answer["fetched"]


def test_apollo_client_warns_when_an_entity_without_id_is_replaced_under_its_parent(
    node: str, served: Callable[..., Gateway], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The check above is not vacuous: an organization read without `id` is stored inside the root's field, and the
    # next read of that field with other fields replaces it; the same client says data may be lost.
    demo = served(DEMO, seeded=True)
    operations = [
        '{ organization(orgName: "acme") { name } }',
        '{ organization(orgName: "acme") { subscriptionLevel } }',
    ]
    seen = _apollo_cache(node, demo, operations, tmp_path, capsys)
    assert len(seen["messages"]) == 1, seen["messages"]
    assert "Cache data may be lost when replacing the organization field of a Query object" in seen["messages"][0]
    assert "Organization" in seen["messages"][0]


def test_apollo_client_keeps_a_connection_read_both_ways_apart_under_the_documented_policy(
    node: str, served: Callable[..., Gateway], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `order` chooses which list is read: under relayStylePagination keyed by it (docs/graphql.md), the ascending
    # page is still in the cache, as served, after the descending page of the same field was written.
    demo = served(DEMO, seeded=True)
    page = "{ id projects(first: 2%s) { edges { cursor node { id projectId } } pageInfo { hasNextPage endCursor } } }"
    operations = [
        '{ workspace(workspaceId: "ws-1") ' + page % ", order: ASCENDING" + " }",
        '{ workspace(workspaceId: "ws-1") ' + page % "" + " }",
    ]
    seen = _apollo_cache(node, demo, operations, tmp_path, capsys, connection_policies=True)
    assert seen["messages"] == []
    ascending, descending = (answer["fetched"] for answer in seen["answers"])
    assert ascending["workspace"]["projects"]["edges"] != descending["workspace"]["projects"]["edges"]
    assert seen["reread"] == [ascending, descending]
