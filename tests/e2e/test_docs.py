"""The README and the documentation pages say what is true: their GraphQL examples run on the demo with the answers
and the accounting they show, every operation selects `id` on the entities it reads (so normalising caches key
them), their links lead somewhere, and the README stays a front door."""

from __future__ import annotations

import json
import re
import stat
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from graphql import (
    DocumentNode,
    FieldNode,
    GraphQLSchema,
    InlineFragmentNode,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    build_schema,
    get_named_type,
    is_interface_type,
    is_object_type,
    is_union_type,
    parse,
    validate,
    visit,
)

from schema import DEMO, SCHEMA
from tests.support.docs import FENCE, PAGES, Example, examples
from tests.support.gateway import Gateway
from tests.support.paths import ROOT

README_MAX_LINES = 250
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


EXAMPLES = examples()
DEMO_SDL = build_schema(SCHEMA.as_str())


def _schema_of(example: Example) -> GraphQLSchema:
    if example.design is None:
        return DEMO_SDL
    from gateway.design.declaration import load
    from gateway.surface.graph import build

    return build_schema(build(load(example.design)).schema.as_str())


def _fields(node: FieldNode | InlineFragmentNode) -> set[str]:
    selections = node.selection_set.selections if node.selection_set else ()
    return {selection.name.value for selection in selections if isinstance(selection, FieldNode)}


def _entities_without_id(schema: GraphQLSchema, document: DocumentNode) -> list[str]:
    """Every field returning an object or interface with an `id` whose selection leaves `id` out, and every
    fragment on such a type inside a union's selection."""
    info = TypeInfo(schema)
    missing: list[str] = []

    class Check(Visitor):
        def enter_field(self, node: FieldNode, *_: object) -> None:
            named = get_named_type(info.get_type())
            if node.selection_set is not None and is_union_type(named):
                for fragment in node.selection_set.selections:
                    if isinstance(fragment, InlineFragmentNode) and fragment.type_condition is not None:
                        member = schema.get_type(fragment.type_condition.name.value)
                        if is_object_type(member) and "id" in member.fields and "id" not in _fields(fragment):
                            missing.append(f"{node.name.value}: {member}")
            if node.selection_set is None or not (is_object_type(named) or is_interface_type(named)):
                return
            if "id" not in named.fields:
                return
            if "id" not in _fields(node):
                missing.append(f"{node.name.value}: {named}")

    visit(document, TypeInfoVisitor(info, Check()))
    return missing


def test_the_docs_have_graphql_examples() -> None:
    assert {example.page.name for example in EXAMPLES} >= {"README.md", "getting-started.md", "writes.md"}


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_every_operation_is_valid_and_selects_id_on_entities(example: Example) -> None:
    schema = _schema_of(example)
    document = parse(example.text)
    assert validate(schema, document) == []
    assert _entities_without_id(schema, document) == []


@pytest.fixture(scope="module")
def demo(served: Callable[..., Gateway]) -> Gateway:
    return served(DEMO, seeded=True)


@pytest.mark.parametrize(
    "example",
    [e for e in EXAMPLES if e.design is None and not e.text.lstrip().startswith(("mutation", "subscription"))],
    ids=str,
)
def test_every_query_answers_on_the_demo_with_the_accounting_shown(example: Example, demo: Gateway) -> None:
    body = demo.query(example.text)
    assert "errors" not in body, body["errors"]
    assert all(value is not None for value in body["data"].values())
    accounted = body["extensions"]["dynamodb"]
    if example.shown is not None:
        shown = json.loads("{" + example.shown.strip() + "}")["extensions"]["dynamodb"]
        assert {key: accounted[key] for key in shown} == shown
    if example.said is not None:
        assert (accounted["calls"], accounted["rounds"]) == example.said


def test_inline_node_examples_read_their_object_back(demo: Gateway) -> None:
    inline = [snippet for page in PAGES for snippet in re.findall(r"`(node\(id: \"[^`]*)`", page.read_text())]
    assert inline
    for snippet in inline:
        document = "{ " + snippet + " }"
        assert _entities_without_id(DEMO_SDL, parse(document)) == []
        body = demo.query(document)
        assert "errors" not in body and body["data"]["node"] is not None, (snippet, body)


def _slug(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown's toc) gives a heading."""
    text = re.sub(r"[`*]", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {_slug(line.lstrip("#").strip()) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_internal_link_leads_to_a_file_and_its_heading(page: Path) -> None:
    broken = []
    for target in _LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists() or (anchor and destination.suffix == ".md" and anchor not in _anchors(destination)):
            broken.append(target)
    assert broken == []


def test_the_readme_is_a_front_door_whose_commands_are_the_ones_ci_and_the_scripts_use() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    commands = [block.strip() for kind, block in FENCE.findall(readme) if kind == "sh"]
    assert commands == ["scripts/run", "scripts/test"]
    for command in commands:
        assert (ROOT / command).stat().st_mode & stat.S_IXUSR
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert any(line.startswith("scripts/test") for line in ci)
    # scripts/run and scripts/test both prepare the checkout the way CI does.
    for command in commands:
        assert "scripts/setup" in (ROOT / command).read_text()
