"""The A/B comparison end to end, with real sessions of real workers: an A/A session says
`same`, an op made slower in side B says `slower`, fails the session and is profiled, the standalone
command judges the kept session again, a side that crashes is named, bad specs and options stop
the session with one line. The verdict's statistics: test_ab_verdict.py."""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import in_process
from tests.helpers.ab_sessions import AB, CASE, CASE_ID, SessionRun, session_file
from tests.helpers.suites import TEST_WORKLOADS, MakeSuite
from tfperf.commands import tfperf_ab
from tfperf.gate.summary_and_trends import slug
from tfperf.options.ab_settings import ABSettings
from tfperf.processes import environments, packages, session_runtimes
from tfperf.storage import database
from tfperf.storage.results_store import ResultsStore


@pytest.mark.long
def test_an_a_a_session_says_same_and_reports_both_sides(a_a_session: SessionRun) -> None:
    assert a_a_session.ret == pytest.ExitCode.OK, a_a_session.output
    a_a_session.stdout.fnmatch_lines(["*tfperf A/B: smoke tier on *",
                                 "A = reference: TensorFlow 2.21.0 (current*",
                                 f"{CASE_ID}  * same * [0-9]*"])
    data = a_a_session.session_file()
    assert data["settings"]["steps_per_round"] == 10  # the user's, not the A/B default
    case = data["cases"][0]
    assert case["failure"] is None and case["looks"][-1]["status"] == "same"
    # The default duets at a time, relayed every 2 pairs, all measured: odd ones started A's
    # worker first, even ones B's.
    assert data["settings"]["duets"] == ABSettings().duets
    duets, relay = ABSettings().duets, data["settings"]["relay"]
    relays = -(-len(case["pairs"]) // (duets * relay))  # ceil: each slot relayed per `relay`
    assert {p["duet"] for p in case["pairs"]} == set(range(1, duets * relays + 1))
    assert {p["order"] for p in case["pairs"]} == {"AB", "BA"}
    assert set(case["order_effect"]) == {"a_first_ratio", "b_first_ratio"}
    for side in "AB":  # every check of a measured case, on both sides
        assert case["sides"][side]["loss_last"] < case["sides"][side]["loss_first"]
        assert case["sides"][side]["layout_ops_checked"]
    # What the workers' CPUs did in each turn: the one whose turn it was trained, the
    # others waited (a thread pool that spins would show here, as busy idle workers).
    active = [p["active_cores"] for p in case["pairs"]]
    idle = [p["idle_cores"] for p in case["pairs"]]
    assert all(p["rounds"] >= 1 and p["a_yardstick"] > 0 and p["b_yardstick"] > 0
               for p in case["pairs"])
    assert min(active) > 0 and min(idle) >= 0 and np.median(idle) < np.median(active)
    # Each turn's rounds' wall seconds, and its worker's CPU seconds on them: figures of the
    # same turns other than examples/s by wall time (benchmarks/ab_time_figures.py).
    for p in case["pairs"]:
        for side in "ab":
            assert len(p[f"{side}_round_s"]) == p["rounds"] and min(p[f"{side}_round_s"]) > 0
            assert 0 < p[f"{side}_cpu_s"] < 8 * sum(p[f"{side}_round_s"])
    a_a_session.stdout.fnmatch_lines(["each duet's own speed: B/A spread *% between duets beyond "
                                 f"sampling, median over cases; {duets * relays} duets a case "
                                 "(median), *",
                                 "CPU cores busy during a turn, median over pairs: the side "
                                 "training *, the idle workers together *"])
    reports = a_a_session.path / ".perf-results" / "reports" / "ab"
    assert "| `tinycnn-" in (reports / "ab.md").read_text()
    assert list((reports / "plots").glob("tinycnn-*.png"))
    # Progress while it ran (plain lines: no terminal here): the case, then each look.
    a_a_session.stdout.re_match_lines([
        rf"tfperf: case 1 of 1 \| {CASE_ID} \| 0m00s in this case, .* in all$",
        rf"tfperf: case 1 of 1 \| {CASE_ID} \| .* \| {case['looks'][0]['pairs']} pairs: "
        r"B/A \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\], (same|undecided)$"])
    # The store holds the case with its verdict and interval.
    store = ResultsStore.open(database.default_url(a_a_session.path / ".perf-results" / "history"))
    try:
        [stored] = store.ab_cases(data["session"])
    finally:
        store.close()
    assert (stored.case_id, stored.verdict, stored.pairs) == (CASE_ID, "same", len(case["pairs"]))
    assert stored.low is not None and stored.high is not None and stored.ratio is not None
    assert stored.low < stored.ratio < stored.high
    compare = subprocess.run([str(Path(sys.executable).parent / "pytest-benchmark"), "compare",
                              str(reports / "A.json"), str(reports / "B.json")],
                             capture_output=True, text=True, timeout=120)
    assert compare.returncode == 0 and CASE_ID in compare.stdout, compare.stderr


SLOWER_TINYCNN = '''"""tinycnn made slower on purpose: its loss also sorts a tensor it does not need."""

import tensorflow as tf
from _tiny import TinyCNN


class SlowerTinyCNN(TinyCNN):
    def loss(self, labels, outputs):
        spread = tf.tile(tf.reshape(tf.cast(outputs, tf.float32), [-1]), [512])
        # It depends on the outputs, so nothing folds it away, and weighs nothing in the loss.
        return super().loss(labels, outputs) + 1e-12 * tf.reduce_min(tf.sort(spread))


WORKLOAD = SlowerTinyCNN()
'''


@pytest.mark.long
def test_a_slowdown_of_side_b_says_slower_fails_the_session_and_is_judged_again(
        make_suite: MakeSuite, capsys: pytest.CaptureFixture[str]) -> None:
    """Side B's tinycnn sorts a tensor it does not need (an op made slower on purpose): the
    session says slower, and each side then runs one more round alone under the
    profiler, and the where-report names the sort's op first."""
    suite = make_suite("tinycnn")
    main = suite.path / "main_workloads"
    main.mkdir()
    for name in ("_tiny.py", "tinycnn.py"):
        shutil.copy(TEST_WORKLOADS / name, main)
    (suite.path / "workloads" / "tinycnn.py").write_text(SLOWER_TINYCNN)
    # A relay every 2 pairs: duets 3 and 4 take over from 1 and 2. B/A about 0.09 (the sort),
    # far beyond the 20% floor (at 0.67, a slowdown injected before, such a session ran to
    # 90 s; at 0.56, 30-60 s). One look, at 8 pairs, with all the alpha: 4 duets give t(3),
    # whose 97.5% quantile is 3.2, so that even duets 30% apart leave the interval below
    # 0.15. (At 8:96 the first look had a sixteenth of the alpha and never decided; at 16:32,
    # 8 duets, a quarter: each duet is two workers to start, most of the session's CPU.)
    # Turns of 0.25 s, not AB's 0.5: a pair's noise rises, far from what the verdict needs.
    result = suite.runpytest(*CASE, *AB, "--perf-ab-duets=2", "--perf-ab-relay=2",
                             "--perf-ab-pairs=8", "--perf-ab-turn=0.25",
                             "--perf-ab-side-a-workloads=main_workloads")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines([
        "*slower: side B is slower than side A: B/A 0.*", f"{CASE_ID}  * slower * [0-9]*",
        f"{CASE_ID}: where: largest op changes a step, A -> B: TopKV2 0.000 -> * ms*"])
    case = session_file(suite.path)["cases"][0]
    where = case["where"]
    assert where["A"]["steps"] == where["B"]["steps"] == 10, where
    ops = {name: {op for op, _, _ in where[name]["ops"]} for name in "AB"}
    assert "TopKV2" in ops["B"] and "TopKV2" not in ops["A"] and where["A"]["every_op"], ops
    assert any("Conv2D" in op for op in ops["A"] & ops["B"]), ops  # the step's own, on both
    assert "profiled rounds" in dict(where["B"]["memory_by_phase"]), where["B"]
    reports = suite.path / ".perf-results" / "reports" / "ab"
    text = (reports / "ab.md").read_text()
    assert "## Where in the step" in text and "| `TopKV2` | 0.000 | " in text, text
    assert "XLA clusters run: A none; B none." in text
    assert (reports / "plots" / f"{slug(CASE_ID)}.where.png").stat().st_size > 0
    for name in "AB":  # the traces stay for TensorBoard, each side's in its folder
        assert list((suite.path / where["folder"] / name).rglob("*.xplane.pb")), name
    served = Counter(p["duet"] for p in case["pairs"])
    assert len(served) == len(case["pairs"]) // 2 >= 4 and set(served.values()) == {2}, served
    assert case["relay_s"] > 0
    # Each duet's own workers, each with its own log.
    logs = suite.path / ".perf-results" / "logs"
    assert all((logs / f"{CASE_ID}.{side}{number}.log").exists()
               for number in served for side in "AB")
    (kept,) = (suite.path / ".perf-results" / "ab").glob("*.json")
    done = in_process.run(tfperf_ab.main, str(kept), capsys=capsys)
    assert done.code == 1 and " slower " in done.out, done.out + done.err
    # Judged with another floor, the same pairs give the same intervals (a floor moves no
    # interval), judged at that floor: slower only where one lies wholly below 0.51.
    looks = json.loads(kept.read_text())["cases"][0]["looks"]
    done = in_process.run(tfperf_ab.main, str(kept), "--floor=49", capsys=capsys)
    said = re.search(rf"{CASE_ID} .* \[(\d\.\d+), (\d\.\d+)\]  +(\w+) ", done.out)
    assert said, done.out + done.err
    low, high, status = said.groups()
    assert (low, high) in {(f"{look['low']:.3f}", f"{look['high']:.3f}") for look in looks}, \
        (said.group(0), looks)
    slower = float(high) < 0.51
    assert (status == "slower", done.code) == (slower, 1 if slower else 0), done.out + done.err
    broken = suite.path / "broken.json"
    broken.write_text('{"format": "tfperf-ab/1"}')
    done = in_process.run(tfperf_ab.main, str(broken), capsys=capsys)
    assert done.code == 2 and "is not a valid tfperf A/B session file" in done.err
    # A file names the rule its looks were judged by; one it does not know is refused.
    data = json.loads(kept.read_text())
    assert data["settings"]["look_rule"] == "trimmed"
    # Each duet ran AB once and BA once, in an order drawn from the kept seed.
    assert isinstance(data["settings"]["seed"], int)
    for number in served:
        assert sorted(p["order"] for p in case["pairs"] if p["duet"] == number) == ["AB", "BA"]
    # A file kept under `duets` is judged as it ran: degrees of freedom chosen by the floor.
    data["settings"]["look_rule"] = "duets"
    broken.write_text(json.dumps(data))
    done = in_process.run(tfperf_ab.main, str(broken), capsys=capsys)
    assert done.code == 1 and "chosen by whether that floor binds" in \
        (suite.path / ".perf-results" / "reports" / "ab" / "ab.md").read_text(), done.out
    # A file kept under `spending` is judged as it ran: its pairs as independent.
    data["settings"]["look_rule"] = "spending"
    broken.write_text(json.dumps(data))
    done = in_process.run(tfperf_ab.main, str(broken), capsys=capsys)
    assert done.code == 1 and "pairs taken as independent" in \
        (suite.path / ".perf-results" / "reports" / "ab" / "ab.md").read_text(), done.out
    data["settings"]["look_rule"] = "pocock"
    broken.write_text(json.dumps(data))
    done = in_process.run(tfperf_ab.main, str(broken), capsys=capsys)
    assert done.code == 2 and "look_rule" in done.err \
        and len(done.err.strip().splitlines()) == 1, done.err


def test_a_side_that_crashes_fails_the_case_and_is_named(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    other = suite.path / "main_workloads"
    other.mkdir()
    shutil.copy(TEST_WORKLOADS / "_tiny.py", other)
    # Side A's tinycnn is the segfaulting one.
    text = (TEST_WORKLOADS / "segfault.py").read_text().replace('name = "segfault"',
                                                                 'name = "tinycnn"')
    (other / "tinycnn.py").write_text(text)
    # Without --perf-steps-per-round, as a user runs it: an A/B round is then 1 step.
    result = suite.runpytest(*CASE, *(o for o in AB if "steps-per-round" not in o),
                             "--perf-ab-duets=2", "--perf-ab-side-a-workloads=main_workloads")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*crash: side A (reference, TensorFlow 2.21.0 (current)): worker killed by SIGSEGV "
        "while building*"])
    data = session_file(suite.path)
    assert data["cases"][0]["failure"]["cause"] == "crash"
    assert data["settings"]["steps_per_round"] == 1


