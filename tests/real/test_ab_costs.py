"""What each A/B side costs besides its steps: compile time, time to the first step, peak
device and host memory, B/A over the duets with a verdict against a floor of their own. Real
sessions: an A/A says no cost is higher and memory the same; side B made to compile 2 s longer
and hold 300 MiB more (--perf-inject-cost) fails the case `costs_more`, naming each."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.ab_sessions import SessionRun, session_file
from tests.helpers.suites import MakeSuite
from tfperf.ab import costs
from tfperf.bisect.search import Judged
from tfperf.bisect.step_sessions import Selection, StepSessions

CASE = ("-k", "tinycnn and cpu1 and workers1 and xla_off and NHWC and default and single and "
        "fp32 and synthetic and prep_host")
# Eight pairs, two a duet: the costs are each duet's workers', whatever the number of pairs.
AB = ("--perf-ab-side-a=current", "--perf-ab-floor=20", "--perf-ab-pairs=8:8",
      "--perf-ab-duets=4", "--perf-ab-yardstick-every=4")  # bursts: no verdict uses them


def _case(suite: pytest.Pytester) -> dict[str, Any]:
    case: dict[str, Any] = session_file(suite.path)["cases"][0]
    return case


@pytest.mark.long
def test_an_a_a_session_says_no_cost_is_higher(a_a_session: SessionRun) -> None:
    assert a_a_session.ret == pytest.ExitCode.OK, a_a_session.output
    case = a_a_session.session_file()["cases"][0]
    # Every duet's workers say what they cost, relayed ones too.
    assert [d["duet"] for d in case["costs"]["duets"]] == sorted({p["duet"] for p in case["pairs"]})
    for side in "AB":
        assert all(d[side]["time_to_first_step_s"] > 0 and d[side]["peak_rss_bytes"] > 0
                   for d in case["costs"]["duets"])
        # Each phase's allocator peak, in the order the phases ran, the highest of
        # them the worker's peak.
        for duet in case["costs"]["duets"]:
            phases = dict(duet[side]["memory_by_phase"])
            assert list(phases)[:4] == ["building", "compiling", "proving XLA", "warming up"], \
                phases
            assert {"yardstick", "measured rounds", "input figures"} <= set(phases), phases
            assert max(phases.values()) == duet[side]["peak_memory_bytes"]
    verdicts = case["costs"]["verdicts"]
    assert set(verdicts) == {c.key for c in costs.COSTS}
    assert not any(v["status"] == costs.HIGHER for v in verdicts.values()), verdicts
    assert verdicts["peak_rss_bytes"]["status"] == costs.SAME, verdicts
    assert "peak host memory: same" in (a_a_session.path / ".perf-results" / "reports" / "ab"
                                        / "ab.md").read_text()


def test_a_side_that_compiles_longer_and_holds_more_fails_costs_more(
        make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    # No profiled round (a finding's, by default): the off switch, and the test's time.
    result = suite.runpytest(*CASE, *AB, "--perf-inject-cost=compile=1",
                             "--perf-inject-cost=memory=300", "--perf-profile-regressions=off")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    case = _case(suite)
    assert case["failure"]["cause"] == "costs_more" and case["where"] is None
    for said in ("compile time: higher", "peak device memory: higher",
                 "peak host memory: higher"):
        assert said in case["failure"]["message"]
    verdicts = case["costs"]["verdicts"]
    # 1 s of CPU more in each of B's first rounds, whatever the other workers did meanwhile.
    assert verdicts["compile_cpu_s"]["b_median"] == pytest.approx(
        verdicts["compile_cpu_s"]["a_median"] + 1, abs=0.5)
    # The allocator's peak grows by chunks: 48 MiB to 332 here, for 300 more held.
    assert verdicts["peak_memory_bytes"]["b_median"] \
        >= verdicts["peak_memory_bytes"]["a_median"] + 250 * 2**20
    # ... and it is the compiling phase's, where it was held: the other phases'
    # peaks are side A's.
    phases = costs.by_phase(case["costs"]["duets"])
    assert list(phases)[:2] == ["building", "compiling"] and "measured rounds" in phases
    for phase, (a, b) in phases.items():
        assert (b >= a + 250 * 2**20) if phase == "compiling" else (b < a + 50 * 2**20), \
            (phase, a, b)
    report = next((suite.path / ".perf-results" / "reports" / "ab").rglob("ab.md")).read_text()
    assert "peak device memory by phase, A -> B (median over duets; * the side's highest): " \
        "building " in report
    assert re.search(r"compiling \d+ -> \d+ MiB \([\d.]+x\)(\*A)?\*B", report), report
    result.stdout.fnmatch_lines(["*FAILED (costs_more)*",
                                 "*: costs_more: side B costs more than side A beyond the "
                                 "floor: compile time: higher, B/A *"])
    # A finding is the product's answer, not a crash of the harness: no frames of it.
    assert "ab_runner.py" not in result.stdout.str()
    result.stdout.fnmatch_lines(["where to look next:", "  the A/B session file: *",
                                 "  the cost verdicts (compile time, peak memory): docs/ab.md"])
    # A bisection step that ends so still follows speed: a costlier commit is not skipped.
    (found,) = (suite.path / ".perf-results" / "ab").glob("*.json")
    step = StepSessions(suite.path, suite.path / ".perf-results", suite.path / "logs",
                      Selection("", case["case_id"], ()), "b", lambda _: None)
    judged = step._read(found.stem, subprocess.CompletedProcess([], 1, "", ""), 1.0,
                        Path("step.log"))
    assert isinstance(judged, Judged) and judged.pairs >= 8, judged
