"""Every word tfperf judges with and keeps: each verdict, status, cause, outcome and side is one
`Literal` type here, with a constant for each value and the tuple of its values, so that a
misspelt value is a type error, not a silent new state, from the worker to the store to the
dashboard. A value read back from outside the process (a row of the store, a kept file) goes
through `read`, which names it, where it was read and the valid values when it is none of them.

A word several vocabularies share has one constant (`UNDECIDED` is an A/B speed verdict, a cost
verdict and a bisection's outcome), so its spelling lives in one place. docs/glossary.md says
what each word means. Every string is the one kept files and the store already hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, TypeVar, get_args

# Words of more than one vocabulary.
SLOWER: Final = "slower"
FASTER: Final = "faster"
SAME: Final = "same"
UNDECIDED: Final = "undecided"
REGRESSION: Final = "regression"
SKIPPED: Final = "skipped"
OK: Final = "ok"

# An A/B speed verdict (tfperf.ab.verdict): B/A against the floor.
ABStatus = Literal["slower", "faster", "same", "undecided"]

# An A/B cost verdict (tfperf.ab.costs): compile time, time to the first step, peak memory.
CostStatus = Literal["higher", "lower", "same", "undecided"]
HIGHER: Final = "higher"
LOWER: Final = "lower"

# An A/B numerics verdict (tfperf.ab.numerics_check): within the precision's tolerance or not.
NumericsStatus = Literal["same", "differ"]
DIFFER: Final = "differ"

# What the history gate says of one figure (tfperf.gate.statistics). A status is one word; why
# it is so (a stale baseline, a history still building) is the verdict's reason, kept apart.
MetricStatus = Literal["ok", "flagged", "regression", "not confirmed", "faster",
                       "building history", "no history", "unstable"]
FLAGGED: Final = "flagged"
NOT_CONFIRMED: Final = "not confirmed"
BUILDING: Final = "building history"
NO_HISTORY: Final = "no history"
# Its runs spread too much for its floor: reported, not gated (only a gross change fails).
UNSTABLE: Final = "unstable"

# What the history gate says of a case (tfperf.gate.case_verdict): one of its figures'
# statuses, or one of the case as a whole.
CaseStatus = MetricStatus | Literal["waived", "throttled", "fingerprint differs"]
WAIVED: Final = "waived"
THROTTLED: Final = "throttled"
FINGERPRINT_DIFFERS: Final = "fingerprint differs"

# A kept run's verdict (session files, the store's runs): its case's status when the gate ran,
# "" for a run no gate judged (a baseline refresh's sessions).
RunVerdict = Literal[""] | CaseStatus
NOT_JUDGED: Final = ""
# Statuses kept with their reason glued on, each read as the status alone (its reason is kept
# apart): wherever a kept run's verdict enters the product (a file read, a row imported or
# loaded), so that none reaches the store or a reader in the old spelling.
OLD_STATUSES: dict[str, str] = {"faster: baseline stale": "faster"}


def current_status(kept: str) -> str:
    return OLD_STATUSES.get(kept, kept)

# Why a case failed (tfperf.ground.failures): the end-of-run table shows `FAILED (cause)`.
Cause = Literal[
    "crash",  # the worker died of a signal or exited without saying why
    "out_of_memory",
    "timeout",
    "compile_error",  # tracing or XLA compilation failed
    "non_finite_loss",
    "loss_not_falling",
    "error",  # the worker raised and reported it
    "configuration",  # it did not run as named: devices, replicas, XLA executed or not
    "not_steady",  # the step traced again during the measured rounds
    "not_sane",  # a measured time or rate of zero or less
    "regression",  # confirmed by the gate: throughput, scaling efficiency or peak memory
    "slower",  # an A/B comparison found side B slower than side A beyond its floor
    "costs_more",  # an A/B comparison found side B compiling longer or taking more memory
    "numerics_differ",  # an A/B comparison found side B training to other numbers
]
CRASH: Final = "crash"
OUT_OF_MEMORY: Final = "out_of_memory"
TIMEOUT: Final = "timeout"
COMPILE_ERROR: Final = "compile_error"
NON_FINITE_LOSS: Final = "non_finite_loss"
LOSS_NOT_FALLING: Final = "loss_not_falling"
ERROR: Final = "error"
CONFIGURATION: Final = "configuration"
NOT_STEADY: Final = "not_steady"
NOT_SANE: Final = "not_sane"
COSTS_MORE: Final = "costs_more"
NUMERICS_DIFFER: Final = "numerics_differ"

# An A/B case as the store's ab_cases.verdict keeps it (tfperf.ab.session_report.outcome): its
# speed verdict, `no pairs`, or `FAILED (cause)` where a failure other than `slower` ended it.
ABCaseOutcome = ABStatus | Literal[
    "no pairs", "FAILED (crash)", "FAILED (out_of_memory)", "FAILED (timeout)",
    "FAILED (compile_error)", "FAILED (non_finite_loss)", "FAILED (loss_not_falling)",
    "FAILED (error)", "FAILED (configuration)", "FAILED (not_steady)", "FAILED (not_sane)",
    "FAILED (regression)", "FAILED (slower)", "FAILED (costs_more)", "FAILED (numerics_differ)"]
NO_PAIRS: Final = "no pairs"

# How a bisection ended (tfperf.bisect.search); "" while it runs.
Outcome = Literal["", "found", "ends not apart", "undecided", "skipped", "out of time",
                  "end failed", "scanned"]
RUNNING: Final = ""
FOUND: Final = "found"  # neighbours: the culprit and the last good
NOT_APART: Final = "ends not apart"  # the bad end is not slower than the good one
# UNDECIDED: a step and its other half could not tell: the range it stopped at.
# SKIPPED: every candidate inside the range was skipped.
OUT_OF_TIME: Final = "out of time"  # the budget ran out: the range so far
END_FAILED: Final = "end failed"  # an end itself could not be built or measured
SCANNED: Final = "scanned"  # --each: every candidate against the one before it

# What a bisection step was for (tfperf.bisect.search).
Role = Literal["confirm", "bisect", "other half", "each"]
CONFIRM: Final = "confirm"
BISECT: Final = "bisect"
OTHER_HALF: Final = "other half"
EACH: Final = "each"

# What a bisection follows (tfperf.bisect.followed): the finding whose first build it places.
Followed = Literal["slower", "compile", "first-step", "memory", "host-memory", "numerics",
                   "configuration"]
FOLLOWS_CONFIGURATION: Final = "configuration"
# What a build with the finding is, for each finding: "slower since X", "the bad end is not
# larger in peak device memory than the good end".
FOLLOWED_WORDS: dict[Followed, str] = {
    "slower": "slower", "compile": "longer to compile",
    "first-step": "longer to its first step", "memory": "larger in peak device memory",
    "host-memory": "larger in peak host memory", "numerics": "different in its numerics",
    "configuration": "failing as configured"}

# Whether a candidate runs as its case is configured (a bisection of `configuration`).
ConfigurationStatus = Literal["fails", "runs"]
FAILS: Final = "fails"
RUNS: Final = "runs"

# A bisection step's verdict as its document keeps it: the followed figure's verdict (speed,
# a cost, numerics, configuration), or `skipped` where the candidate could not be measured.
StepVerdict = ABStatus | CostStatus | NumericsStatus | ConfigurationStatus | Literal["skipped"]
# The step verdicts that say the candidate has the followed finding, and those that say it has not.
WORSE_VERDICTS: frozenset[StepVerdict] = frozenset({SLOWER, HIGHER, DIFFER, FAILS})
NOT_WORSE_VERDICTS: frozenset[StepVerdict] = frozenset({SAME, FASTER, LOWER, RUNS})

# What the store's findings are (tfperf.storage.findings).
FindingKind = Literal["regression", "failure", "ab-slower", "culprit"]
FAILURE: Final = "failure"
AB_SLOWER: Final = "ab-slower"
CULPRIT: Final = "culprit"

# What happened to a case in one session, as a finding's streak reads it: it ran clean, or the
# cause it failed by (a confirmed regression's is `regression`).
State = Literal["ok"] | Cause

# The two sides of an A/B comparison, as the keys of what each side has.
SideName = Literal["A", "B"]
SIDE_A: Final = "A"  # the reference side B is compared with; a bisection step's good end
SIDE_B: Final = "B"  # under test; a bisection step's candidate


def _values(kind: Any) -> tuple[Any, ...]:
    """A Literal type's values, those of a union of Literals in order."""
    return tuple(value for arg in get_args(kind)
                 for value in ((arg,) if isinstance(arg, str) else _values(arg)))