@pytest.mark.parametrize(("options", "message"), [
    (("--perf-ab-side-a=tensorflow-cpu>=",),
     "ERROR: --perf-ab-side-a: 'tensorflow-cpu>=' is not a pip requirement, a wheel file or a "
     "Python interpreter (*)"),
    (("--perf-tensorflow=/no/such/python",),
     "ERROR: --perf-tensorflow: '/no/such/python' is not an executable Python interpreter"),
    (("--perf-ab-side-a=missing.whl",), "ERROR: --perf-ab-side-a: no wheel file 'missing.whl'"),
    (("--perf-ab-floor=2",), "ERROR: --perf-ab-floor: only with --perf-ab-side-a (an A/B comparison)"),
    (("--perf-ab-side-a=current", "--perf-ab-floor=80"),
     "ERROR: --perf-ab-floor: '80' is not a percentage above 0 and below 50"),
    (("--perf-ab-side-a=current", "--perf-ab-confidence=100"),
     "ERROR: --perf-ab-confidence: '100' is not a percentage from 50 to below 100"),
    (("--perf-ab-side-a=current", "--perf-ab-pairs=9:3"),
     "ERROR: --perf-ab-pairs: '9:3' is not MIN:MAX with 6 <= MIN <= MAX"),
    (("--perf-ab-side-a=current", "--perf-ab-duets=3"),
     "ERROR: --perf-ab-duets: '3' is not an even number from 2 to 16"),
    (("--perf-ab-side-a=current", "--perf-ab-cost-floors=25"),
     "ERROR: --perf-ab-cost-floors: '25' is not TIME:MEMORY, two percentages above 0 and below "
     "1000, e.g. 25:10"),
    (("--perf-ab-side-a=current", "--perf-ab-relay=-1"),
     "ERROR: --perf-ab-relay: '-1' is not a whole number of pairs from 2 (0: never)"),
    # The verdict estimates each duet's spread from its own pairs (random_effects.py).
    (("--perf-ab-side-a=current", "--perf-ab-relay=1"),
     "ERROR: --perf-ab-relay: '1' is not a whole number of pairs from 2 (0: never)"),
    (("--perf-ab-side-a=current", "--perf-ab-pairs=8:64", "--perf-ab-duets=8"),
     "ERROR: --perf-ab-pairs: MIN 8 is less than two pairs for each of the 8 duets; give MIN "
     "of at least 16 or fewer --perf-ab-duets"),
    (("--perf-ab-side-a=current", "--perf-ab-yardstick-every=0"),
     "ERROR: --perf-ab-yardstick-every: '0' is not a whole number of pairs from 1"),
    (("--perf-ab-side-a=current", "--perf-ab-side-a-env=NOVALUE"),
     "ERROR: --perf-ab-side-a-env: 'NOVALUE' is not NAME=VALUE"),
    (("--perf-ab-side-a=current", "--perf-ab-side-a-workloads=nowhere"),
     "ERROR: --perf-ab-side-a-workloads: no folder 'nowhere'"),
    # Found when the session starts, still before any case.
    (("--perf-tensorflow=tensorflow-cpu==0.0.1",),
     "ERROR: --perf-tensorflow=tensorflow-cpu==0.0.1: cannot install 'tensorflow-cpu==0.0.1': "
     "*no version of tensorflow-cpu==0.0.1* (log: *environments.log)"),
    (("--perf-ab-side-a=/usr/bin/python3",),
     "ERROR: --perf-ab-side-a=/usr/bin/python3: TensorFlow cannot be imported by /usr/bin/python3: "
     "ModuleNotFoundError: No module named 'tensorflow' (log: *environments.log)"),
])
def test_bad_specs_and_options_are_one_line_before_any_case(
        make_suite: MakeSuite, options: tuple[str, ...], message: str) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(*CASE, *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.startswith("ERROR")]
    assert len(errors) == 1, result.errlines
    result.stderr.fnmatch_lines([message])
    assert not list(suite.path.glob(".perf-results/logs/tinycnn-*.log"))


