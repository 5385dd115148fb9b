"""The layers of ``gateway/`` hold: every import points down, no private name crosses a module, no library leaks up.

The tests keep a layout of their own: shared helpers in ``tests/support``, fixtures in ``tests/conftest.py``, and
no test file leaning on another.

The order (docs/architecture.md): the foundation (``errors``, ``config``), then ``design``, ``dynamo``,
``execution``, ``writes`` and ``live`` side by side, ``surface``, ``server``. Imports under ``TYPE_CHECKING`` count:
a type that must be named from above is a sign the code sits on the wrong floor.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "gateway"

FLOORS = {
    "errors": 0,
    "config": 0,
    "design": 1,
    "dynamo": 2,
    "execution": 3,
    "writes": 4,
    "live": 4,
    "surface": 5,
    "server": 6,
    "__init__": 7,
    "__main__": 7,
}

# Third-party roots each room may import; a library not listed here is one no room of ours may use.
EVERYWHERE = {"orjson"}
LIBRARIES = {
    "errors": set(),
    "config": set(),
    "design": set(),
    "dynamo": {"aioboto3", "aiobotocore", "botocore", "boto3", "httptools", "types_aiobotocore_dynamodb"},
    "execution": {"graphql", "cryptography", "aiodataloader"},
    "writes": set(),
    "live": {"redis"},
    "surface": {"graphql", "strawberry"},
    "server": {
        "graphql",
        "strawberry",
        "starlette",
        "uvicorn",
        "jwt",
        "prometheus_client",
        "opentelemetry",
        "websockets",
        "cryptography",
        "yaml",
    },
    "__init__": set(),
    "__main__": set(),
}

# Imports inside a function, each for a reason other than a circle: the command line loads a command's code only
# when that command runs, so `tablegraph --help` starts fast.
LAZY = {"server/cli.py"}


@dataclass(frozen=True)
class Import:
    module: str  # the file that imports, relative to gateway/
    target: str  # the imported module, absolute
    names: tuple[str, ...]
    in_function: bool
    line: int


def _room(relative: str) -> str:
    return relative.split("/", 1)[0].removesuffix(".py")


def _imports() -> Iterator[Import]:
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(), filename=str(path))
        yield from _visit(tree, relative, in_function=False)


def _visit(node: ast.AST, relative: str, in_function: bool) -> Iterator[Import]:
    for child in ast.iter_child_nodes(node):
        inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        if isinstance(child, ast.Import):
            for alias in child.names:
                yield Import(relative, alias.name, (), in_function, child.lineno)
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                raise AssertionError(f"gateway/{relative}:{child.lineno}: relative import; name the module in full")
            names = tuple(alias.name for alias in child.names)
            base = child.module or ""
            if base == "gateway":
                for name in names:
                    yield Import(relative, f"gateway.{name}", (), in_function, child.lineno)
            else:
                yield Import(relative, base, names, in_function, child.lineno)
        yield from _visit(child, relative, inner)


IMPORTS = list(_imports())
OURS = [i for i in IMPORTS if i.target.startswith("gateway.")]


def _target_room(target: str) -> str:
    return target.split(".")[1]


def test_every_file_of_the_package_is_in_a_room_with_a_floor() -> None:
    rooms = {_room(path.relative_to(PACKAGE).as_posix()) for path in PACKAGE.rglob("*.py")}
    assert rooms <= set(FLOORS), f"files outside the layers: {sorted(rooms - set(FLOORS))}"


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"gateway/{i.module}:{i.line} imports {i.target}"
        for i in OURS
        if _room(i.module) != _target_room(i.target) and FLOORS[_target_room(i.target)] >= FLOORS[_room(i.module)]
    ]
    assert upward == []


def test_the_design_layer_imports_nothing_of_ours_but_errors() -> None:
    found = [
        f"gateway/{i.module}:{i.line} imports {i.target}"
        for i in OURS
        if _room(i.module) == "design" and _target_room(i.target) not in {"design", "errors"}
    ]
    assert found == []


def test_third_party_libraries_stay_in_their_rooms() -> None:
    stdlib = __import__("sys").stdlib_module_names
    leaks = []
    for i in IMPORTS:
        root = i.target.split(".")[0]
        if root in {"gateway", "__future__"} or root in stdlib or root in EVERYWHERE:
            continue
        if root not in LIBRARIES[_room(i.module)]:
            leaks.append(f"gateway/{i.module}:{i.line} imports {i.target}")
    assert leaks == []


def test_no_private_name_crosses_a_module() -> None:
    crossing = [
        f"gateway/{i.module}:{i.line} takes {name} from {i.target}"
        for i in OURS
        for name in i.names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert crossing == []


def test_no_import_of_ours_hides_inside_a_function() -> None:
    hidden = [f"gateway/{i.module}:{i.line} imports {i.target}" for i in OURS if i.in_function]
    assert all(i.module in LAZY for i in OURS if i.in_function), hidden


def test_strawberry_private_attributes_are_read_in_one_place() -> None:
    """strawberry has no public way to the graphql-core schema or resolve info: ``surface/toolkit.py`` alone
    reaches for them, so a strawberry upgrade that renames them breaks one module."""
    users = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if re.search(r"\bschema\._schema\b|_raw_info", path.read_text())
    )
    assert users == ["surface/toolkit.py"]


def test_one_name_one_thing() -> None:
    """No public class or module constant is defined in two modules: a reader never wonders which one is meant."""
    defined: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            names: list[str] = []
            if isinstance(node, ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name) and t.id.isupper()]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id.isupper():
                names = [node.target.id]
            for name in names:
                if not name.startswith("_"):
                    defined.setdefault(name, []).append(path.relative_to(PACKAGE).as_posix())
    twice = {name: places for name, places in defined.items() if len(places) > 1}
    assert twice == {}


@pytest.mark.parametrize("room", sorted(r for r in FLOORS if r not in {"__init__", "__main__", "errors", "config"}))
def test_each_room_is_a_package(room: str) -> None:
    assert (PACKAGE / room / "__init__.py").is_file()


# --- the tests' own layout ---------------------------------------------------------------------------------------

TESTS = ROOT / "tests"
TEST_FILES = sorted(TESTS.rglob("test_*.py"))


def _fixtures(path: Path) -> set[str]:
    """The fixtures a file defines: functions decorated with ``pytest.fixture``, called or not."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if ast.unparse(target) in {"pytest.fixture", "fixture"}:
                    found.add(node.name)
    return found


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda path: path.relative_to(TESTS).as_posix())
def test_a_test_file_imports_no_other_test_module(path: Path) -> None:
    leaning = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            modules = [("." * node.level) + (node.module or "")]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        # The corpus keeps each design's data and its reference beside its tests (tests/corpus/<design>/).
        leaning += [
            m
            for m in modules
            if m.startswith(".") or (m.startswith("tests") and m.rpartition(".")[2].startswith("test_"))
        ]
    assert leaning == [], "a test shares code through support modules or a fixture, not by importing another test"


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda path: path.relative_to(TESTS).as_posix())
def test_a_test_file_defines_no_fixture_the_shared_ones_already_name(path: Path) -> None:
    shared = _fixtures(TESTS / "conftest.py").union(*(_fixtures(one) for one in (TESTS / "support").glob("*.py")))
    assert _fixtures(path) & shared == set()


def test_the_layout_checks_see_the_tests_and_the_shared_fixtures() -> None:
    assert len(TEST_FILES) > 40
    assert {"endpoint", "dynamodb", "gateway_factory", "served"} <= _fixtures(TESTS / "conftest.py")
