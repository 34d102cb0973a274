"""Which runs make a case's history (fingerprints, marked changes, excluded regressions),
effect floors and waivers from baselines/statistics.toml, and their one-line errors."""

from __future__ import annotations

import datetime
import re
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers.gate_runs import CASE, HARD, run
from tfperf.cases.matrix import Case
from tfperf.commands import tfperf_refresh as refresh
from tfperf.gate import case_verdict, statistics
from tfperf.gate import rules as gate_rules
from tfperf.gate.case_verdict import Sources
from tfperf.gate.statistics import GateSettings
from tfperf.measure import summary_table
from tfperf.measure.case_record import CaseRecord
from tfperf.storage.baselines import CaseBaseline, Entry
from tfperf.storage.session_files import Run

TODAY = datetime.date(2026, 11, 22)



def entry(runs: list[Run], since: str = "", kept: float | None = None) -> Entry:
    return Entry(1, "me", "2026-11-01", "", "test", "refresh",
                 {CASE: CaseBaseline(tuple(runs), since, kept)})


def test_history_is_the_entry_plus_later_nightly_runs_of_the_same_hard_key() -> None:
    nightly = [run(1000, d) for d in range(5, 15)]
    nightly.append(run(1000, 16, hard={**HARD, "tensorflow": "2.22.0"}))
    nightly.append(run(500, 17, verdict=statistics.REGRESSION))  # a confirmed regression: not normal
    sources = Sources(entry([run(1000, 3), run(1000, 4)], since="2026-11-08"), nightly)
    history, hard_note, soft_note = case_verdict.comparable(run(990, 20), sources, 30)
    assert [r.when for r in history] == ["2026-11-03", "2026-11-04"] + [
        f"2026-11-{d:02d}" for d in range(8, 15)]
    assert hard_note == ""
    assert soft_note == "host: 'h14' -> 'h20'"


def test_a_result_of_another_hard_key_is_never_compared_and_the_field_is_named() -> None:
    sources = Sources(None, [run(1000, d) for d in range(1, 12)])
    newer = run(500, 20, hard={**HARD, "tensorflow": "2.22.0"})
    verdict = case_verdict.assess(newer, sources, gate_rules.GateRules({}), GateSettings())
    assert verdict.status == case_verdict.FINGERPRINT_DIFFERS
    assert verdict.fingerprint_note == "tensorflow: '2.21.0' -> '2.22.0'"
    assert verdict.verdicts == ()
    concluded = case_verdict.conclude(verdict, None, gate_rules.GateRules({}), GateSettings(), TODAY)
    assert concluded.status == case_verdict.FINGERPRINT_DIFFERS


def test_the_history_is_the_most_recent_runs_only() -> None:
    sources = Sources(None, [run(1000 + d, d) for d in range(1, 29)])
    history, _, _ = case_verdict.comparable(run(1000, 30), sources, 20)
    assert len(history) == 20 and history[0].when == "2026-11-09"


def test_a_confirmed_regression_without_a_waiver_fails_and_an_expired_one_gates_again(
        tmp_path: Path) -> None:
    sources = Sources(None, [run(1000 + (d % 3), d) for d in range(1, 13)])
    slow = run(800, 20)
    (tmp_path / "gate.toml").write_text(
        '[[waivers]]\ncases = "resnet20-cpu1"\nreason = "known: issue 12"\n'
        "expires = 2026-11-30\n")
    rules = gate_rules.load(tmp_path)
    first = case_verdict.assess(slow, sources, rules, GateSettings())
    assert first.status == statistics.FLAGGED
    waived = case_verdict.conclude(first, None, rules, GateSettings(), TODAY)
    assert (waived.status, waived.failed) == ("waived", False)
    assert waived.waiver_note == "waived until 2026-11-30: known: issue 12"
    later = case_verdict.conclude(first, None, rules, GateSettings(), datetime.date(2026, 12, 1))
    assert later.failed
    assert later.waiver_note.startswith("waiver expired 2026-11-30")
    unwaived = case_verdict.conclude(first, None, gate_rules.GateRules({}), GateSettings(), TODAY)
    assert unwaived.failed and unwaived.throughput is not None
    assert unwaived.throughput.status == statistics.REGRESSION


