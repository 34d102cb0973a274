"""What the suite's test and the plugin ask of a session's runner, whichever it is: the
single-case runner (tfperf.measure.case_runner) or the A/B runner (tfperf.ab.ab_runner). Neither
caller branches on which one it holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest

from tfperf.cases.matrix import Case
from tfperf.ground.failures import CaseFailure
from tfperf.storage.results_store import ResultsStore


class Runner(Protocol):
    def run(self, case: Case, request: pytest.FixtureRequest) -> None:
        """Measure one case, keep it, and fail (CaseFailure) or skip as it deserves."""

    def keep_in(self, store: ResultsStore) -> None:
        """Before the first case: the results store each case is written to as it ends."""

    def watch(self, say: Callable[[str], None]) -> None:
        """Before the first case: where to say what a running case has so far."""

    def reported(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """After each test phase's report: what the runner adds to it or keeps."""

    def where_next(self, failure: CaseFailure) -> list[str]:
        """Where a person looks next for a case that failed with this answer: the files this
        runner kept of it (a session file, a profile, the reports)."""

    def finish(self, reports_dir: Path) -> None:
        """After the last case: keep what the session measured and write its reports."""

    def sections(self) -> list[tuple[str, list[str]]]:
        """The terminal summary's sections: a title and its lines each."""

    def machine_info(self) -> dict[str, Any] | None:
        """What pytest-benchmark's machine_info gets, if anything."""
