"""The GraphQL examples of the README and the documentation pages, as tests and client checks read them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT

PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
# A GraphQL block of another design says so in a comment just above it: <!-- design: schema.orders:ORDERS -->.
_DESIGN = re.compile(r"<!-- design: ([\w.]+:\w+) -->\s*$")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    text: str
    design: str | None
    # The JSON block that shows its accounting, when the page shows one before the next GraphQL block.
    shown: str | None
    # "N calls in M rounds" in the prose that follows it, when the page says so.
    said: tuple[int, int] | None

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = page.read_text()
        fences = list(FENCE.finditer(text))
        for n, fence in enumerate(fences):
            if fence.group(1) != "graphql":
                continue
            before = text[: fence.start()].rstrip("\n").rsplit("\n", 1)[-1]
            design = match.group(1) if (match := _DESIGN.search(before)) else None
            later = fences[n + 1 :]
            upto = next((f for f in later if f.group(1) == "graphql"), None)
            shown = next(
                (f.group(2) for f in later if f.group(1) == "json" and (upto is None or f.start() < upto.start())), None
            )
            prose = text[fence.end() : fence.end() + 400].split("```")[0]
            said = re.search(r"(\d+) calls in (\d+) rounds", prose)
            found.append(
                Example(
                    page,
                    text.count("\n", 0, fence.start()) + 1,
                    fence.group(2),
                    design,
                    shown if shown and '"dynamodb"' in shown else None,
                    (int(said.group(1)), int(said.group(2))) if said else None,
                )
            )
    return found
