"""A change point that `tfperf-bisect changes` answered reaches people as what its A/B said: a
confirmed one is a culprit finding in its figure's words, marked on the case's plot by build with
B/A and its interval; one the A/B did not confirm is marked grey and said to be not confirmed,
and is never a finding. Kept in a real SQLite store, the dashboard built from it."""

from __future__ import annotations

import datetime
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.fast.test_build_series import KIND, _key, _store_with_builds
from tests.helpers import gate_runs
from tfperf.bisect import github_issue
from tfperf.dashboard import change_marks, site, site_data
from tfperf.storage import findings
from tfperf.storage.fingerprint import Fingerprint
from tfperf.storage.results_store import BisectRow

WHEN = datetime.datetime(2026, 12, 7, tzinfo=datetime.UTC)
# The configuration of the series _store_with_builds keeps (the build left out).
SERIES = Fingerprint(dict(gate_runs.HARD, tensorflow="2.21.0", tensorflow_git="v2.21.0")).series_key


def _bisection(id_: str, figure: str, followed: str, verdict: str, ratio: float,
               culprit: str | None) -> BisectRow:
    """A kept bisection that answered a change point between dev20260105 and 2.22.0rc0."""
    point = {"figure": figure, "machine_kind": KIND, "series_key": SERIES, "before":
             "2.22.0-dev20260105", "after": "2.22.0rc0", "change": ratio - 1, "pvalue": 1e-9,
             "described": f"{figure} moved from 2.22.0-dev20260105 to 2.22.0rc0"}
    steps = [{"role": "confirm", "candidate": 1, "against": 0, "verdict": verdict,
              "ratio": ratio, "low": ratio - 0.01, "high": ratio + 0.01, "confidence": 0.918,
              "floor": 0.1, "pairs": 64, "seconds": 30.0}]
    doc: dict[str, Any] = {
        "id": id_, "followed": followed, "change_point": point, "steps": steps,
        "outcome": "found" if culprit else "ends not apart", "culprit": 1 if culprit else None,
        "candidates": [{"label": "tf-nightly==2.22.0.dev20260105"},
                       {"label": culprit or "tensorflow-cpu==2.22.0rc0"}]}
    return BisectRow(id_, WHEN, _key("2.22.0rc0"), gate_runs.CASE, "tensorflow",
                     doc["outcome"], culprit, "tf-nightly==2.22.0.dev20260105" if culprit
                     else None, doc)


def test_a_confirmed_change_point_is_a_finding_and_a_mark_and_an_unconfirmed_one_only_a_mark(
        tmp_path: Path) -> None:
    store = _store_with_builds(tmp_path, [("2.21.0", 1000.0), ("2.22.0-dev20260105", 990.0),
                                          ("2.22.0rc0", 900.0)])
    confirmed = _bisection("bis-memory", "peak_memory_bytes", "memory", "higher", 1.865,
                           "tf-nightly==2.22.0.dev20260115")
    store.add_bisect(confirmed)
    store.add_bisect(_bisection("bis-loss", "loss_last", "numerics", "same", 1.0, None))
    try:
        (culprit,) = findings.read(store.engine, kinds=("culprit",))
        data = site_data.read(store)
        site.build(data, tmp_path / "site", workers=1)
    finally:
        store.close()
    assert culprit.summary == (f"{gate_runs.CASE} larger in peak device memory since "
                               f"tf-nightly==2.22.0.dev20260115 on {_key('2.22.0rc0')}")
    assert "change point: peak_memory_bytes moved from 2.22.0-dev20260105 to 2.22.0rc0; " \
        "confirmed by A/B: B/A 1.865 [1.855, 1.875]" in culprit.detail
    assert github_issue.title(dict(confirmed.document)) == \
        "tfperf: larger in peak device memory since tf-nightly==2.22.0.dev20260115"
    marks = change_marks.marks(data.bisects)
    assert [(m.confirmed, m.said) for m in marks] == [  # oldest first, then by id
        (False, "not confirmed: B/A 1.000 [0.990, 1.010]"),
        (True, "confirmed: B/A 1.865 [1.855, 1.875], culprit tf-nightly==2.22.0.dev20260115")]
    page = (tmp_path / "site" / "cases" / f"{gate_runs.CASE}.html").read_text()
    assert "Change points, answered by A/B" in page
    assert "not confirmed: B/A 1.000 [0.990, 1.010]" in page
    # On the plots by build: each mark on its own figure's plot, with its label.
    assert page.count("change point, confirmed") == 1
    assert page.count("change point, not confirmed") == 1
    assert page.count("confirmed: B/A 1.865 [1.855, 1.875]") == 2  # the table and the plot


def test_a_bisection_asked_for_by_hand_marks_nothing() -> None:
    by_hand = _bisection("bis", "examples_per_sec", "slower", "slower", 0.9, "tensorflow==2.22.0")
    doc = {k: v for k, v in by_hand.document.items() if k != "change_point"}
    assert change_marks.marks([replace(by_hand, document=doc)]) == []
