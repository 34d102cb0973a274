"""tfperf-bisect end to end, with real A/B sessions of real workers over a generated git history
(tests/helpers/bisect_repo.py): it finds the commit that added work, skipping one that does not build;
ends that are not apart stop with one line; bad ranges, specs and selections get one line
before anything runs. The search and its error budget alone: test_bisect_search.py."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.version import Version

from tests.helpers import bisect_repo, in_process
from tests.helpers.bisect_repo import CASE_ID, SELECT, History
from tests.helpers.suites import worker_processes
from tfperf.bisect import candidates
from tfperf.commands import tfperf_bisect
from tfperf.storage import database
from tfperf.storage.results_store import ResultsStore

# The generated change multiplies the work by six (base 2 blocks, 10 added: B/A about 0.24), far
# beyond a floor of 40%. (At 4 and 20, B/A 0.22, each step's workers built and traced twice the
# blocks: 1.6 against 0.7 CPU-s a side-B worker.) Beside the other self-tests' workers a step's
# pairs spread 18-30% and its duets 0-18% (measured in the whole run), so a look's interval on
# few duets is wide: at 16 pairs a 3x slowdown read [0.19, 0.90] and [0.07, 1.64] with looks up
# to 64 (1/16 of the step's alpha at the first). One look, at 16 pairs, has all of it: twelve times
# the work decides there. (Looks at 16 and 32 gave the first a quarter: a step of the reversed
# range below ran to 32 pairs in one whole run of four, 83 s against 41-44 s. An unchanged step
# decides at 32 at best, [0.78, 1.26] was read there, or stays undecided: the history below
# takes none.) Two duets relayed every 4 pairs: the interval's degrees of freedom are the duets'
#, and 16 pairs on two duets of 8 leave it one; on four of 4 it has three.
# Twelve times the work, not six: at six a whole run beside the self-tests read the confirmation
# at B/A 0.219 [0.075, 0.643] (2026-12-06), its interval on 3 degrees of freedom not clear of
# the floor's 0.6; a turn is timed (0.15 s), so more work a step costs the step no time.
ADDED = 22
QUICK = ("--floor", "40", "--pairs", "16:16", "--confirm-pairs", "16")
# A yardstick burst at each duet's first pair only (its four pairs are under a second): the
# bursts are a third of a pair at 0.15 s turns, and a step's verdict does not use them.
RUN = (*SELECT, "--perf-ab-turn=0.15", "--perf-warmup-rounds=2", "--perf-ab-duets=2",
       "--perf-ab-relay=4", "--perf-ab-yardstick-every=4")


def _bisect(project: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_bisect", *args],
                          cwd=project, capture_output=True, text=True, timeout=timeout,
                          check=False)


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[str]]:
    """A project, and a repository of 5 commits of a stack of 2 blocks (milliseconds a step):
    1 adds 22 (twelve times the work), 2 does not import. The search tries 2 first (the middle),
    skips it and tries 1: every step it takes is a slowdown, decided at its first look. Where
    the good end moves on `same` (an A/A step, the costliest a bisection takes): the searches
    of test_bisect_search.py; a real A/A's `same`: test_ab.py."""
    project = bisect_repo.make_project(tmp_path / "project")
    shas = bisect_repo.make_repository(tmp_path / "repo", History(5, {1: ADDED}, frozenset({2}),
                                                                  base_blocks=2))
    return project, shas