def test_a_rerun_that_is_not_slower_does_not_confirm() -> None:
    sources = Sources(None, [run(1000 + (d % 3), d) for d in range(1, 13)])
    first = case_verdict.assess(run(800, 20), sources, gate_rules.GateRules({}), GateSettings())
    again = replace(run(1001, 21), session="s20")
    verdict = case_verdict.conclude(first, again, gate_rules.GateRules({}), GateSettings(), TODAY)
    assert verdict.status == statistics.NOT_CONFIRMED and not verdict.failed


def test_floors_take_the_longest_matching_pattern(tmp_path: Path) -> None:
    (tmp_path / "gate.toml").write_text(
        '[floors]\n"resnet20-" = 0.08\n"resnet20-cpu1-workers1-xla_off" = 0.12\n')
    rules = gate_rules.load(tmp_path)
    assert rules.floor(CASE, 0.05) == 0.12
    assert rules.floor("resnet20-cpu2-workers1", 0.05) == 0.08
    assert rules.floor("deepconn-cpu1", 0.05) == 0.05


def test_compile_time_and_peak_memory_are_gated_against_floors_of_their_own(
        tmp_path: Path) -> None:
    # Figures well above their absolute floors (1 s of compile, 32 MiB), so that the relative
    # ones decide (the absolute floors: test_gate_statistics.py).
    history = Sources(None, [run(1000, d, compile_s=10.0 + 0.05 * (d % 3),
                                 memory=1e9 * (1 + 0.001 * (d % 3))) for d in range(1, 13)])

    def statuses(now: Run, rules: gate_rules.GateRules) -> dict[str, str]:
        gate = case_verdict.assess(now, history, rules, GateSettings())
        return {v.metric.name: v.status for v in gate.verdicts}

    # 20% longer compiles and 8% more memory: beyond the noise, within the default floors
    # (25% and 10%); throughput's 5% would have failed both.
    within = statuses(run(1000, 20, compile_s=12.0, memory=1.08e9), gate_rules.GateRules({}))
    assert within == {"examples_per_sec": "ok", "peak_memory_bytes": "ok",
                      "compile_cpu_s": "ok"}
    beyond = statuses(run(1000, 20, compile_s=13.0, memory=1.12e9), gate_rules.GateRules({}))
    assert beyond["compile_cpu_s"] == beyond["peak_memory_bytes"] == statistics.FLAGGED
    (tmp_path / "gate.toml").write_text('[floors]\n"resnet20-" = 0.5\n[memory_floors]\n'
                                        '"resnet20-" = 0.2\n[compile_floors]\n"xla_off" = 0.4\n')
    rules = gate_rules.load(tmp_path)
    assert (rules.floor(CASE, 0.05), rules.floor(CASE, 0.1, "memory_floors"),
            rules.floor(CASE, 0.25, "compile_floors")) == (0.5, 0.2, 0.4)
    # A growth floor may exceed 100% (a compile that doubles is +100%): +99% passes at 1.2.
    (tmp_path / "gate.toml").write_text('[compile_floors]\n"xla_off" = 1.2\n')
    wide = gate_rules.load(tmp_path)
    assert wide.floor(CASE, 0.25, "compile_floors") == 1.2
    assert statuses(run(1000, 20, compile_s=20.0, memory=1e9), wide)["compile_cpu_s"] == "ok"
    (tmp_path / "gate.toml").write_text('[floors]\n"resnet20-" = 0.5\n[memory_floors]\n'
                                        '"resnet20-" = 0.2\n[compile_floors]\n"xla_off" = 0.4\n')
    rules = gate_rules.load(tmp_path)
    assert statuses(run(1000, 20, compile_s=13.0, memory=1.12e9), rules) == within
    # Confirmed by the figure alone, as peak memory is, then a regression naming it.
    concluded = case_verdict.conclude(
        case_verdict.assess(run(1000, 20, compile_s=20.0, memory=1e9), history, rules,
                            GateSettings()), None, rules, GateSettings(), TODAY)
    assert concluded.failed and [v.metric.label for v in concluded.verdicts
                                 if v.status == statistics.REGRESSION] == ["compile time"]
    # Its reason, as the run keeps it: the figure, the change, the threshold and how it was set.
    assert case_verdict.reason(concluded).startswith(
        "regression: compile time +99.0% (20 s against the median 10.1 s; threshold 40.0%: "
        "robust z beyond 4 and the floor 40.0%, 12 runs): regression; again +99.0% worse; "
        "throughput +0.0%; peak memory -0.1%"), case_verdict.reason(concluded)


