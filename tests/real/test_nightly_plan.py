"""The nightly selection covers every valid pair and the defaults, the same way every time; a
budget drops the lowest priority first and says so; shards split the work completely and
evenly; a plan for another runner needs no TensorFlow here; bad plan options are one line."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers.suites import REPO, MakeSuite
from tfperf.cases import catalog, matrix, requirements
from tfperf.cases.matrix import Case
from tfperf.ground.machine import detect
from tfperf.ground.tiers import Measurement, Tier
from tfperf.options.ab_settings import ABSettings
from tfperf.options.plan import assumed_machine
from tfperf.plan import estimate, selection


def _nightly(devices: str) -> tuple[list[Case], selection.Selection]:
    """The shipped workloads' nightly tier and its selection, for an assumed runner."""
    machine = assumed_machine(detect(), devices)
    workloads = catalog.read(REPO / "workloads", Path("unused.log"))
    universe = [requirements.with_devices(c, machine, "cpu")
                for c in matrix.generate(workloads, Tier.NIGHTLY)]
    chosen = selection.nightly(universe, workloads,
                               lambda c: requirements.skip_reason(c, machine) is None)
    # A GPU runner's nightly is its GPU cases (its CPU cases are the smoke tier's and PRs').
    return [c for c in universe if requirements.skip_reason(c, machine) is None
            and c.device_kind == "gpu"], chosen


@pytest.mark.parametrize("devices", ["1xH100", "8xH100"])
def test_the_selection_covers_every_valid_pair_and_every_default(devices: str) -> None:
    runnable, chosen = _nightly(devices)
    assert selection.pairs_of(runnable) <= selection.pairs_of(chosen.cases)
    assert chosen.covered() == 1.0
    assert len(chosen.cases) < len(runnable) / 10
    # A GPU runner's nightly holds no CPU case.
    assert {c.device_kind for c in chosen.cases} == {"gpu"}
    counts = {c.device_count for c in runnable}
    for workload in {c.workload for c in runnable}:
        for count in counts:
            assert any(c.workload == workload and c.device_count == count and c.workers == 1
                       and c.xla == "off" and c.precision == "fp32" and c.input == "synthetic"
                       and c.strategy == ("single" if count == 1 else "replicated")
                       for c in chosen.defaults), (workload, count)
    # The defaults come first: a budget cuts from the other end.
    assert set(chosen.cases[:len(chosen.defaults)]) == chosen.defaults


def test_a_selection_misses_no_pair_the_covering_array_gave_up_on() -> None:
    """allpairspy gives up on pairs only a rare completion holds; the top-up covers them."""
    runnable, chosen = _nightly("8xH100")
    generated = [c for name in {c.workload for c in runnable}
                 for c in selection._generated([r for r in runnable if r.workload == name])]
    assert selection.pairs_of(runnable) - selection.pairs_of(generated)  # it did give up
    assert selection.pairs_of(runnable) <= selection.pairs_of(chosen.cases)


def _planning(seed: str, history: Path) -> subprocess.Popen[str]:
    """A plan for an assumed 8-GPU runner, in a fresh process (its own hash seed) with an empty
    history of its own."""
    probe = ("import sys, pytest\n"
             "code = pytest.main(['perf/', '--perf-tier=nightly', '--perf-plan', "
             f"'--perf-assume-devices=8xH100', '--perf-history={history}', '-q', "
             "'-p', 'no:cacheprovider'])\n"
             "print('tensorflow imported:', 'tensorflow' in sys.modules, code)\n")
    return subprocess.Popen([sys.executable, "-c", probe], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONHASHSEED": seed})


def _plan_lines(planning: subprocess.Popen[str]) -> tuple[list[str], str]:
    """The plan's lines, and whether TensorFlow was imported there."""
    out, _ = planning.communicate(timeout=600)
    lines = [line for line in out.splitlines() if line.startswith(("nightly selection", "  "))]
    return lines, out.splitlines()[-1]


def test_the_same_machine_gets_the_same_plan_and_planning_imports_no_tensorflow(
        tmp_path: Path) -> None:
    # One after the other: where nothing is kept for the machine yet, the first counts the
    # workloads' FLOPs at full size in a worker (17-30 s) and keeps them, and the second reads
    # them; at once, both counted them. Counting, keeping and counting again when a workload
    # changes: test_a_plan_counts_the_workloads_flops_once_for_their_files. (The workloads'
    # catalog is kept already: tests/real/conftest.py.)
    first, said = _plan_lines(_planning("1", tmp_path / "1"))
    second, _ = _plan_lines(_planning("2", tmp_path / "2"))
    assert first and first == second
    assert "pair coverage 100.0%" in first[0] and "8xNVIDIA_H100_assumed" in first[0]
    assert said == "tensorflow imported: False 0"


def test_a_spent_budget_starts_no_new_case_and_keeps_what_ran(
        make_suite: MakeSuite, monkeypatch: pytest.MonkeyPatch) -> None:
    # Estimates far below the real time, so that the plan keeps every case and the session's
    # clock runs out after the first.
    monkeypatch.setattr(estimate.Estimator, "seconds", lambda self, case: (0.01, "history"))
    suite = make_suite("tinycnn")
    result = suite.runpytest("-rs", "--perf-only=device_kind=cpu", "--perf-only=device_count=1",
                             "--perf-only=strategy=single", "--perf-only=input=synthetic",
                             "--perf-only=data_format=NHWC", "--perf-only=precision=fp32",
                             "--perf-budget=0.2s", "--perf-rounds=2", "--perf-warmup-rounds=1",
                             "--perf-steps-per-round=5")
    assert result.parseoutcomes() == {"no_baseline": 1, "skipped": 1}, result.stdout.str()
    result.stdout.fnmatch_lines_random(["*SKIPPED*the session's --perf-budget is spent*",
                                 "runs kept in *"])
    # The progress line sets the estimates and the time left against the budget.
    result.stdout.fnmatch_lines(["tfperf: case 1 of 2 | tinycnn-* | 0m00s in this case, * in "
                                 "all | about 0m00s of planned cases left | budget 0m00s, "
                                 "0m00s of it left"])


@pytest.mark.parametrize(("option", "message"), [
    ("--perf-budget=soon", "--perf-budget: 'soon' is not a duration like 4h, 90m or 3600s"),
    ("--perf-shard=9/8", "--perf-shard: '9/8' is not I/N with 1 <= I <= N"),
    ("--perf-selection=some", "--perf-selection: no selection 'some'; valid: cover, all"),
    ("--perf-assume-devices=8xB200", "--perf-assume-devices: '8xB200' is not COUNTxMODEL with "
     "COUNT 1-64 and MODEL one of H100, A100, V100"),
])
def test_a_bad_plan_option_is_one_line_before_any_case(make_suite: MakeSuite, option: str,
                                                       message: str) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(option, "--perf-plan")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}*"])


