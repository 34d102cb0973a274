"""The nightly's bisection: which cases of a candidate A/B it bisects and over what range
(releases, or nightlies by date), and one GitHub issue per culprit through `gh` (a FAKE of the
GitHub boundary: tests/helpers/fake_gh.py), opened once and commented on after. The workflow's jobs:
test_workflows.py's rules, and the wiring below."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers import fake_gh
from tfperf.bisect import report, search
from tfperf.bisect import simulated_bisections as simulate
from tfperf.bisect.candidates import Candidate
from tfperf.bisect.levels import Level
from tfperf.storage import formats


def _ab_file(path: Path, b_spec: str, b_version: str, ratios: dict[str, float]) -> Path:
    """An A/B session file whose cases' pairs say B/A = `ratios[case]` (with a little noise)."""
    draw = np.random.default_rng(0)
    cases: list[dict[str, Any]] = []
    for case_id, ratio in ratios.items():
        pairs = [{"duet": 1 + i % 4, "order": "AB" if i % 2 else "BA", "a_rate": 100.0,
                  "b_rate": 100.0 * ratio * float(np.exp(draw.normal(0, 0.005))), "at_s": i}
                 for i in range(64)]
        cases.append({"case_id": case_id, "sides": {}, "pairs": pairs, "failure": None,
                      "order_effect": {}})
    path.write_text(json.dumps({
        "format": formats.AB_FORMAT, "session": "s", "machine_key": "k", "tier": "nightly",
        "settings": {"floor": 0.015, "alpha": 0.05, "min_pairs": 64, "max_pairs": 64,
                     "duets": 4, "relay": 16, "look_rule": "duets"},
        "sides": {"A": {"spec": "current", "tensorflow": "2.21.0"},
                  "B": {"spec": b_spec, "tensorflow": b_version}},
        "cases": cases}))
    return path


def _after(ab: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_bisect", "after-ab",
                           str(ab), "--dry-run", "--budget", "3h", "--", "--perf-tier=nightly",
                           "-m", "gpu"], capture_output=True, text=True, timeout=120, check=False)


def test_each_slower_case_is_bisected_between_the_pinned_and_the_candidate(tmp_path: Path
                                                                           ) -> None:
    ab = _ab_file(tmp_path / "release.json", "tensorflow[and-cuda]==2.22.0", "2.22.0",
                  {"resnet50-gpu1-a": 0.9, "resnet50-gpu1-b": 1.0, "bert-gpu2-c": 0.8})
    done = _after(ab)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"tfperf-bisect releases tensorflow[and-cuda] 2.21.0..2.22.0 --good current --bad "
        f"tensorflow[and-cuda]==2.22.0 --budget {s}s -- --perf-tier=nightly -m gpu -k {case}"
        for case, s in (("resnet50-gpu1-a", "10800"), ("bert-gpu2-c", "10800"))]
    ab = _ab_file(tmp_path / "nightly.json", "tf-nightly[and-cuda]",
                  "2.22.0.dev20261124", {"resnet50-gpu1-a": 0.9})
    done = _after(ab)
    assert done.stdout.startswith("tfperf-bisect nightlies tf-nightly[and-cuda] "
                                  "2026-11-10..2026-11-24 --good current --bad "
                                  "tf-nightly[and-cuda]==2.22.0.dev20261124 "), done.stdout
    ab = _ab_file(tmp_path / "same.json", "tensorflow==2.22.0", "2.22.0", {"a": 1.0})
    assert "nothing to bisect" in _after(ab).stdout
    ab = _ab_file(tmp_path / "wheel.json", "dist/tf.whl", "2.22.0", {"a": 0.8})
    done = _after(ab)
    assert done.returncode == 2 and "is not a requirement: a wheel or an interpreter has no " \
        "versions to bisect over" in done.stderr


def _report(path: Path, case_id: str, culprit: int | None) -> Path:
    """A bisection's document, from the search with a judge that knows the truth."""
    labels = [f"tensorflow=={v}" for v in ("2.19.1", "2.20.0", "2.21.0", "2.22.0")]
    speeds = simulate.profile(4, {culprit: 0.2} if culprit else {})

    def judge(candidate: int, against: int, level: Level) -> search.Result:
        ratio = speeds[candidate] / speeds[against]
        return search.Judged("slower" if ratio < 0.9 else "same", ratio, ratio - 0.01,
                             ratio + 0.01, 32, 60.0,
                             {"A": {"tensorflow": labels[against][12:],
                                    "git": f"v-0-g1234abc{against}"},
                              "B": {"tensorflow": labels[candidate][12:],
                                    "git": f"v-0-g1234abc{candidate}"}})

    found = search.run(4, judge, 0.015)
    doc = report.document(found, [Candidate(x, x) for x in labels], case_id, "tensorflow",
                          f"bisect-{case_id}", "key", 0.015)
    path.write_text(json.dumps(doc))
    return path


def _issue(tmp_path: Path, *reports: Path, repo: str = "octo/perf"
           ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    env = fake_gh.on_path(tmp_path)
    state = Path(env["FAKE_GH_STATE"])
    done = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_bisect", "issue",
                           *map(str, reports), "--repo", repo], capture_output=True, text=True,
                          timeout=120, env=env, check=False)
    return done, json.loads(state.read_text()) if state.exists() else {}


def test_one_issue_per_culprit_is_opened_then_commented_on(tmp_path: Path) -> None:
    first = _report(tmp_path / "a.json", "resnet50-a", 2)
    again = _report(tmp_path / "b.json", "bert-b", 2)
    other = _report(tmp_path / "c.json", "resnet50-c", 3)
    none = _report(tmp_path / "d.json", "resnet50-d", None)
    done, state = _issue(tmp_path, first, again, other, none)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "opened https://github.com/octo/perf/issues/1: tfperf: slower since tensorflow==2.21.0",
        "commented on issue #1: tfperf: slower since tensorflow==2.21.0",
        "opened https://github.com/octo/perf/issues/2: tfperf: slower since tensorflow==2.22.0",
        "no issue: the bisection of resnet50-d named no culprit (ends not apart)"]
    one, two = state["issues"]
    assert "`resnet50-a`" in one["body"] and "`bert-b`" in one["comments"][0]
    assert "https://github.com/tensorflow/tensorflow/compare/1234abc1...1234abc2" in one["body"]
    assert "last good: `tensorflow==2.20.0`" in one["body"]
    assert two["comments"] == [] and state["labels"] == ["perf-regression"]
    # A night later, the same culprit: a comment on the open issue, no new one.
    done, state = _issue(tmp_path, first)
    assert "commented on issue #1" in done.stdout and len(state["issues"]) == 2


def test_gh_failures_are_one_line(tmp_path: Path) -> None:
    done, _ = _issue(tmp_path, _report(tmp_path / "a.json", "x", 2), repo="octo/other")
    assert done.returncode == 2
    assert done.stderr.strip().endswith("gh issue list: HTTP 404: Not Found (repository "
                                        "octo/other)")


@pytest.mark.parametrize("verb", ["after-ab", "issue"])
def test_the_nightly_verbs_have_help(verb: str) -> None:
    done = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_bisect", verb, "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "usage:" in done.stdout
