"""The documentation site's hooks (mkdocs.yml): what mkdocs cannot say by configuration alone.

- The navigation lists the pages in reading order, leaving out any that is not (yet) in docs/.
- The home page is the README, its links made relative to docs/; the changelog page is CHANGELOG.md.
- The settings reference in cli.md is generated from ``Settings`` (``gateway.config.describe``), so it is complete.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from gateway.config import describe

ROOT = Path(__file__).resolve().parents[1]
SETTINGS_MARKER = "<!-- settings: generated from gateway/config.py -->"
NAV: list[tuple[str, str | list[tuple[str, str]]]] = [
    ("Home", "index.md"),
    ("Getting started", "getting-started.md"),
    ("Serving your own table", "own-table.md"),
    ("GraphQL conventions", "graphql.md"),
    ("Costs", "costs.md"),
    ("Writes", "writes.md"),
    ("Subscriptions", "subscriptions.md"),
    ("Security", "security.md"),
    ("Operations", "operations.md"),
    ("Benchmarks", "benchmarks.md"),
    ("Architecture", "architecture.md"),
    ("Command line and settings", "cli.md"),
    ("Changelog", "changelog.md"),
    (
        "Designs",
        [
            ("Declarations", "declarations.md"),
            ("Compiled designs", "compiled.md"),
            ("Online shop", "online-shop.md"),
            ("Fleet", "fleet.md"),
        ],
    ),
    (
        "Corpus: designs no one here wrote",
        [
            ("Battle Royale (AWS)", "corpus/battle-royale.md"),
            ("ElectroDB's task manager", "corpus/electrodb-task-manager.md"),
            ("GameScores (AWS)", "corpus/game-scores.md"),
            ("Instagram clone (Alex DeBrie)", "corpus/instagram.md"),
            ("Recurring payments (AWS)", "corpus/recurring-payments.md"),
            ("Shopify app sessions", "corpus/shopify-sessions.md"),
            ("Social network (AWS)", "corpus/social-network.md"),
            ("dynamodb-toolbox's PokeTable", "corpus/toolbox-pokedex.md"),
        ],
    ),
]


_GENERATED = ("index.md", "changelog.md")


def _present(docs: Path, page: str) -> bool:
    return page in _GENERATED or (docs / page).is_file()


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    docs = Path(config.docs_dir)
    nav: list[dict[str, Any]] = []
    for title, target in NAV:
        if isinstance(target, str):
            if _present(docs, target):
                nav.append({title: target})
            continue
        pages = [{name: page} for name, page in target if _present(docs, page)]
        if pages:
            nav.append({title: pages})
    config.nav = nav
    return config


def home_page(readme: str) -> str:
    """The README as the site's home page: its links into docs/ made relative to docs/, the changelog's to its page."""
    return re.sub(r"\]\(docs/", "](", readme).replace("](CHANGELOG.md", "](changelog.md")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, "index.md", content=home_page((ROOT / "README.md").read_text())))
    files.append(File.generated(config, "changelog.md", content=home_page((ROOT / "CHANGELOG.md").read_text())))
    return files


def settings_reference() -> str:
    """A table of every setting: its flag, its variable, its default and what it does."""
    rows = ["| flag | variable | default | what it does |", "|---|---|---|---|"]
    for setting in describe():
        flag = "--" + setting.name.replace("_", "-")
        default = "(none)" if setting.default in (None, "") else f"`{setting.default}`"
        doc = " ".join(setting.doc.replace("``", "`").split()).replace("|", "\\|")
        rows.append(f"| `{flag}` | `{setting.env}` | {default} | {doc} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return markdown.replace(SETTINGS_MARKER, settings_reference())