@pytest.mark.parametrize(("text", "message"), [
    ("[floors]\nresnet = 5\n", "floors.resnet: 5 is not a fraction between 0 and 1"),
    ("[[waivers]]\ncases = 'x'\nexpires = 2026-12-01\n", "waiver 1: a waiver needs a 'reason'"),
    ("[[waivers]]\ncases = 'x'\nreason = 'r'\nexpires = 'soon'\n",
     "waiver 1: 'expires' must be a date like 2026-12-31, not 'soon'"),
    ("[[waivers]]\ncases = 'x'\nreason = 'r'\nexpires = 2026-12-01\nmetric = 'speed'\n",
     "waiver 1: no gated figure 'speed'; valid: examples_per_sec, scaling_efficiency, "
     "peak_memory_bytes, compile_cpu_s"),
    ("[thresholds]\n", "unknown table 'thresholds'; valid: floors, memory_floors, "
     "compile_floors, waivers"),
    ("[compile_floors]\nxla = 11\n", "compile_floors.xla: 11 is not a growth above 0 and at "
     "most 10 (0.25 is 25% more, 1.5 is 150% more)"),
    ("[memory_floors]\nxla = 0\n", "memory_floors.xla: 0 is not a growth above 0 and at most 10"),
    ("[floors\n", "is not readable TOML"),
])
def test_a_bad_rules_file_is_one_line_naming_the_file(tmp_path: Path, text: str,
                                                      message: str) -> None:
    (tmp_path / "gate.toml").write_text(text)
    with pytest.raises(gate_rules.RulesError) as error:
        gate_rules.load(tmp_path)
    assert str(tmp_path / "gate.toml") in str(error.value)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_the_refresh_refuses_missing_noisy_or_mixed_runs_naming_each_case() -> None:
    other = "deepconn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"
    steady = [[run(1000, 1)], [run(1010, 2)], [run(990, 3)]]
    assert len(refresh.collect(steady, 0.05)[CASE]) == 3
    noisy = [[run(1000, 1)], [run(1400, 2)], [run(700, 3)]]
    with pytest.raises(refresh.Refused, match=r"sessions spread \d+\.\d% \(over 5\.0%\)"):
        refresh.collect(noisy, 0.05)
    mixed = [[run(1000, 1)], [run(1000, 2, hard={**HARD, "tensorflow": "2.22.0"})]]
    with pytest.raises(refresh.Refused, match=re.escape(
            "fingerprints differ between sessions: tensorflow: '2.21.0' -> '2.22.0'")):
        refresh.collect(mixed, 0.05)
    missing = [[run(1000, 1), replace(run(1000, 1), case_id=other)], [run(1000, 2)]]
    with pytest.raises(refresh.Refused, match=f"{other}: ran in 1 of 2 sessions"):
        refresh.collect(missing, 0.05)


@pytest.mark.parametrize(("extra", "message"), [
    ([], "holds 0 refresh session(s); a refresh's dry run keeps at least 2 there"),
    (["-k", "resnet20"], "--sessions-from takes the sessions as they were measured: no -k"),
    (["--sessions=3"], "--sessions-from takes the sessions as they were measured"),
])
def test_sessions_from_refuses_what_it_cannot_use_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        refresh.main(["--sessions-from", str(tmp_path / "none"), *extra])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err.splitlines()[-1]


def test_a_kept_run_judged_again_meets_its_history_and_its_re_run_and_says_the_same() -> None:
    """What the standalone gate does with a session file: the kept run, its kept re-run, and
    the history before it (a later night's runs are not its history)."""
    nightly = [run(1000 + d, d) for d in range(1, 13)]
    later = [run(600, d) for d in range(21, 25)]  # after it: not what it was judged against
    sources = Sources(None, nightly)
    tonight, again = run(800, 20), run(810, 20)
    first = case_verdict.conclude(case_verdict.assess(tonight, sources, gate_rules.GateRules({}),
                                                      GateSettings()),
                                  again, gate_rules.GateRules({}), GateSettings(), TODAY)
    kept = Run.from_json(tonight.judged(first.status, case_verdict.reason(first),
                                        again).to_json())
    assert kept.reason == case_verdict.reason(first) and kept.reason.startswith(
        "regression: throughput -20.5% (800 against the median 1.01e+03; threshold 5.0%: robust "
        "z beyond 4 and the floor 5.0%, 12 runs): regression; again +19.5% worse, Mann-Whitney")
    replay = Sources(None, nightly + later)
    judged = case_verdict.conclude(case_verdict.assess(kept, replay, gate_rules.GateRules({}),
                                                       GateSettings()),
                                   kept.again(), gate_rules.GateRules({}), GateSettings(), TODAY)
    assert case_verdict.reason(judged) == kept.reason


