"""One bisection, from its candidates to its kept report: list the candidates, find the case the
pytest arguments select, run the search (each step an A/B session), write the report and keep it
in the results store. tfperf-bisect parses its arguments into a Request and prints what this
says; nothing of the bisection lives in the command."""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tfperf.bisect import candidates as candidate_lists
from tfperf.bisect import git_commits, report, search, step_sessions
from tfperf.bisect.candidates import BadRange, Candidate
from tfperf.bisect.levels import Level
from tfperf.bisect.step_sessions import StepSessions
from tfperf.ground.project import Project
from tfperf.ground.vocabulary import (
    FASTER,
    FOLLOWED_WORDS,
    LOWER,
    RUNS,
    SAME,
    SKIPPED,
    Followed,
)
from tfperf.storage import database, timestamps
from tfperf.storage.errors import StoreUnavailable
from tfperf.storage.results_store import BisectRow, ResultsStore

Kind = Literal["releases", "nightlies", "specs", "commits"]


@dataclass(frozen=True)
class Range:
    """Where the candidates come from: a package's releases or nightlies between two versions
    or dates, specs in order, or a workloads folder's commits."""

    kind: Kind
    package: str = ""
    span: str = ""  # LOW..HIGH, YYYY-MM-DD..YYYY-MM-DD or GOOD..BAD
    good: str | None = None
    bad: str | None = None
    beside: str | None = None
    specs: tuple[str, ...] = ()
    repo: Path | None = None
    folder: str = "workloads"
    tensorflow: str = "current"


@dataclass(frozen=True)
class Request:
    range: Range
    pytest_args: tuple[str, ...]
    tests: Path
    floor: float
    step_floor: float | None
    pairs: tuple[int, int]
    confirm_pairs: int
    each: bool
    budget_s: float | None
    step_timeout_s: float | None
    reports: Path | None  # default: the project's reports/bisect/<id>
    store_url: str | None
    followed: Followed = "slower"  # the finding to place (tfperf.bisect.followed)
    # The change point of the case's series that asked for it (tfperf.bisect.changes), kept in
    # the report so that the dashboard marks it on the series' plot: ChangePoint.document().
    change_point: Mapping[str, Any] | None = None


def candidates(given: Range) -> list[Candidate]:
    """The candidates in order, the good end first; BadRange, one line, if there are none."""
    if given.kind == "specs":
        return candidate_lists.specs(list(given.specs))
    if given.kind == "commits":
        assert given.repo is not None
        return git_commits.commits(given.repo, given.span, given.folder, given.tensorflow)
    name = candidate_lists.package(given.package)
    tensorflow = None
    if not candidate_lists.is_tensorflow(name.name):
        tensorflow = given.beside or candidate_lists.installed_tensorflow()
        candidate_lists.beside([], tensorflow)  # checked before the index is asked
    elif given.beside:
        raise BadRange(f"--beside: {name.name} is TensorFlow itself; --beside names the "
                       "TensorFlow that another package runs beside")
    listed = candidate_lists.index_versions(name.name)
    found = (candidate_lists.releases if given.kind == "releases"
             else candidate_lists.nightlies)(name, given.span, listed)
    if tensorflow is not None:
        found = candidate_lists.beside(found, tensorflow)
    ends = candidate_lists.specs([given.good or found[0].tensorflow,
                                  given.bad or found[-1].tensorflow])
    return [ends[0], *found[1:-1], ends[1]]


class BadRequest(Exception):
    """Candidates or a selection that cannot be bisected: one line, before any step."""


def run(request: Request, layout: Project, say: Callable[[str], None]) -> int:
    """Bisect and keep the report; the exit status (0: a culprit named or every candidate
    compared; 1: stopped without one). BadRequest before any step; Stopped where the
    confirmation ends it; StepError where a step cannot run at all."""
    return answered(request, layout, say)[0]