def test_a_session_id_given_by_its_caller_must_name_a_file(
        make_suite: MakeSuite, monkeypatch: pytest.MonkeyPatch) -> None:
    """tfperf-bisect names each step's session ($TFPERF_SESSION_ID), and finds its A/B file by
    it: a name that is not a plain file name stops the session before any case."""
    suite = make_suite("tinycnn")
    monkeypatch.setenv("TFPERF_SESSION_ID", "../elsewhere")
    result = suite.runpytest(*CASE, "--perf-ab-side-a=current")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: $TFPERF_SESSION_ID: '../elsewhere' is not a session id "
                                 "(letters, digits, '.', '_' and '-', at most 100)"])


def test_the_tensorflow_under_test_is_the_one_named(make_suite: MakeSuite) -> None:
    """A real environment of another TensorFlow release, built by the session: its workers run
    there and its results are keyed by its version."""
    suite = make_suite("tinycnn")
    # The jit case, whose XLA proof is the harder part there: TensorFlow 2.20's trace has no
    # executable event (xla_trace reads its instructions instead); before that, its jit cases
    # failed "XLA executed nothing". (Its xla_off case ran here too and proved nothing more.)
    jit = [o if o != "--perf-only=xla=off" else "--perf-only=xla=jit" for o in CASE]
    result = suite.runpytest(*jit, "--perf-tensorflow=tensorflow-cpu==2.20.0",
                             "--perf-rounds=3", "--perf-steps-per-round=10")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*worker environment for --perf-tensorflow=tensorflow-cpu==2.20.0*",
                                 "*tfperf: smoke tier on Linux-py3.11-tf2.20.0-*"])
    (session,) = (suite.path / ".perf-results" / "history" / "results").glob("*.json")
    runs = json.loads(session.read_text())["runs"]
    assert {run["fingerprint"]["hard"]["tensorflow"] for run in runs} == {"2.20.0"}
    assert [run["case_id"].split("-")[3] for run in runs] == ["xla_jit"]