T = TypeVar("T", bound=str)


@dataclass(frozen=True)
class Vocabulary(Generic[T]):
    """One vocabulary: what a person calls it, and its values."""

    name: str
    values: tuple[T, ...]
    _known: dict[str, T] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_known", {value: value for value in self.values})

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and text in self._known

    def get(self, text: object) -> T | None:
        return self._known.get(text) if isinstance(text, str) else None


AB_STATUSES: tuple[ABStatus, ...] = _values(ABStatus)
COST_STATUSES: tuple[CostStatus, ...] = _values(CostStatus)
NUMERICS_STATUSES: tuple[NumericsStatus, ...] = _values(NumericsStatus)
METRIC_STATUSES: tuple[MetricStatus, ...] = _values(MetricStatus)
CASE_STATUSES: tuple[CaseStatus, ...] = _values(CaseStatus)
RUN_VERDICTS: tuple[RunVerdict, ...] = _values(RunVerdict)
CAUSES: tuple[Cause, ...] = _values(Cause)
AB_CASE_OUTCOMES: tuple[ABCaseOutcome, ...] = _values(ABCaseOutcome)
OUTCOMES: tuple[Outcome, ...] = _values(Outcome)
ROLES: tuple[Role, ...] = _values(Role)
STEP_VERDICTS: tuple[StepVerdict, ...] = tuple(dict.fromkeys(_values(StepVerdict)))
FOLLOWED: tuple[Followed, ...] = _values(Followed)
FINDING_KINDS: tuple[FindingKind, ...] = _values(FindingKind)
STATES: tuple[State, ...] = _values(State)
SIDES: tuple[SideName, ...] = _values(SideName)
# The A/B case outcomes that say a failure ended the case: `FAILED (cause)`.
AB_CASE_FAILURES: frozenset[ABCaseOutcome] = frozenset(AB_CASE_OUTCOMES) - {*AB_STATUSES,
                                                                          NO_PAIRS}