def answered(request: Request, layout: Project, say: Callable[[str], None]
             ) -> tuple[int, dict[str, Any]]:
    """run()'s exit status and the report's document."""
    if request.store_url:  # the steps' A/B sessions are kept where the report is: told through
        # the environment the steps inherit, never their command lines, which the step logs
        # keep (with the password); the steps' workers never see it (processes.runtime).
        os.environ[database.URL_ENV] = request.store_url
    bisect_id = datetime.datetime.now(datetime.UTC).strftime("bisect-%Y%m%dT%H%M%SZ") + \
        f"-{os.getpid()}"
    worktrees = layout.results / "cache" / "bisect-worktrees"
    try:
        found_candidates = candidates(request.range)

        def workloads_of(candidate: Candidate) -> Path | None:
            if candidate.commit is None:
                return None
            assert request.range.repo is not None
            try:
                return git_commits.checkout(request.range.repo.resolve(), candidate, worktrees)
            except BadRange as error:
                raise ValueError(str(error)) from None

        selection = step_sessions.select(layout.root, request.tests, request.pytest_args,
                                         workloads_of(found_candidates[-1]))
    except (BadRange, ValueError) as error:
        raise BadRequest(str(error)) from None
    say(f"tfperf-bisect {bisect_id}: {selection.case_id}, {len(found_candidates)} candidates "
        f"from {found_candidates[0].label} (good) to {found_candidates[-1].label} (bad), "
        f"following {request.followed}")
    logs = layout.results / "logs" / "bisect" / bisect_id
    runner = StepSessions(layout.root, layout.results, logs, selection, bisect_id, workloads_of,
                          request.step_timeout_s, request.pairs, request.followed)

    def judge(candidate: int, good: int, level: Level) -> search.Result:
        b, a = found_candidates[candidate], found_candidates[good]
        say(f"  step {runner.number + 1}: {b.label} against {a.label} (floor "
            f"{level.floor:.1%}, {level.confidence:.2%})")
        result = runner(b, a, level)
        if isinstance(result, search.Judged) and not result.pairs:
            say(f"    {result.verdict}: {result.note}, {result.seconds:.0f} s")
        elif isinstance(result, search.Judged):
            say(f"    {result.verdict}: B/A {result.ratio:.3f} [{result.low:.3f}, "
                f"{result.high:.3f}], {result.pairs} pairs, {result.seconds:.0f} s")
        else:
            say(f"    skipped: {result.reason}")
        return result

    if request.each:
        found = search.each(len(found_candidates), judge, request.step_floor or request.floor,
                            budget_s=request.budget_s, followed=request.followed)
    else:
        found = search.run(len(found_candidates), judge, request.floor, floor=request.step_floor,
                           confirm_pairs=request.confirm_pairs, budget_s=request.budget_s,
                           followed=request.followed)
    kind = "commits" if request.range.kind == "commits" else "tensorflow"
    doc = report.document(found, found_candidates, selection.case_id, kind, bisect_id,
                          runner.machine_key, request.floor)
    if request.change_point is not None:
        doc["change_point"] = dict(request.change_point)
    written = report.write(doc, request.reports or layout.reports / "bisect" / bisect_id)
    kept = keep(doc, request.store_url, layout.history)
    if found.outcome in (search.NOT_APART, search.END_FAILED):
        raise Stopped(stopped(doc), 1 if found.outcome == search.NOT_APART else 2)
    for line in [*report.table(doc), *written, kept]:
        say(line)
    return (0 if found.outcome in (search.FOUND, search.SCANNED) else 1), doc


class Stopped(Exception):
    """The confirmation stopped the bisection: why, in one line, and the exit status."""

    def __init__(self, why: str, status: int) -> None:
        super().__init__(why)
        self.status = status


def stopped(doc: dict[str, Any]) -> str:
    """Why the confirmation stopped the bisection, in one line."""
    step = doc["steps"][0]
    bad, good = (doc["candidates"][step[k]]["label"] for k in ("candidate", "against"))
    if step["verdict"] == SKIPPED:
        return f"the bad end {bad} cannot be measured: {step['reason']}"
    told = (f"B/A {step['ratio']:.3f} [{step['low']:.3f}, {step['high']:.3f}] over "
            f"{step['pairs']} pairs, floor {step['floor']:.1%}")
    worse = FOLLOWED_WORDS[doc.get("followed", "slower")]
    if step["verdict"] == FASTER:
        return (f"nothing to bisect: the good end {good} is not good, it is slower than the "
                f"bad end {bad} ({told})")
    if step["verdict"] in (SAME, RUNS, LOWER):
        said = f" ({told})" if step["verdict"] != RUNS else ""
        return (f"nothing to bisect: the bad end {bad} is not {worse} than the good end {good}"
                f"{said}; either the good end has the finding already or the bad end does not "
                "have it")
    return (f"nothing to bisect: the bad end {bad} against the good end {good} is undecided "
            f"({told}); give more --pairs")


def keep(doc: dict[str, Any], store_url: str | None, history: Path) -> str:
    """Keep the report in the results store if it can be reached: a line saying where."""
    url = database.chosen_url(store_url, history)
    try:
        store = ResultsStore.open(url)
    except StoreUnavailable as error:
        return f"not kept in the results store ({error}); the report's files are"
    try:
        culprit, good = doc["culprit"], doc["good"]
        labels = [str(c["label"]) for c in doc["candidates"]]
        store.add_bisect(BisectRow(
            str(doc["id"]), timestamps.utc(str(doc["when"])), str(doc["machine_key"]),
            str(doc["case_id"]), "commits" if doc["kind"] == "commits" else "tensorflow",
            doc["outcome"], labels[culprit] if isinstance(culprit, int) else None,
            labels[good] if doc["outcome"] == search.FOUND and isinstance(good, int) else None,
            doc))
    finally:
        store.close()
    return f"kept in the results store {store.where}"
