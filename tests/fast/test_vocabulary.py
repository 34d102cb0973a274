"""Every verdict vocabulary is one typed set (tfperf/ground/vocabulary.py), and a value read back
from the store or a kept file that is none of its vocabulary's stops the reader in one line that
names the value, where it was read and the valid values. Every store is a real SQLite file."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest
import sqlalchemy as sa

from tests.helpers import gate_runs
from tfperf.ab import costs, numerics_check, session_file, verdict
from tfperf.bisect import followed, search
from tfperf.dashboard import site_data
from tfperf.gate import case_verdict, statistics
from tfperf.ground import failures, vocabulary
from tfperf.ground.vocabulary import Vocabulary
from tfperf.storage import findings, formats, stored_runs, tables
from tfperf.storage.errors import StorageError, known
from tfperf.storage.results_store import ResultsStore
from tfperf.storage.session_files import read_session

WHEN = datetime.datetime(2026, 12, 1, 2, 0, tzinfo=datetime.UTC)


def test_every_vocabulary_lists_each_value_once_under_a_name_of_its_own() -> None:
    names = [kind.name for kind in vocabulary.VOCABULARIES]
    assert len(names) == len(set(names))
    for kind in vocabulary.VOCABULARIES:
        assert kind.values and len(kind.values) == len(set(kind.values)), kind.name
        assert all(value in kind for value in kind.values)
    # A case's status is a figure's or one of the case's own; a run's, a case's or none.
    assert set(vocabulary.CASE_STATUSES) > set(vocabulary.METRIC_STATUSES)
    assert set(vocabulary.RUN_VERDICTS) == {*vocabulary.CASE_STATUSES, ""}
    # A bisection step's is the followed figure's verdict (speed, a cost, numerics,
    # configuration) or skipped; the search reads each as worse, not worse or undecided.
    assert set(vocabulary.STEP_VERDICTS) == {
        *vocabulary.AB_STATUSES, *vocabulary.COST_STATUSES, *vocabulary.NUMERICS_STATUSES,
        "fails", "runs", "skipped"}
    assert {v: followed.worse(v) for v in vocabulary.STEP_VERDICTS if v != "skipped"} == {
        "slower": True, "higher": True, "differ": True, "fails": True, "same": False,
        "faster": False, "lower": False, "runs": False, "undecided": None}
    assert set(vocabulary.STATES) == {"ok", *vocabulary.CAUSES}


def test_a_word_several_vocabularies_share_is_one_constant() -> None:
    assert {vocabulary.UNDECIDED} <= set(vocabulary.AB_STATUSES) & set(
        vocabulary.COST_STATUSES) & set(vocabulary.OUTCOMES)
    assert {vocabulary.REGRESSION} <= set(vocabulary.METRIC_STATUSES) & set(
        vocabulary.CAUSES) & set(vocabulary.FINDING_KINDS)
    assert {vocabulary.SAME} <= set(vocabulary.AB_STATUSES) & set(
        vocabulary.COST_STATUSES) & set(vocabulary.NUMERICS_STATUSES)
    assert vocabulary.FASTER in vocabulary.AB_STATUSES and vocabulary.FASTER in \
        vocabulary.METRIC_STATUSES
    # Their old homes name the same values: one spelling each.
    assert (verdict.SLOWER, verdict.UNDECIDED, costs.HIGHER, numerics_check.DIFFER,
            statistics.BUILDING, case_verdict.THROTTLED, search.FOUND, search.OTHER_HALF) == (
        "slower", "undecided", "higher", "differ", "building history", "throttled", "found",
        "other half")
    assert failures.CAUSES == vocabulary.CAUSES == get_args(vocabulary.Cause)
    assert findings.KINDS == vocabulary.FINDING_KINDS and vocabulary.SIDES == ("A", "B")


def test_an_a_b_case_s_stored_verdict_is_its_speed_verdict_no_pairs_or_failed_by_a_cause() -> None:
    failed = tuple(f"FAILED ({cause})" for cause in vocabulary.CAUSES)
    assert (*vocabulary.AB_STATUSES, "no pairs", *failed) == vocabulary.AB_CASE_OUTCOMES
    assert tuple(vocabulary.failed(cause) for cause in vocabulary.CAUSES) == failed
    assert set(failed) == vocabulary.AB_CASE_FAILURES


@pytest.mark.parametrize("kind", vocabulary.VOCABULARIES, ids=lambda kind: kind.name)
def test_a_value_none_of_its_vocabulary_s_is_one_line_naming_it_and_the_valid_ones(
        kind: Vocabulary[Any]) -> None:
    for value in kind.values:
        assert vocabulary.read(kind, value, "here") == value
    for wrong in ("Slower", "fastr", None, 3):
        with pytest.raises(vocabulary.UnknownValue) as raised:
            vocabulary.read(kind, wrong, "kept.json: case c")
        said = str(raised.value)
        assert "\n" not in said and said == (f"kept.json: case c: {wrong!r} is not a valid "
                                             f"{kind.name}; valid: {', '.join(map(repr, kind.values))}")
    with pytest.raises(StorageError, match=r"^the store: 'fastr' is not a valid "):
        known(kind, "fastr", "the store")


def _store(tmp_path: Path) -> ResultsStore:
    store = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    with store.engine.begin() as connection:
        for id_, kind in (("n1", "measured"), ("ab1", "ab")):
            connection.execute(tables.sessions.insert().values(
                id=id_, kind=kind, tier="nightly", machine_key="k", commit="", started=WHEN,
                source="session"))
    return store


def _insert(store: ResultsStore, table: sa.Table, **values: Any) -> None:
    with store.engine.begin() as connection:
        connection.execute(table.insert().values(**values))


def _run(store: ResultsStore, verdict: str) -> None:
    document = {**gate_runs.run(1000.0, 1).to_json(), "session": "n1", "verdict": verdict}
    _insert(store, tables.runs, session_id="n1", case_id=gate_runs.CASE, machine_key="k",
            when=WHEN, tensorflow="2.21.0", git_hash="", examples_per_sec=1000.0,
            verdict=verdict, document=document)


def _failure(store: ResultsStore, cause: str) -> None:
    _insert(store, tables.failures, session_id="n1", machine_key="k", case_id="c", when=WHEN,
            cause=cause, phase="call", message="m", log_path="", log_tail="")


def _ab_case(store: ResultsStore, said: str) -> None:
    _insert(store, tables.ab_cases, session_id="ab1", case_id="c", when=WHEN, verdict=said,
            ratio=0.9, low=0.88, high=0.92, pairs=64, document={})


def _bisect(store: ResultsStore, outcome: str, step: str = "slower", role: str = "confirm"
            ) -> None:
    _insert(store, tables.bisects, id="b1", when=WHEN, machine_key="k", case_id="c",
            kind="tensorflow", outcome=outcome, culprit=None, last_good=None,
            document={"steps": [{"role": role, "verdict": step}]})


Reader = Callable[[ResultsStore], object]
READS: dict[str, Reader] = {
    "findings": lambda store: findings.read(store.engine),
    "dashboard": site_data.read,
    "history": lambda store: stored_runs.StoredRuns(store, "k").all(),
    "failures": lambda store: store.failures(),
    "A/B cases": lambda store: store.ab_cases(),
    "bisections": lambda store: store.bisects(),
}
# What each stored row is written with, which reader reads it back, and what it must say.
WRONG: list[tuple[Callable[[ResultsStore], None], str, str]] = [
    (lambda store: _run(store, "pass"), "findings", "runs.verdict of session n1, case "),
    (lambda store: _run(store, "pass"), "dashboard", "runs.verdict of session n1, case "),
    (lambda store: _run(store, "pass"), "history", "run of resnet20-"),
    (lambda store: _failure(store, "segfault"), "failures", "failures.cause of session n1, case c"),
    (lambda store: _failure(store, "segfault"), "findings", "failures.cause of session n1, case c"),
    (lambda store: _failure(store, "segfault"), "dashboard", "failures.cause of session n1, case c"),
    (lambda store: _ab_case(store, "slow"), "A/B cases", "ab_cases.verdict of session ab1, case c"),
    (lambda store: _ab_case(store, "slow"), "dashboard", "ab_cases.verdict of session ab1, case c"),
    (lambda store: _bisect(store, "culprit"), "bisections", "bisection b1, bisects.outcome"),
    (lambda store: _bisect(store, "found", step="maybe"), "bisections",
     "bisection b1, step 1's verdict"),
    (lambda store: _bisect(store, "found", role="middle"), "bisections",
     "bisection b1, step 1's role"),
]


@pytest.mark.parametrize(("write", "reader", "where"), WRONG,
                         ids=[f"{i}-{reader}" for i, (_, reader, _) in enumerate(WRONG)])
def test_a_row_read_back_with_an_unknown_verdict_cause_or_outcome_is_one_line(
        tmp_path: Path, write: Callable[[ResultsStore], None], reader: str, where: str) -> None:
    store = _store(tmp_path)
    try:
        write(store)
        with pytest.raises(StorageError) as raised:
            READS[reader](store)
    finally:
        store.close()
    said = str(raised.value)
    assert "\n" not in said and said.startswith(f"the results store sqlite:///{tmp_path}")
    assert where in said and " is not a valid " in said and "; valid: '" in said


def test_rows_of_every_vocabulary_s_values_read_back_as_written(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        _run(store, "faster")
        _failure(store, "crash")
        _ab_case(store, "FAILED (costs_more)")
        _bisect(store, "undecided", step="skipped", role="other half")
        assert [r.verdict for r in stored_runs.StoredRuns(store, "k").all()] == ["faster"]
        assert [f.cause for f in store.failures()] == ["crash"]
        assert [c.verdict for c in store.ab_cases()] == ["FAILED (costs_more)"]
        assert [b.outcome for b in store.bisects()] == ["undecided"]
        assert [f.kind for f in findings.read(store.engine)] == ["failure"]
        shown = site_data.read(store)
        assert [p.verdict for p in shown.runs[gate_runs.CASE]] == ["faster"]
    finally:
        store.close()


def test_a_kept_session_file_with_an_unknown_verdict_names_the_file_and_the_run(
        tmp_path: Path) -> None:
    path = tmp_path / "s1.json"
    run = {**gate_runs.run(1000.0, 1).to_json(), "verdict": "great"}
    path.write_text(json.dumps({"format": formats.SESSION_FORMAT, "session": "s1",
                                "machine_key": "k", "tier": "smoke", "runs": [run]}))
    with pytest.raises(StorageError) as raised:
        read_session(path)
    assert str(raised.value).startswith(
        f"{path}: run of {gate_runs.CASE} in session s1: its verdict: 'great' is not a valid "
        "kept run's verdict; valid: '', 'ok', 'flagged', ")
    old = {**run, "verdict": "faster: baseline stale"}  # kept before status and reason parted
    path.write_text(json.dumps({"format": formats.SESSION_FORMAT, "session": "s1",
                                "machine_key": "k", "tier": "smoke", "runs": [old]}))
    assert [r.verdict for r in read_session(path)] == ["faster"]


@pytest.mark.parametrize(("field", "value", "said"), [
    ("failure", {"cause": "segfault", "message": "m"}, "its failure's cause: 'segfault'"),
    ("numerics", {"status": "close"}, "its numerics: 'close' is not a valid A/B numerics"),
    ("costs", {"verdicts": {"compile_cpu_s": {"status": "more"}}},
     "its compile_cpu_s verdict: 'more'"),
])
def test_a_kept_a_b_file_s_cause_numerics_and_cost_verdicts_are_checked(
        tmp_path: Path, field: str, value: dict[str, Any], said: str) -> None:
    case: dict[str, Any] = {"case_id": "c", "sides": {}, "pairs": [], "failure": None,
                            "order_effect": {}, field: value}
    data = {"format": formats.AB_FORMAT, "session": "ab1", "machine_key": "k", "tier": "smoke",
            "settings": {"floor": 0.015, "alpha": 0.05, "min_pairs": 16, "max_pairs": 16},
            "sides": {"A": {}, "B": {}}, "cases": [case]}
    path = tmp_path / "ab1.json"
    with pytest.raises(StorageError, match="^" + re.escape(f"{path}: case c: {said}")) as raised:
        session_file.validate(data, path)
    assert "\n" not in str(raised.value)