def test_an_environment_is_built_once_and_a_missing_tensorflow_is_said(tmp_path: Path) -> None:
    log = tmp_path / "environments.log"
    for _ in range(2):
        with pytest.raises(environments.SpecError, match=r"TensorFlow cannot be imported by "
                           r".*numpy-2\.4\.6-.*: ModuleNotFoundError: No module named 'tensorflow'"):
            environments.prepare("numpy==2.4.6", {}, tmp_path, log)
    assert log.read_text().count("uv pip install") == 1  # the second found it ready


def _versions(environment: Path) -> dict[str, str]:
    """Each distribution a built environment holds, from its dist-info folders' names."""
    found = {}
    for info in environment.glob("lib/python*/site-packages/*.dist-info"):
        name, version = info.name.removesuffix(".dist-info").rsplit("-", 1)
        found[name.lower().replace("_", "-")] = version
    return found


def test_a_side_holds_the_reference_s_versions_but_what_its_requirements_move(
        tmp_path: Path) -> None:
    """Through uv and the package index (small packages, no TensorFlow, so the probe
    says so): everything the spec does not name stays at the reference's versions; pluggy,
    which pytest 8.3.5 needs newer, is released and said; --perf-env-float's build resolves
    afresh, in an environment of its own."""
    log = tmp_path / "environments.log"
    reference = {"pluggy": "1.0.0", "iniconfig": "2.0.0", "packaging": "24.0", "tfperf": "0"}
    for held in (reference, None):
        with pytest.raises(environments.SpecError, match="TensorFlow cannot be imported"):
            environments.prepare("pytest==8.3.5", {}, tmp_path, log, held)
    built = [f for f in (tmp_path / "environments").glob("pytest-8.3.5-*") if f.is_dir()]
    held_env, floated = sorted(built, key=lambda f: (f / environments.RELEASED).read_text() == "[]")
    assert json.loads((held_env / environments.RELEASED).read_text()) == ["pluggy"]
    versions = _versions(held_env)
    assert (versions["pytest"], versions["iniconfig"], versions["packaging"]) == (
        "8.3.5", "2.0.0", "24.0")
    assert versions["pluggy"] != "1.0.0"
    assert json.loads((floated / environments.RELEASED).read_text()) == []
    assert _versions(floated)["iniconfig"] != "2.0.0"  # the newest, not the reference's


