"""The gate end to end, with real sessions: the refresh command writes a versioned entry, an
unchanged session passes, a slowed one is re-run, confirmed and fails with its reports, the
standalone command agrees from the stored files, a waiver passes it, a rollback restores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import in_process
from tests.helpers.suites import MakeSuite
from tfperf.commands import tfperf_gate, tfperf_refresh
from tfperf.ground.machine import detect

CASE_ID = "tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"
CASE = ("--perf-only=device_kind=cpu", "--perf-only=device_count=1", "--perf-only=xla=off",
        "--perf-only=data_format=NHWC", "--perf-only=strategy=single", "--perf-only=input=synthetic")
# Short rounds: the injected slowdown below multiplies them, in the session and its re-run.
MEASURE = ("--perf-rounds=5", "--perf-steps-per-round=25", "--perf-warmup-rounds=2")
# Sessions of this millisecond-step case on a shared 2-core machine have differed by 60%, so
# the refresh accepts almost any spread (its refusals are tested on known runs in
# test_gate_rules_and_history.py), the gate uses z=1 on the short history (a threshold of one
# spread, under 95%), and the injected slowdown is 30x the round's work (-97% throughput,
# beyond the 60% two sessions have spread; 100x cost the session and its re-run a minute more).
NOISY = ("--max-spread=95",)
SLOWED = ("--perf-z=1", "--perf-inject-slowdown=30@tinycnn", "--perf-rerun=on")


def _refresh(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_refresh", *args, "--",
                           *CASE, *MEASURE], cwd=cwd, capture_output=True, text=True, timeout=600)


def _gate(session: Path, capsys: pytest.CaptureFixture[str]) -> in_process.Done:
    # The standalone gate judges at the session's z: at the default z=4 a -97% run passes
    # whenever the two baseline sessions spread more than 25%, as this machine's often do.
    return in_process.run(tfperf_gate.main, str(session), "--z=1", capsys=capsys)


@pytest.mark.long
def test_refresh_gate_confirm_report_waive_and_roll_back(
        make_suite: MakeSuite, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    suite = make_suite("tinycnn")
    root = suite.path
    entries = root / "baselines" / detect().key() / "entries"

    refused = _refresh(root, "--sessions=2", "--write", *NOISY)
    assert refused.returncode == 2
    assert "--write needs --reason" in refused.stderr.splitlines()[-1]

    dry = _refresh(root, "--sessions=2", *NOISY)
    assert dry.returncode == 0, dry.stderr
    assert f"{CASE_ID}" in dry.stdout and "new" in dry.stdout
    assert "dry run: nothing written" in dry.stdout
    assert not entries.exists()

    # The entry the dry run showed is written from the sessions it kept, measured once.
    kept = dry.stdout.splitlines()[-1].split("--sessions-from ")[1].split()[0]
    wrote = in_process.run(tfperf_refresh.main, "--sessions-from", kept, "--write",
                           "--reason=first baseline", *NOISY, capsys=capsys)
    assert wrote.code == 0, wrote.err
    assert "session 1 of" not in wrote.out  # nothing measured again
    first = json.loads((entries / "0001.json").read_text())
    assert first["reason"] == "first baseline" and first["kind"] == "refresh"
    assert len(first["cases"][CASE_ID]["runs"]) == 2
    # Compile time is kept with every run, for the gate to judge as it judges peak memory.
    assert all(r["compile_cpu_s"] > 0 for r in first["cases"][CASE_ID]["runs"])

    summary = root / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    slowed = suite.runpytest(*CASE, *MEASURE, *SLOWED, "--perf-profile-regressions=on",
                             f"--perf-history={root / 'history'}")
    slowed.assert_outcomes(failed=1)
    slowed.stdout.re_match_lines([
        rf".*{CASE_ID}: regression: throughput -\d+\.\d% \(.*\): regression; again .*"
        r"Mann-Whitney p=.*"])
    # A confirmed regression is the product's answer: its message and where to look next,
    # not the harness's frames.
    assert "case_runner.py" not in slowed.stdout.str()
    slowed.stdout.fnmatch_lines(["where to look next:", "  the profile of the confirmed re-run: *",
                                 "  the case's run is kept in *", "  *docs/gate.md*"])
    assert (root / ".perf-results/reports/summary.md").read_text().count("**regression**") == 1
    assert (root / ".perf-results/reports/trends" / f"{CASE_ID}.png").stat().st_size > 1000
    benchmark_json = json.loads((root / ".perf-results/reports/benchmark.json").read_text())
    gate_info = benchmark_json["benchmarks"][0]["extra_info"]["gate"]
    assert gate_info["status"] == "regression" and gate_info["rerun_examples_per_sec"]
    # The confirmed regression's re-run was profiled, and every report names the trace.
    profile = Path(benchmark_json["benchmarks"][0]["extra_info"]["regression_profile"])
    assert profile.name == f"{CASE_ID}.regression"
    assert len(list(profile.glob("local/plugins/profile/*/*.xplane.pb"))) == 1
    slowed.stdout.fnmatch_lines([f"*{CASE_ID}: profile of the confirmed regression: "
                                 f"tensorboard --logdir {profile}"])
    assert f"profile: `tensorboard --logdir {profile}`" in summary.read_text()
    assert "**regression**" in summary.read_text()
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    (session,) = (root / "history" / "results").glob("*.json")  # the slowed session's

    # The kept run says why, as the terminal did. (A compile regression in a real session, with
    # its reason: test_gate_newcomer.py.)
    (kept_run,) = json.loads(session.read_text())["runs"]
    assert kept_run["verdict"] == "regression" and kept_run["reason"].startswith(
        "regression: throughput -") and "building history (2 of 5)" in kept_run["reason"]
    assert kept_run["reason"] == gate_info["reason"]

    # The standalone command reaches the same verdict from the stored files alone, and says the
    # same reason: the history before the run, and its kept re-run.
    stored = _gate(session, capsys)
    assert stored.code == 1, stored.out + stored.err
    assert "**regression**" in stored.out and kept_run["reason"] in stored.out

    # A waiver with a reason and an expiry date passes it, and the report says so.
    (root / "baselines" / "gate.toml").write_text(
        '[[waivers]]\ncases = "tinycnn-"\nreason = "known: tinycnn slowed on purpose"\n'
        'expires = 2099-01-01\n')
    waived = _gate(session, capsys)
    assert waived.code == 0, waived.out + waived.err
    assert "waived until 2099-01-01: known: tinycnn slowed on purpose" in waived.out

    # A bad session file is refused in one line.
    (root / "broken.json").write_text("{")
    broken = _gate(root / "broken.json", capsys)
    assert broken.code == 2 and "broken.json is not readable JSON" in broken.err

    rolled = in_process.run(tfperf_refresh.main, "--rollback=1", "--write", "--reason=undo",
                            capsys=capsys)
    assert rolled.code == 0, rolled.err
    second = json.loads((entries / "0002.json").read_text())
    assert (second["kind"], second["rollback_of"]) == ("rollback", 1)
    assert second["cases"] == first["cases"]
    listing = in_process.run(tfperf_refresh.main, "--list", capsys=capsys).out
    assert "refresh: first baseline" in listing and "rollback (rollback of 1): undo" in listing


def test_a_broken_baseline_entry_stops_the_run_naming_the_file(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    entries = suite.path / "baselines" / detect().key() / "entries"
    entries.mkdir(parents=True)
    (entries / "0001.json").write_text("{not json")
    result = suite.runpytest(*CASE)
    result.stderr.fnmatch_lines(["ERROR: */entries/0001.json is not readable JSON*"])
    assert "test_training" not in result.stdout.str()
