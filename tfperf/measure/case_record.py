"""One measured case as the session keeps it and its summary table shows it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfperf.cases.matrix import Case
from tfperf.gate import history
from tfperf.gate.case_verdict import CaseGate
from tfperf.ground.failures import CaseFailure


@dataclass
class CaseRecord:
    """What the summary table shows for one case."""

    case: Case
    extra_info: dict[str, Any] = field(default_factory=dict)
    gate: CaseGate | None = None
    run: history.Run | None = None  # kept in the session's history file
    failure: CaseFailure | None = None
