"""The demo ships as Python (schema/model.py) and as YAML (schema/demo.yaml): both serve the same API, the same way."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from graphql import parse

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.execution.cost import Budget, Planner
from gateway.server.cli import main
from gateway.server.declaration_file import SCHEMA_PATH, load_file, load_model
from gateway.surface.graph import build
from gateway.surface.toolkit import graphql_schema
from schema.demo import DEMO
from tests.support.paths import ROOT

DEMO_YAML = ROOT / "schema" / "demo.yaml"

CANONICAL = {
    "workspace and its projects": 'query { workspace(workspaceId: "ws-1") { displayName projects(first: 5)'
    " { nodes { title } } } }",
    "organization and its users": 'query { organization(orgName: "acme") { name users(first: 5) { nodes { name } } } }',
    "users' tickets": 'query { organization(orgName: "acme") { users(first: 3) { nodes { tickets(first: 2)'
    " { nodes { title } } } } } }",
    "a user's tickets": 'query { user(orgName: "acme", username: "u") { name tickets(first: 4) { nodes { title } } } }',
    "a student's courses": 'query { student(studentId: "s") { name courses(first: 3) { edges { grade node { title } } }'
    " } }",
    "a course's students": 'query { course(courseId: "c") { title students(first: 3) { edges { node { name } } } } }',
    "students by ids": 'query { students(studentIds: ["a", "b", "c"]) { name } }',
    "a project and its workspace": 'query { project(workspaceId: "w", projectId: "p") { title workspace'
    " { displayName } } }",
    "a ticket's user and tickets": 'query { ticket(ticketId: "t") { user { name tickets(first: 3)'
    " { nodes { title } } } } }",
}


@pytest.fixture(scope="module")
def from_yaml() -> Declaration:
    return load_file(DEMO_YAML)


def _plan(declaration: Declaration, query: str) -> dict[str, object]:
    schema = build(declaration).schema
    settings = Settings()
    planner = Planner(graphql_schema(schema), declaration.model, Budget.from_settings(settings))
    estimate = planner.check(parse(query), None, None, enforce=False)
    assert estimate is not None
    return estimate.explain(planner.budget)


def test_the_demo_file_validates_against_the_published_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(yaml.safe_load(DEMO_YAML.read_text()), schema)


def test_the_demo_file_exports_the_same_schema_as_the_python_declaration(from_yaml: Declaration) -> None:
    assert build(from_yaml).schema.as_str() == build(DEMO).schema.as_str()


def test_the_demo_file_declares_the_same_model_as_the_python_declaration(from_yaml: Declaration) -> None:
    assert [entity.name for entity in from_yaml.model.entities] == [entity.name for entity in DEMO.model.entities]
    for mine, theirs in zip(from_yaml.model.entities, DEMO.model.entities, strict=True):
        assert mine.keys == theirs.keys
        assert mine.declared == theirs.declared
    assert from_yaml.tenancy == DEMO.tenancy
    assert from_yaml.model.expires_attribute == DEMO.model.expires_attribute


@pytest.mark.parametrize("query", CANONICAL.values(), ids=CANONICAL.keys())
def test_the_demo_file_plans_each_canonical_query_as_the_python_declaration(from_yaml: Declaration, query: str) -> None:
    assert _plan(from_yaml, query) == _plan(DEMO, query)


def test_every_command_takes_a_file_as_its_model(tmp_path: Path) -> None:
    assert build(load_model(str(DEMO_YAML))).schema.as_str() == build(DEMO).schema.as_str()
    from_file, from_python = tmp_path / "file.graphql", tmp_path / "python.graphql"
    assert main(["export-schema", "--model", str(DEMO_YAML), "--output", str(from_file)]) == 0
    assert main(["export-schema", "--model", "schema.demo:DEMO", "--output", str(from_python)]) == 0
    assert from_file.read_text() == from_python.read_text()