AB_STATUS: Final = Vocabulary("A/B speed verdict", AB_STATUSES)
COST_STATUS: Final = Vocabulary("A/B cost verdict", COST_STATUSES)
NUMERICS_STATUS: Final = Vocabulary("A/B numerics verdict", NUMERICS_STATUSES)
METRIC_STATUS: Final = Vocabulary("gate status of a figure", METRIC_STATUSES)
CASE_STATUS: Final = Vocabulary("gate status of a case", CASE_STATUSES)
RUN_VERDICT: Final = Vocabulary("kept run's verdict", RUN_VERDICTS)
CAUSE: Final = Vocabulary("failure cause", CAUSES)
AB_CASE_OUTCOME: Final = Vocabulary("A/B case's stored verdict", AB_CASE_OUTCOMES)
OUTCOME: Final = Vocabulary("bisection outcome", OUTCOMES)
ROLE: Final = Vocabulary("bisection step role", ROLES)
STEP_VERDICT: Final = Vocabulary("bisection step verdict", STEP_VERDICTS)
FINDING_KIND: Final = Vocabulary("finding kind", FINDING_KINDS)
STATE: Final = Vocabulary("case's state in a session", STATES)
SIDE: Final = Vocabulary("A/B side", SIDES)
VOCABULARIES: tuple[Vocabulary[Any], ...] = (
    AB_STATUS, COST_STATUS, NUMERICS_STATUS, METRIC_STATUS, CASE_STATUS, RUN_VERDICT, CAUSE,
    AB_CASE_OUTCOME, OUTCOME, ROLE, STEP_VERDICT, FINDING_KIND, STATE, SIDE)


def failed(cause: Cause) -> ABCaseOutcome:
    """An A/B case's stored verdict where `cause` ended it: `FAILED (cause)`."""
    found = AB_CASE_OUTCOME.get(f"FAILED ({cause})")
    assert found is not None, cause
    return found


class UnknownValue(ValueError):
    """A value read from outside the process that is none of its vocabulary's: one line. The
    storage layer raises it as its StorageError (tfperf.storage.errors.known)."""


def read(kind: Vocabulary[T], text: object, where: str) -> T:
    """`text` as a value of `kind`; UnknownValue, one line naming it, where it was read and the
    valid values, if it is none of them."""
    found = kind.get(text)
    if found is None:
        raise UnknownValue(f"{where}: {text!r} is not a valid {kind.name}; valid: "
                           f"{', '.join(map(repr, kind.values))}")
    return found
