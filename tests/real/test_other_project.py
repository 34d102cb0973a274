"""The harness in another team's repository: its layout named in pyproject.toml
([tool.tfperf]: tests, baselines, results), read alike by the plugin, tfperf-refresh, the gate
and tfperf-ab; one baseline folder that pytest-benchmark and every command agree on; the
suite's Hypothesis profiles named for it; and the pytest-benchmark internals the plugin leans
on, checked so that a new pytest-benchmark that moves them fails here, not silently."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import in_process
from tests.helpers.suites import TEST_WORKLOADS
from tfperf.commands import tfperf_gate
from tfperf.ground import project
from tfperf.ground.machine import detect

CASE = "tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"
# Five rounds: a session's median that one disturbed round does not move.
QUICK = ("--perf-rounds=5", "--perf-warmup-rounds=1", "--perf-steps-per-round=5")
LAYOUT = '[tool.tfperf]\ntests = "bench"\nbaselines = "shared/baselines"\nresults = "out"\n'


def _project(root: Path, layout: str = LAYOUT) -> Path:
    """No conftest.py, no pytest.ini: the installed plugin, a workloads folder, a test module
    that takes the suite's test, and the layout in pyproject.toml."""
    (root / "pyproject.toml").write_text(layout)
    (root / "workloads").mkdir()
    for name in ("_tiny.py", "tinycnn.py"):
        shutil.copy(TEST_WORKLOADS / name, root / "workloads")
    (root / "bench").mkdir()
    (root / "bench" / "test_suite.py").write_text(
        "from tfperf.suite.test_training import test_training\n\n__all__ = ['test_training']\n")
    return root


def _run(root: Path, *command: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *command], cwd=root, capture_output=True, text=True,
                          timeout=timeout)


def test_refresh_and_gate_run_in_a_project_outside_this_repository(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path)
    key = detect().key()
    # Beside another test's workers two sessions of this millisecond step have read 4.8x apart
    # (a spread of 97%): three sessions, whose robust spread one disturbed session does not
    # move, and a bound that only a broken measurement passes. This tests the layout.
    refreshed = _run(root, "-m", "tfperf.commands.tfperf_refresh", "-k", CASE, "--sessions", "3",
                     "--max-spread", "95", "--write", "--reason", "first baselines", "--",
                     *QUICK)
    assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
    entry = root / "shared" / "baselines" / key / "entries" / "0001.json"
    assert CASE in json.loads(entry.read_text())["cases"]
    assert len(list((root / "out" / "refresh").rglob("*.json"))) == 3
    # A gated session: its baselines are the ones refresh wrote, its history under out/. Its
    # floors keep the machine's load out (the self-tests run two at a time): that refresh and
    # the gate work in this layout is what this tests, not how close a call the gate makes.
    (root / "shared" / "baselines" / "gate.toml").write_text("".join(
        f'[{table}]\n"tinycnn-" = 0.9\n' for table in ("floors", "compile_floors",
                                                       "memory_floors")))
    night = _run(root, "-m", "pytest", "bench", "-k", CASE, "-p", "no:cacheprovider", *QUICK)
    assert night.returncode == 0, night.stdout + night.stderr
    assert "no history" not in night.stdout and "NO BASELINE" not in night.stdout, night.stdout
    kept = sorted((root / "out" / "history").rglob("*.json"))
    assert len(kept) == 1
    monkeypatch.chdir(root)
    gated = in_process.run(tfperf_gate.main, str(kept[0]), capsys=capsys)
    assert gated.code == 0, gated.out + gated.err
    assert CASE in (root / "out" / "reports" / "summary.md").read_text()
    assert not (root / ".perf-results").exists() and not (root / ".benchmarks").exists()


def test_a_benchmark_storage_that_is_not_the_baselines_folder_stops_the_session(
        tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = _run(root, "-m", "pytest", "bench", "-k", CASE, "-p", "no:cacheprovider",
                "--benchmark-storage=file://elsewhere", *QUICK)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    assert len(said) == 1 and re.match(
        r"ERROR: pytest-benchmark stores in \S+/elsewhere \(--benchmark-storage\) but the "
        r"project's baselines are \S+/shared/baselines \(", said[0]), done.stderr


@pytest.mark.parametrize(("layout", "says"), [
    ('[tool.tfperf]\nbaseline = "b"\n', "no setting 'baseline'; valid: tests, baselines, results"),
    ('[tool.tfperf]\nresults = ""\n', "results = '' is not a folder path"),
])
def test_a_bad_layout_is_one_line_before_any_work(tmp_path: Path, layout: str, says: str) -> None:
    root = _project(tmp_path, layout)
    with pytest.raises(project.ProjectError, match=says):
        project.find(root / "bench")
    for command in (("-m", "tfperf.commands.tfperf_refresh", "--list"),
                    ("-m", "pytest", "bench", "--collect-only", "-q")):
        done = _run(root, *command, timeout=300)
        assert done.returncode != 0 and says in done.stderr, done.stdout + done.stderr


def test_the_pytest_benchmark_internals_the_plugin_uses_are_there(
        pytester: pytest.Pytester) -> None:
    """The plugin names the storage sub-folder by the machine key and asks for the JSON report
    through pytest-benchmark's session object, which is not public API."""
    pytester.makeconftest('''
def pytest_sessionstart(session):
    bench = session.config._benchmarksession
    assert isinstance(bench.machine_id, str)
    assert isinstance(bench.storage.default_machine_id, str)
    assert callable(bench.handle_loading)
    assert hasattr(bench, "json")
    assert str(bench.storage)
''')
    pytester.makepyfile("def test_one():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
