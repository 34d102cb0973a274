"""Each case runs in its own worker: a raise, a segfault, a hang, exhausted memory, a NaN or a
flat loss fails that case with its cause named, the next case still runs, and no worker is left
behind. A session killed with SIGKILL keeps every case that finished."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers import in_process
from tests.helpers.suites import MakeSuite, worker_processes
from tfperf.commands import tfperf_store
from tfperf.dashboard import site, site_data
from tfperf.dashboard.html_text import slug
from tfperf.processes import protocol
from tfperf.storage import database, session_files
from tfperf.storage.results_store import ResultsStore

ONE_DEVICE_CONFIG = ("--perf-only=device_kind=cpu", "--perf-only=device_count=1",
                     "--perf-only=xla=off", "--perf-only=data_format=NHWC",
                     "--perf-only=strategy=single", "--perf-only=input=synthetic")


@pytest.mark.long
def test_faults_fail_their_case_with_the_cause_and_the_session_goes_on(
        make_suite: MakeSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Where the runner makes each worker's scratch folder: all gone afterwards, even those of
    # the workers it killed.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    suite = make_suite("raises", "segfault", "hangs", "nan_loss", "flat_loss", "exhausts_memory",
                       "tinycnn")
    # A limit of 15 s, not 25: waiting out the hang is most of this test (a slot of the two);
    # tinycnn's workers are ready within a few seconds beside the other self-tests.
    result = suite.runpytest(*ONE_DEVICE_CONFIG, "--perf-timeout=15", "--perf-rounds=2",
                             "--perf-warmup-rounds=1", "-p", "no:randomly")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 6, result.stdout.str()
    assert outcomes.get("no_baseline") == 1  # tinycnn ran after all the failures
    result.stdout.fnmatch_lines_random([
        "*flat_loss-cpu1-*: loss_not_falling: loss went from 1 to 1*",
        "*exhausts_memory-cpu1-*: out_of_memory: *OOM when allocating tensor*(while building)",
        "*hangs-cpu1-*: timeout: no answer within the case's 15 s limit while building*",
        "*nan_loss-cpu1-*: non_finite_loss: NonFiniteLoss: loss is nan at step 5 (while compiling)",
        "*raises-cpu1-*: error: RuntimeError: deliberate failure in build_model (while building)",
        "*segfault-cpu1-*: crash: worker killed by SIGSEGV while building (log: *.log)*",
    ])
    # The crash left its stack in the log the failure names (faulthandler, in every worker).
    logs = list((suite.path / ".perf-results" / "logs").glob("segfault-cpu1-*.log"))
    assert len(logs) == 1, logs
    assert str(logs[0].relative_to(suite.path)) in result.stdout.str()
    stack = logs[0].read_text()
    assert "Fatal Python error: Segmentation fault" in stack, stack
    assert "in build_model" in stack, stack
    assert worker_processes() == []
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("tfperf-")]
    # The summary and the store leave no case out: each failure with its cause and phase.
    summary = (suite.path / ".perf-results" / "reports" / "summary.md").read_text()
    assert "1 cases gated, 0 confirmed regressions, 6 failed before the gate." in summary
    for cause in ("loss_not_falling", "out_of_memory", "timeout", "non_finite_loss", "error",
                  "crash"):
        assert f"**FAILED ({cause})**" in summary, summary
    assert re.search(r"\| `segfault-cpu1-\S+` \| \*\*FAILED \(crash\)\*\* .*"
                     r"worker killed by SIGSEGV while building \(log: .*segfault-cpu1-.*\.log\)",
                     summary), summary
    store = ResultsStore.open(database.default_url(suite.path / ".perf-results" / "history"))
    try:
        stored = {f.case_id.split("-")[0]: f for f in store.failures()}
        assert len(store.runs()) == 1
    finally:
        store.close()
    assert {name: f.cause for name, f in stored.items()} == CAUSES
    assert stored["segfault"].phase == "building" and "in build_model" in stored[
        "segfault"].log_tail and stored["segfault"].log_path.endswith(".log")
    _every_failure_reaches_a_store_built_from_the_kept_file(suite.path, tmp_path, capsys)


CAUSES = {"flat_loss": "loss_not_falling", "exhausts_memory": "out_of_memory",
          "hangs": "timeout", "nan_loss": "non_finite_loss", "raises": "error", "segfault": "crash"}


def _every_failure_reaches_a_store_built_from_the_kept_file(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A nightly without PostgreSQL keeps the session files (perf-history) and
    builds its dashboard from a store it imports them into: the file holds every failure, with
    its log's last lines, and the dashboard shows each on its case's page."""
    (kept,) = (project / ".perf-results" / "history" / "results").glob("*.json")
    failures = json.loads(kept.read_text())["failures"]
    assert {f["case_id"].split("-")[0]: f["cause"] for f in failures} == CAUSES
    url = f"sqlite:///{tmp_path / 'imported' / 'store.sqlite3'}"
    (tmp_path / "imported").mkdir()
    done = in_process.run(tfperf_store.main, "--store", url, "import", str(kept), capsys=capsys)
    assert done.code == 0, done.out + done.err
    store = ResultsStore.open(url)
    try:
        assert {f.case_id.split("-")[0]: f.cause for f in store.failures()} == CAUSES
        assert len(store.runs()) == 1
        site.build(site_data.read(store), tmp_path / "site", workers=1)
    finally:
        store.close()
    for failure in failures:
        page = (tmp_path / "site" / "cases" / f"{slug(failure['case_id'])}.html").read_text()
        assert f"<td class=\"bad\">{failure['cause']}</td>" in page, failure["case_id"]
        assert not failure["log_tail"] or html.escape(failure["log_tail"]) in page
    segfault = next(f for f in failures if f["case_id"].startswith("segfault-"))
    assert "Fatal Python error: Segmentation fault" in segfault["log_tail"]