def test_an_assumed_runner_only_plans(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest("--perf-assume-devices=8xH100")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --perf-assume-devices plans for another runner: add "
                                 "--perf-plan*"])


def test_an_a_b_case_is_planned_at_its_longest_not_from_history() -> None:
    """An A/B case runs eight workers and up to MAX pairs: a measured case's past wall time
    says nothing of it, and a budget planned from it would overrun."""
    workloads = catalog.read(REPO / "workloads", Path("unused.log"))
    case = next(c for c in matrix.generate(workloads, Tier.SMOKE) if c.workload == "resnet20"
                and c.device_kind == "cpu" and c.workers == 1 and not c.virtual
                and c.xla == "off")
    measured = Measurement(size="tiny", warmup_rounds=2, rounds=5, steps_per_round=2)
    plain = estimate.Estimator(detect(), measured, lambda c: 64, {"resnet20": 0.12e9},
                               {case.id: [30.0]})
    assert plain.seconds(case) == (30.0, "history")
    ab = replace(plain, ab=ABSettings())
    seconds, source = ab.seconds(case)
    settings = ABSettings()
    # Turns of a round (2 steps of 64 examples at 0.12 GFLOP each, 0.22 s: longer than the
    # 0.1 s turn), a burst every 8th pair.
    round_s = 2 * 0.12e9 * 64 / estimate.CPU_FLOPS_PER_SEC
    pairs_s = settings.max_pairs * 2 * (round_s + estimate.YARDSTICK_S / 8)
    # 16 pairs a duet to 512 pairs, 64 after: 60 duets take over after the first 4, each a
    # share of the start-up.
    relays = settings.relays(settings.max_pairs)
    no_relay = replace(ab, ab=ABSettings(relay=0)).seconds(case)[0]
    assert source == "model" and pairs_s < no_relay < pairs_s + 60 and relays == 60
    assert no_relay + relays * 5 < seconds < no_relay + relays * 15
    assert replace(ab, ab=ABSettings(max_pairs=256)).seconds(case)[0] < seconds / 2
    # A burst before every pair: 8 pairs' two bursts where one pair's were.
    dense = replace(ab, ab=ABSettings(yardstick_every=1)).seconds(case)[0]
    assert dense == pytest.approx(seconds + settings.max_pairs * 2 * estimate.YARDSTICK_S * 7 / 8)


def test_a_plan_counts_the_workloads_flops_once_for_their_files(
        make_suite: MakeSuite, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    suite = make_suite("tinycnn")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing kept yet
    census = suite.path / ".perf-results" / "logs" / "flop_census.log"
    kept = tmp_path / "cache" / "tfperf" / "flops"

    def planned() -> list[str]:
        result = suite.runpytest("--perf-plan", "-q", "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        assert "FLOPs not counted" not in result.stdout.str()
        return [line for line in result.outlines if line.startswith(("smoke", "  "))]

    first = planned()
    assert first and census.exists() and len(list(kept.glob("*.json"))) == 1
    # Kept for the workloads' files: the next plan (in any checkout of them) counts nothing.
    census.unlink()
    assert planned() == first and not census.exists()
    # A workload's file changed: counted again.
    module = suite.path / "workloads" / "tinycnn.py"
    module.write_text(module.read_text() + "\n# changed\n")
    assert planned() == first and census.exists()
    assert len(list(kept.glob("*.json"))) == 2
