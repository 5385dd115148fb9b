"""Maintenance: rebuild the counters of a table another tool wrote. Offline and explicit: the one Scan there is."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.design.declaration import WriteModel
from gateway.design.model import Entity
from gateway.dynamo.accounting import Ledger
from gateway.dynamo.requests import Refused
from gateway.dynamo.store import Store
from gateway.writes import building

Progress = Callable[[str, int, int], None]
"""Told (phase, done, total) as the work goes; ``total`` may be an estimate while scanning."""

CONCURRENT_WRITES = 16


@dataclass
class RecountReport:
    scanned: int = 0
    parents: int = 0
    corrected: int = 0
    """Parents whose counters were absent or wrong and were set."""
    changed_meanwhile: list[str] = field(default_factory=list)
    """Parents written by someone else while counting: left as they were; run the recount again."""


@dataclass
class _Parent:
    entity: Entity
    ids: dict[str, str]
    seen: dict[str, Any]
    counts: Counter[str] = field(default_factory=Counter)


async def recount(store: Store, declaration: WriteModel, progress: Progress) -> RecountReport:
    """Count every counted collection's members with one Scan, then set each parent's counters to the count.

    A counter is only set if it still holds what the Scan saw, so a write that raced the recount is not
    overwritten with a stale number; such parents are reported instead.
    """
    model = store.model
    ledger = Ledger()
    report = RecountReport()
    parents: dict[tuple[str, str], _Parent] = {}
    members: Counter[tuple[tuple[str, str], str]] = Counter()
    estimate = await store.estimated_item_count()
    async for page in store.scan_pages(ledger):
        members.update(building.member_counts(declaration, page))
        for item in page:
            found = model.recognise(item)
            counters = declaration.children_of(found[0]) if found else []
            if found and counters:
                seen = {counted.attribute: item.get(counted.attribute) for counted in counters}
                parents[building.model_key(model, *found)] = _Parent(*found, seen)
        report.scanned += len(page)
        progress("scanning", report.scanned, max(estimate, report.scanned))
    for (key, attribute), count in members.items():
        if key in parents:
            parents[key].counts[attribute] = count

    stale = [p for p in parents.values() if any(p.seen[a] != p.counts[a] for a in p.seen)]
    report.parents = len(parents)
    done = 0
    progress("writing", done, len(stale))
    limit = asyncio.Semaphore(CONCURRENT_WRITES)

    async def correct(parent: _Parent) -> None:
        nonlocal done
        counts = {attribute: parent.counts[attribute] for attribute in parent.seen}
        op = building.recount(model, parent.entity, parent.ids, counts, parent.seen)
        async with limit:
            try:
                await store.write([op], ledger)
                report.corrected += 1
            except Refused:
                report.changed_meanwhile.append(f"{parent.entity.name} {'/'.join(parent.ids.values())}")
        done += 1
        progress("writing", done, len(stale))

    await asyncio.gather(*(correct(parent) for parent in stale))
    return report
