"""The check ``serve`` runs in the background after start-up: a sample of the table held against the declaration."""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import Gauge

from gateway.config import Settings
from gateway.design.declaration import Declaration
from gateway.dynamo.sampling import sample_table
from gateway.errors import GatewayError
from gateway.writes.check import Report, check_sample

log = logging.getLogger("tablegraph.check")

CHECK_FINDINGS = Gauge(
    "tablegraph_check_findings",
    "What the start-up check of a sample of the table found disagreeing with the declaration, by kind: items, or "
    "mismatches of the table's description",
    ["kind"],
)


class StartupCheck:
    """The background check's state, for ``/readyz``: off, running, done or failed, and what it found."""

    def __init__(self, settings: Settings, declaration: Declaration) -> None:
        self._settings = settings
        self._declaration = declaration
        self.table = settings.table or declaration.model.table
        self.state = "off" if settings.check_sample == 0 else "running"
        self.report: Report | None = None
        self.error: str | None = None

    async def run(self) -> None:
        """Read the sample, check it, and say what was found in the log and the metric."""
        try:
            sample = await sample_table(self._settings, self.table, self._settings.check_sample, _unseen)
        except GatewayError as error:
            self.state, self.error = "failed", str(error)
            log.warning("the start-up check of table %s could not read it: %s", self.table, error)
            return
        report = check_sample(sample.description, sample.items, self._declaration.writes, self.table, sample.complete)
        for kind, count in report.kinds().items():
            CHECK_FINDINGS.labels(kind).set(count)
        self.report, self.state = report, "done"
        if not report.findings:
            log.info("table %s: %d items sampled, no mismatch with the declaration", self.table, report.scanned)
        for one in report.findings:
            example = f"; e.g. {one.examples[0]['key']}" if one.examples else ""
            log.warning(
                "table %s: %s %s: %s (%d of %d sampled); fix: %s%s",
                self.table,
                one.kind,
                one.subject,
                one.problem,
                one.count,
                report.scanned,
                one.fix,
                example,
            )

    def readiness(self) -> dict[str, Any]:
        """What ``/readyz`` says of it; findings never make the gateway unready."""
        out: dict[str, Any] = {"state": self.state}
        if self.report is not None:
            out |= {
                "sampled": self.report.scanned,
                "clean": not self.report.errors,
                "findings": dict(sorted(self.report.kinds().items())),
            }
        if self.error is not None:
            out["error"] = self.error
        return out


def _unseen(done: int, total: int) -> None:
    """No progress bar in the background."""