def test_a_case_that_does_not_run_as_named_fails(make_suite: MakeSuite) -> None:
    """The profiler, not the flag, decides whether XLA ran: an xla=off case whose model
    compiles with XLA itself fails with cause `configuration`, naming the programs XLA ran.
    The step's ops, not the workload's word, decide the layout: an NCHW case that convolves in
    NHWC fails too."""
    suite = make_suite("hidden_xla", "nhwc_inside")
    one_device = [a for a in ONE_DEVICE_CONFIG if not a.startswith("--perf-only=data_format")]
    result = suite.runpytest(*one_device, "--perf-only=precision=fp32",
                             "--perf-only=workload=hidden_xla,nhwc_inside",
                             "--perf-rounds=2", "--perf-steps-per-round=5")
    # hidden_xla fails in both layouts; nhwc_inside only where it claims NCHW.
    outcomes = result.parseoutcomes()
    assert (outcomes.get("failed"), outcomes.get("no_baseline")) == (3, 1), result.stdout.str()
    result.stdout.fnmatch_lines_random([
        "*hidden_xla-cpu1-workers1-xla_off-NHWC-*: configuration: ConfigurationError: "
        "xla=off, yet XLA executed * times (its 2 programs, the largest first: "
        "*_compiled_cross_entropy* (* instructions), *; its largest instructions a step: xla:*",
        "*nhwc_inside-cpu1-workers1-xla_off-NCHW-*: configuration: ConfigurationError: * runs "
        "in NHWC, the case is NCHW*"])