def test_a_side_s_variables_reach_its_workers_and_its_checks_hold(make_suite: MakeSuite) -> None:
    """Side A asks XLA to compile everything, in a case that must run without XLA: its workers
    get the variables (side B's do not), and its XLA proof fails the case, naming side A."""
    suite = make_suite("tinycnn")
    # Side A also imports another version of a package (every difference between the sides
    # is listed): iniconfig, which no worker imports, installed first on its path.
    pinned = suite.path / "pinned"
    uv = Path(sys.executable).parent / "uv"
    subprocess.run([str(uv if uv.exists() else "uv"), "pip", "install", "--quiet", "--python",
                    sys.executable, "--target", str(pinned), "--no-deps", "iniconfig==2.0.0"],
                   check=True, timeout=300)
    # Two duets: the proof fails as each worker starts, and every worker started (eight at the
    # default four duets) compiled its whole step with XLA before saying so.
    result = suite.runpytest(*CASE, *AB, "--perf-ab-duets=2", "--perf-ab-side-a-env",
                             "TF_XLA_FLAGS=--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit",
                             "--perf-ab-side-a-env", f"PYTHONPATH={pinned}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*configuration: side A (reference, TensorFlow 2.21.0 (current, "
                                 "TF_XLA_FLAGS=--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit)): *"])
    assert "side B" not in result.stdout.str()
    ours = importlib.metadata.version("iniconfig")
    differences = session_file(suite.path)["differences"]
    assert differences == [
        {"kind": "package", "name": "iniconfig", "A": "2.0.0", "B": ours},
        {"kind": "env", "name": "TF_XLA_FLAGS", "A": "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit",
         "B": "-"}]
    result.stdout.fnmatch_lines([f"*sides differ in: iniconfig 2.0.0 -> {ours}, env TF_XLA_FLAGS "
                                 "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit -> -*"])
    report = next((suite.path / ".perf-results" / "reports" / "ab").rglob("ab.md")).read_text()
    assert f"| package | `iniconfig` | 2.0.0 | {ours} |" in report