@pytest.mark.long
def test_a_bisection_over_commits_names_the_one_that_added_work(
        history: tuple[Path, list[str]]) -> None:
    project, shas = history
    done = _bisect(project, "commits", "../repo", "HEAD~4..HEAD", *QUICK, "--", *RUN)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert f"culprit: {shas[1][:12]} add {ADDED} blocks (Bisect Fixture <fixture@example.invalid>" \
        in out, out
    assert f"last good: {shas[0][:12]} tidy the stack (0)" in out
    assert f"skipped {shas[2][:10]}: ERROR: " in out and "cannot be imported" in out
    (folder,) = (project / ".perf-results" / "reports" / "bisect").iterdir()
    doc = json.loads((folder / "bisect.json").read_text())
    assert doc["case_id"] == CASE_ID and doc["culprit"] == 1 and doc["good"] == 0
    steps = [(s["candidate"], s["against"], s["verdict"]) for s in doc["steps"]]
    assert steps == [(4, 0, "slower"), (2, 0, "skipped"), (1, 0, "slower")], steps
    confirm = doc["steps"][0]
    assert confirm["ratio"] < 0.5 and confirm["pairs"] >= 16
    # Each verdict at its share of the 5%: 3 planned (confirmation and 2 halvings of 4).
    assert doc["planned"] == 3 and confirm["confidence"] == pytest.approx(1 - 0.05 / 4)
    md = (folder / "bisect.md").read_text()
    assert "| 1 (confirm) |" in md and "![B/A against the candidates](bisect.png)" in md
    assert (folder / "bisect.png").stat().st_size > 10_000
    store = ResultsStore.open(database.default_url(project / ".perf-results" / "history"))
    try:
        (kept,) = store.bisects(CASE_ID)
        assert kept.culprit == shas[1][:10] and kept.last_good == shas[0][:10]
        assert kept.document["steps"] == doc["steps"]
        # Each step's A/B session is kept as every A/B session is.
        assert {c.document["case_id"] for c in store.ab_cases()} == {CASE_ID}
        assert len(store.ab_cases()) == sum(v != "skipped" for _, _, v in steps)
        # Steps follow speed: no numerics arms trained, no slower step profiled.
        assert all(c.document["numerics"] is None and c.document["where"] is None
                   for c in store.ab_cases())
        # A duet's sides burst their yardstick at its first pair, and at no other.
        for case in store.ab_cases():
            served: Counter[int] = Counter()
            for pair in case.document["pairs"]:
                burst = served[pair["duet"]] == 0
                assert (pair["a_yardstick"] is not None, pair["b_yardstick"] is not None) == \
                    (burst, burst), case.document["pairs"]
                served[pair["duet"]] += 1
    finally:
        store.close()


@pytest.mark.long
def test_a_bisection_follows_peak_memory_or_a_build_that_fails_as_configured(
        tmp_path: Path) -> None:
    """Any finding is bisected as a slowdown is: here the commit that added 64 MiB of ballast
    (peak memory, at the memory floor of 10%), and the one that compiled the loss with XLA in a
    case named xla_off (each step a run of the candidate: it fails as configured or it runs)."""
    project = bisect_repo.make_project(tmp_path / "project")
    # Three commits, the last the culprit: a step that finds no change (1 against 0) and the
    # confirmation, the two kinds of step a bisection takes (each a real A/B of 16 pairs).
    memory = bisect_repo.make_repository(tmp_path / "memory", History(
        3, ballast={2: 64}, base_blocks=2))
    done = _bisect(project, "commits", "../memory", "HEAD~2..HEAD", "--finding", "memory",
                   "--pairs", "16:16", "--confirm-pairs", "16", "--", *RUN)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"culprit: {memory[2][:12]} add 64 MiB of ballast" in done.stdout, done.stdout
    assert "when it raises its peak device memory by at least twice" in done.stdout
    (folder,) = (project / ".perf-results" / "reports" / "bisect").iterdir()
    doc = json.loads((folder / "bisect.json").read_text())
    assert doc["followed"] == "memory" and doc["culprit"] == 2
    verdicts = [(s["candidate"], s["against"], s["verdict"]) for s in doc["steps"]]
    assert verdicts[0] == (2, 0, "higher") and verdicts[-1][:2] == (1, 0), verdicts
    assert verdicts[-1][2] in ("same", "lower"), verdicts
    assert doc["steps"][0]["low"] > 1.1  # B/A of the peak memory, not of speed

    compiled = bisect_repo.make_repository(tmp_path / "compiled", History(
        3, compiled_from=2, base_blocks=2))
    done = _bisect(project, "commits", "../compiled", "HEAD~2..HEAD", "--finding",
                   "configuration", "--pairs", "16:16", "--", *RUN)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"culprit: {compiled[2][:12]} compile the loss with XLA" in done.stdout, done.stdout
    assert "fails: " in done.stdout and "xla=off, yet XLA executed" in done.stdout
    doc = json.loads(max((project / ".perf-results" / "reports" / "bisect").glob(
        "*/bisect.json"), key=lambda p: p.stat().st_mtime).read_text())
    steps = [(s["candidate"], s["against"], s["verdict"]) for s in doc["steps"]]
    assert steps == [(2, 0, "fails"), (1, 0, "runs")], steps


