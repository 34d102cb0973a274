"""One measured case as the session keeps it and its summary table shows it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.cases.matrix import Case
from tfperf.gate.case_verdict import CaseGate
from tfperf.ground.failures import CaseFailure
from tfperf.ground.vocabulary import REGRESSION
from tfperf.storage import session_files


@dataclass
class CaseRecord:
    """What the summary table shows for one case."""

    case: Case
    extra_info: dict[str, Any] = field(default_factory=dict)
    gate: CaseGate | None = None
    run: session_files.Run | None = None  # kept in the session's history file
    failure: CaseFailure | None = None

    def where_next(self, history: Path, reports: Path) -> list[str]:
        """A confirmed regression's files: its re-run's profile, its run, the gate's reports."""
        if self.gate is None or self.failure is None or self.failure.cause != REGRESSION:
            return []
        profile = [f"the profile of the confirmed re-run: {self.gate.profile}"] \
            if self.gate.profile else []
        return [*profile, f"the case's run is kept in {history}; the gate's reports go to "
                f"{reports} when the session ends"]