def test_a_worker_left_before_its_case_came_removes_its_runner_s_scratch_folder(
        tmp_path: Path) -> None:
    """Its runner killed before it sent the case (the worker reads the end of its input): the
    worker still removes the scratch folder its runner made, which nobody else would until the
    next session starts."""
    folder = tmp_path / "tfperf-worker-1-a1b2c3d4"
    (folder / "xla-compilations").mkdir(parents=True)
    done = subprocess.run([sys.executable, "-m", "tfperf.worker"], stdin=subprocess.DEVNULL,
                          env={**os.environ, protocol.SCRATCH_ENV: str(folder)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "JSONDecodeError" in done.stderr, done.stderr
    assert not folder.exists()


def test_a_session_killed_mid_way_keeps_every_finished_case(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    results = suite.path / "history" / "results"
    temporary = suite.path / "tmp"  # the session's scratch folders, and its workers'
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary)}
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", "perf", "-p", "no:cacheprovider",
         # The nightly tier (at tiny size) takes both precisions: two cases, in this order.
         *ONE_DEVICE_CONFIG, "--perf-tier=nightly", "--perf-selection=all", "--perf-size=tiny",
         "--perf-only=preprocess=host", "--perf-only=precision=fp32,mixed_bf16",
         f"--perf-history={suite.path / 'history'}"],
        cwd=suite.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 300
        kept: list[Path] = []
        while not kept and time.monotonic() < deadline and session.poll() is None:
            time.sleep(0.1)
            kept = list(results.glob("*.json"))
        assert kept, "the first case never kept its run"
        assert session.poll() is None, "the session ended before it could be killed mid-way"
        session.send_signal(signal.SIGKILL)  # while the second case runs
        session.wait(timeout=30)
    finally:
        session.kill()
    runs = session_files.read_session(kept[0])  # whole and valid: written atomically
    assert [r.case_id.split("-")[7] for r in runs] == ["fp32"]
    assert not list(results.glob(".*.tmp"))
    store = ResultsStore.open(database.default_url(suite.path / "history"))
    try:  # the store holds the finished case, once, and nothing of the killed one
        [stored] = store.runs()
        assert stored["case_id"] == runs[0].case_id
        # With the figures the case reported, beside the run the gate reads.
        assert stored["figures"]["compile_s"] > 0 and stored["figures"]["examples_per_sec"] > 0
        assert store.counts()["failures"] == 0
    finally:
        store.close()
    report = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_gate", str(kept[0]),
                             f"--history={suite.path / 'history'}"], cwd=suite.path,
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert "| `tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-" in report.stdout
    # The orphaned worker reads the end of its input and exits.
    deadline = time.monotonic() + 60
    while worker_processes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert worker_processes() == []
    # What the killed session left in its temporary folder (a worker removes its own scratch
    # folder as it exits, but one not yet started when the session died cannot; an A/B
    # session's numerics folder, planted here), the next session that starts removes: their
    # maker is gone.
    (temporary / f"tfperf-ab-numerics-{session.pid}-a1b2c3d4").mkdir()
    listed = subprocess.run([sys.executable, "-m", "pytest", "perf", "--collect-only", "-q",
                             "-p", "no:cacheprovider", *ONE_DEVICE_CONFIG], cwd=suite.path,
                            env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert not list(temporary.iterdir())


def test_a_retrace_or_recompilation_during_the_measured_rounds_fails_the_case_as_not_steady(
        make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    # Under jit_compile a retrace is also a recompilation: both are counted and named.
    jit = tuple(a.replace("xla=off", "xla=jit") for a in ONE_DEVICE_CONFIG)
    steady = suite.runpytest(*jit, "--perf-rounds=3", "--benchmark-json=steady.json")
    assert steady.parseoutcomes().get("no_baseline") == 1, steady.stdout.str()
    info = json.loads((suite.path / "steady.json").read_text())["benchmarks"][0]["extra_info"]
    assert info["traces"]["during_measurement"] == 0 and info["traces"]["before_measurement"] > 0
    compilations = info["xla_compilations"]
    assert compilations["during_measurement"] == 0 and compilations["before_measurement"] > 0
    retraced = suite.runpytest(*jit, "--perf-rounds=3", "--perf-retrace-fault=tinycnn")
    retraced.assert_outcomes(failed=1)
    retraced.stdout.fnmatch_lines([
        "*tinycnn-cpu1-*: not_steady: during the measured rounds the training step was traced "
        "1 more time(s) and XLA compiled 1 more time(s): the measurement did not see steady "
        "state*"])