def test_an_end_that_cannot_be_measured_stops_with_one_line(
        history: tuple[Path, list[str]]) -> None:
    # The bad end's model cannot be built: the confirmation cannot measure it, and the
    # bisection stops there, as it stops on ends that are not apart (same, faster or
    # undecided), each with its own line: test_bisect_search.py. A real step of those is an
    # A/B of 16 pairs (34-46 s of the whole run); this one ends when side B fails to build.
    project, shas = history
    bad = bisect_repo.commit_unbuildable(project.parent / "repo", "a stack that cannot build")
    done = _bisect(project, "commits", "../repo", f"{shas[0]}..HEAD", *QUICK, "--", *RUN)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"tfperf-bisect: the bad end {bad[:10]} cannot be measured: ") \
        and "this revision's stack cannot be built" in line, line
    (folder,) = (project / ".perf-results" / "reports" / "bisect").iterdir()
    doc = json.loads((folder / "bisect.json").read_text())
    assert doc["culprit"] is None and [s["verdict"] for s in doc["steps"]] == ["skipped"]


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:  # it has just ended: the loop's poll sees it next
        return []


def test_a_bisection_stopped_by_sigterm_ends_its_running_step(
        history: tuple[Path, list[str]], tmp_path: Path) -> None:
    # A CI job's timeout or cancel sends SIGTERM: the step's A/B session must not run on.
    project, _ = history
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        bisect = subprocess.Popen(
            [sys.executable, "-m", "tfperf.commands.tfperf_bisect", "commits", "../repo",
             "HEAD~4..HEAD", *QUICK, "--", *RUN], cwd=project, stdout=sink,
            stderr=subprocess.STDOUT)
    try:
        # The step and its workers are read together, once: a step's first worker (its
        # environment probe) ends 1-2 s before its duets' workers start, and a second look
        # fell in that gap once (CI, at 60cc301).
        steps: list[str] = []
        workers: list[int] = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and bisect.poll() is None and not (steps and workers):
            time.sleep(0.2)
            if "step 1:" in out.read_text():
                steps, workers = _children(bisect.pid), worker_processes()
        assert bisect.poll() is None and steps and workers, out.read_text()
        bisect.send_signal(signal.SIGTERM)
        code = bisect.wait(timeout=60)
    finally:
        bisect.kill()
    (step,) = steps
    assert not Path(f"/proc/{step}").exists()  # ended and reaped, not left to run on
    assert code == 128 + signal.SIGTERM  # as a shell reports a process SIGTERM ended
    deadline = time.monotonic() + 60  # its workers read the end of their input and exit
    while worker_processes() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert worker_processes() == []


def test_a_tensorflow_that_cannot_be_installed_is_skipped_and_reported(
        history: tuple[Path, list[str]]) -> None:
    # The bad end cannot be installed: the bisection stops before any A/B, naming the
    # installer's reason. (A candidate inside the range that cannot be built is skipped and
    # the next tried: the commits bisection above; a range whose every inner candidate was
    # skipped: test_bisect_search.py.)
    project, _ = history
    done = _bisect(project, "specs", "current", sys.executable, "tensorflow-cpu==0.0.1", *QUICK,
                   "--", *RUN, "--perf-workloads=../repo/workloads")
    assert done.returncode == 2, done.stdout + done.stderr  # the search could not start
    assert "skipped: ERROR: --perf-tensorflow=tensorflow-cpu==0.0.1: cannot install" in done.stdout
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("tfperf-bisect: the bad end tensorflow-cpu==0.0.1 cannot be measured: "
                           "ERROR: --perf-tensorflow=tensorflow-cpu==0.0.1: cannot install "
                           "'tensorflow-cpu==0.0.1'"), line
    (folder,) = (project / ".perf-results" / "reports" / "bisect").iterdir()
    doc = json.loads((folder / "bisect.json").read_text())
    assert [s["verdict"] for s in doc["steps"]] == ["skipped"]