def test_a_cpu_case_judged_only_against_the_shipped_entry_says_so_in_one_line() -> None:
    """A newcomer's first run: the history is the shipped entry's, another day on another host
    of a shared kind; the change is shown apart, with one line saying what it can judge."""
    shipped = Sources(entry([run(400, d) for d in range(1, 4)]))
    first = case_verdict.assess(run(900, 20), shipped, gate_rules.GateRules({}), GateSettings())
    assert first.entry_only == "baseline entry 1 of 2026-11-01"
    mixed = Sources(entry([run(400, d) for d in range(1, 4)]), [run(880, 10)])
    assert case_verdict.assess(run(900, 20), mixed, gate_rules.GateRules({}),
                               GateSettings()).entry_only == ""
    case = Case("resnet20", "cpu", 1, "off", "NHWC", "default", "single", "fp32")
    lines = summary_table.table([CaseRecord(case, {"examples_per_sec": 900.0}, first)])
    assert "(+125.0%)" in lines[2]
    (note,) = [line for line in lines if "baseline entry" in line]
    assert note.startswith("(1 case: change in parentheses against the baseline entry 1 of "
                           "2026-11-01 only: another day's runs")
    # An entry of as many runs as settle a history judges finely: no note, the change as is.
    settled = Sources(entry([run(400, d) for d in range(1, 7)]))
    assert case_verdict.assess(run(900, 20), settled, gate_rules.GateRules({}),
                               GateSettings()).entry_only == ""
    # The same history on a GPU is the team's own runner's: no note, the change as it is.
    gpu = Case("resnet20", "gpu", 1, "off", "NHWC", "default", "single", "fp32")
    assert not any("baseline entry" in line for line in summary_table.table(
        [CaseRecord(gpu, {"examples_per_sec": 900.0}, first)]))


def test_a_run_kept_with_its_reason_glued_to_its_status_reads_as_the_status_alone() -> None:
    kept = {**run(1000, 3).to_json(), "verdict": "faster: baseline stale",
            "reason": "faster: throughput +15.0% (...): baseline stale"}
    again = Run.from_json(kept)
    assert again.verdict == statistics.FASTER and again.reason == kept["reason"]


def test_a_case_too_noisy_for_its_floor_is_quarantined_and_comes_back_once_it_settles() -> None:
    rules, settings = gate_rules.GateRules({}), GateSettings()

    def judged(history: list[Run], now: Run) -> case_verdict.CaseGate:
        first = case_verdict.assess(now, Sources(None, history), rules, settings)
        return case_verdict.conclude(first, None, rules, settings, TODAY)

    # Twelve nights swinging between 1000 and 800 examples/s: a 30% slowdown is not judged...
    swinging = [run(1000.0 if d % 2 else 800.0, d) for d in range(1, 13)]
    quarantined = judged(swinging, run(630.0, 13))
    assert (quarantined.status, quarantined.failed) == ("unstable", False)
    said = case_verdict.reason(quarantined)
    assert said.startswith("unstable: throughput -30.0% (630 against the median 900; threshold "
                           "50.0%: unstable: its runs spread 16.5% (robust, 12 runs), so z 4 "
                           "holds 65.9%, not its floor 5.0%; gated again once they spread at "
                           "most 1.2%"), said
    # ... but half the speed still fails, as while a history builds.
    assert judged(swinging, run(440.0, 13)).failed
    # Steady nights after it: once they are most of the recent runs, the case is gated again.
    settled = swinging + [run(1000.0 + (d % 3), d) for d in range(13, 27)]
    assert judged(settled, run(1001.0, 27)).status == "ok"
    assert judged(settled, run(700.0, 27)).failed