def test_a_workload_that_side_a_lacks_is_skipped_saying_so(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    (suite.path / "main_workloads").mkdir()
    empty = suite.runpytest(*CASE, *AB, "--perf-ab-side-a-workloads=main_workloads")
    assert empty.ret == pytest.ExitCode.USAGE_ERROR
    empty.stderr.fnmatch_lines(["ERROR: --perf-ab-side-a-workloads: no workload modules in "
                                "*main_workloads"])
    for name in ("_tiny.py", "flat_loss.py"):
        shutil.copy(TEST_WORKLOADS / name, suite.path / "main_workloads")
    result = suite.runpytest(*CASE, *AB, "--perf-ab-side-a-workloads=main_workloads", "-rs")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*side A's workloads folder */main_workloads has no workload "
                                 "'tinycnn'*"])


def test_workflows_name_the_sides_by_environment_variables(make_suite: MakeSuite,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    suite = make_suite("tinycnn")
    monkeypatch.setenv("TFPERF_TENSORFLOW", "/no/such/python")
    result = suite.runpytest(*CASE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --perf-tensorflow: '/no/such/python' is not an "
                                 "executable Python interpreter"])
    monkeypatch.delenv("TFPERF_TENSORFLOW")
    monkeypatch.setenv("TFPERF_AB_SIDE_A", "missing.whl")
    result = suite.runpytest(*CASE)
    result.stderr.fnmatch_lines(["ERROR: --perf-ab-side-a: no wheel file 'missing.whl'"])


def test_a_current_side_beside_a_built_one_is_built_alike(tmp_path: Path) -> None:
    """Side A `current` beside a side B built elsewhere (here an interpreter named by path:
    no second build) is this session's TensorFlow built as side B is: from the index at this
    session's version, everything it needs at this session's versions, none of the harness's
    packages, so that the sides' difference list holds what differs for training."""
    said: list[str] = []
    own = packages.installed()
    expected = packages.tensorflow_requirement(own)
    assert expected is not None
    version = expected.rpartition("==")[2]
    found = session_runtimes.prepare(sys.executable, ("current", {}), version, tmp_path,
                                     tmp_path / "environments.log", said.append)
    assert found.side_a is not None and found.side_a.spec == expected
    assert any(line.startswith(f"tfperf: side A is this session's TensorFlow, {expected}, "
                               "built as the other side is") for line in said), said
    built = dict(found.side_a.packages)
    assert "pytest" not in built and "ruff" not in built
    moved = {name: (version, own.get(name)) for name, version in built.items()
             if own.get(name) != version}
    assert not moved, moved  # held at the session's versions
    # Two `current` sides (an A/A session) stay the session's own environment.
    same = session_runtimes.prepare("current", ("current", {}), version, tmp_path,
                                    tmp_path / "environments.log", said.append)
    assert same.side_a is not None and same.side_a.spec == same.under_test.spec == "current"