@pytest.mark.parametrize(("args", "says"), [
    (("commits", "../repo", "HEAD~7"), "'HEAD~7' is not a range of commits: give GOOD..BAD"),
    (("commits", "../repo", "HEAD..HEAD~3"), "is not an ancestor of the bad end"),
    (("commits", "../repo", "nope..HEAD"), "the good end 'nope' is not a commit of"),
    (("commits", "../repo", "HEAD~2..HEAD", "--folder", "models"), "has no folder 'models'"),
    (("commits", "../nowhere", "HEAD~2..HEAD"), "is not a git repository"),
    (("specs", "tensorflow-cpu==2.20.0"), "1 spec given: name the good end first"),
    (("specs", "tensorflow-cpu==2.20.0", "./no/python"),
     "spec 2 of 2: './no/python' is not an executable Python interpreter"),
    (("releases", "tensorflow-cpu==2.20", "2.16.2..2.21.0"), "is not a package name"),
    (("releases", "tensorflow-cpu", "2.16.2-2.21.0"), "is not a range of releases: give LOW..HIGH"),
    (("releases", "tensorflow-cpu", "2.21.0..2.16.2"), "the good end must be the older version"),
    (("releases", "tensorflow-cpu", "2.16.3..2.21.0"),
     "the good end 2.16.3 is not a version of tensorflow-cpu on the package index (it has "
     "2.16.0rc0, 2.16.1, 2.16.2)"),
    (("releases", "keras", "3.10.0..3.15.1", "--beside", "tensorflow-cpu>>2"),
     "--beside: 'tensorflow-cpu>>2' is not a TensorFlow requirement or wheel"),
    (("releases", "tensorflow-cpu", "2.16.2..2.21.0", "--beside", "tensorflow-cpu==2.21.0"),
     "--beside: tensorflow-cpu is TensorFlow itself"),
    (("nightlies", "tensorflow-cpu", "2026-11-01..2026-11-24"),
     "the package index has 0 nightly of tensorflow-cpu from 2026-11-01 to 2026-11-24"),
    (("nightlies", "tensorflow-cpu", "2026-11-01..yesterday"), "the bad end 'yesterday' is not a "
                                                               "date (YYYY-MM-DD)"),
    (("commits", "../repo", "HEAD~2..HEAD", "--", "-k", "stack", "--perf-ab-pairs=8:8"),
     "--perf-ab-pairs is set by each step"),
    (("commits", "../repo", "HEAD~2..HEAD", "--", "-k", "stack and cpu1", "--perf-tier=full",
      "--perf-only=workers=1"), "a bisection follows one; narrow -k"),
    (("commits", "../repo", "HEAD~2..HEAD", "--", "-k", "resnet20"),
     "the pytest arguments select no training case"),
])
def test_bad_input_gets_one_line_before_anything_runs(
        history: tuple[Path, list[str]], args: tuple[str, ...], says: str,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    project, _ = history
    monkeypatch.chdir(project)
    done = in_process.run(tfperf_bisect.main, *args, capsys=capsys)
    assert done.code == 2, done.out + done.err
    (line,) = done.err.strip().splitlines()[-1:]
    assert says in line, done.err
    assert len(done.err.strip().splitlines()) <= 3  # argparse adds its usage lines
    assert not (project / ".perf-results" / "ab").exists()  # no step ran


def test_releases_and_nightlies_are_enumerated_from_the_index_list() -> None:
    listed = candidates.index_versions("tensorflow-cpu")  # the real index, through pip
    assert {"2.16.2", "2.20.0", "2.21.0"} <= set(listed)
    found = candidates.releases(candidates.package("tensorflow-cpu"), "2.16.2..2.21.0", listed)
    assert [c.tensorflow for c in found] == [
        f"tensorflow-cpu=={v}" for v in ("2.16.2", "2.17.0", "2.17.1", "2.18.0", "2.18.1",
                                         "2.19.0", "2.19.1", "2.20.0", "2.21.0")]
    # Pre-releases only as an end that names one.
    found = candidates.releases(candidates.package("tensorflow[and-cuda]"), "2.21.0..2.22.0rc0",
                                ["2.21.0", "2.21.1", "2.22.0rc0", "2.22.0.dev20261101"])
    assert [c.tensorflow for c in found] == ["tensorflow[and-cuda]==2.21.0",
                                             "tensorflow[and-cuda]==2.21.1",
                                             "tensorflow[and-cuda]==2.22.0rc0"]
    # A package other than TensorFlow: each candidate runs beside a TensorFlow.
    found = candidates.beside(candidates.releases(candidates.package("keras"), "3.14.0..3.15.1",
                                                  ["3.14.0", "3.15.0", "3.15.1", "3.16.0"]),
                              "tensorflow-cpu==2.21.0")
    assert [(c.label, c.tensorflow) for c in found] == [
        (f"keras=={v}", f"tensorflow-cpu==2.21.0 keras=={v}") for v in ("3.14.0", "3.15.0",
                                                                       "3.15.1")]
    assert candidates.installed_tensorflow() == f"tensorflow-cpu=={version('tensorflow-cpu')}"
    assert not candidates.is_tensorflow("keras") and candidates.is_tensorflow("tf-nightly-cpu")
    # tf-nightly's and keras-nightly's version forms: the newest of each date, in date order.
    nightly = ["2.22.0.dev20261101", "2.22.0.dev20261103", "2.21.0", "2.22.0.dev20261031",
               "3.13.0.dev2026110207", "3.13.0.dev2026110211", "2.22.0.dev20261125"]
    found = candidates.nightlies(candidates.package("tf-nightly"), "2026-11-01..2026-11-24",
                                 nightly)
    assert [c.label for c in found] == ["tf-nightly==2.22.0.dev20261101",
                                        "tf-nightly==3.13.0.dev2026110211",
                                        "tf-nightly==2.22.0.dev20261103"]


def test_a_scheduled_night_s_candidate_is_read_from_the_real_index() -> None:
    """tfperf-candidate through pip, as the nightly's candidate job runs it."""
    def candidate(pinned: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_candidate",
                               "--pinned", pinned, "--release-package", "tensorflow-cpu",
                               "--nightly-package", "tf-nightly"],
                              capture_output=True, text=True, timeout=300, check=False)

    older = candidate("2.20.0")  # 2.21.0 at least is newer
    assert older.returncode == 0, older.stderr
    name, version = older.stdout.strip().split("==")
    assert name == "tensorflow-cpu" and Version(version) >= Version("2.21.0")
    assert older.stderr.strip() == f"candidate: tensorflow-cpu=={version}, the newest release, " \
        "newer than the pinned 2.20.0"
    newest = candidate("99.0.0")  # no newer release: the newest nightly
    assert newest.returncode == 0, newest.stderr
    assert newest.stdout.startswith("tf-nightly==") and ".dev" in newest.stdout
    assert newest.stderr.startswith(f"candidate: {newest.stdout.strip()}, the newest nightly (")
    followed = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_candidate",
                               "--nightly", "--nightly-package", "tf-nightly"],
                              capture_output=True, text=True, timeout=300, check=False)
    assert followed.returncode == 0 and followed.stdout == newest.stdout, followed.stderr
    assert followed.stderr.startswith(f"following {newest.stdout.strip()}, the newest nightly (")
