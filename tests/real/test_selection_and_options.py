"""Case ids, -k selection, skip reasons and option errors, through real pytest runs."""

from __future__ import annotations

import pytest

from tests.helpers.suites import MakeSuite


def test_ids_carry_every_axis_and_k_selects_by_them(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest("--collect-only", "-q", "--perf-tier=nightly", "--perf-selection=all",
                             "-k", "xla_jit and NCHW")
    ids = [line for line in result.outlines if "::test_training[" in line]
    assert ids
    assert all("-xla_jit-" in line and "-NCHW-" in line for line in ids)
    assert any("tinycnn-cpu1-workers1-xla_jit-NCHW-default-single-fp32-tfrecord-prep_device" in line
               for line in ids)
    everything = suite.runpytest("--collect-only", "-q", "--perf-tier=nightly", "--perf-selection=all")
    assert len([x for x in everything.outlines if "::test_training[" in x]) > len(ids)


def test_unrunnable_cases_are_skipped_with_the_reason(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest("-rs", "--perf-only=device_kind=gpu")
    outcomes = result.parseoutcomes()
    assert set(outcomes) == {"skipped"} and outcomes["skipped"] > 5
    result.stdout.fnmatch_lines(["*SKIPPED*needs 1 GPU, found 0*", "*SKIPPED*needs 2 GPUs, found 0*"])


def test_tier_markers_select_cases(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")

    def ids(*args: str) -> set[str]:
        result = suite.runpytest("--collect-only", "-q", *args)
        return {line for line in result.outlines if "::test_training[" in line}

    nightly_only = ids("--perf-tier=nightly", "--perf-selection=all", "-m", "nightly")
    smoke = ids("--perf-tier=smoke")
    assert nightly_only and smoke and not nightly_only & smoke
    assert nightly_only | smoke == ids("--perf-tier=nightly", "--perf-selection=all")
    assert any("xla_auto" in i for i in nightly_only)
    assert not any("xla_auto" in i for i in smoke)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--perf-tier=fast", "ERROR: --perf-tier: unknown tier 'fast'; valid: smoke, nightly, full"),
        ("--perf-only=xla=fast", "ERROR: --perf-only: xla has no value 'fast'; valid: off, jit, auto"),
        ("--perf-only=colour=red", "ERROR: --perf-only: 'colour=red' is not AXIS=VALUE*"),
        ("--perf-rounds=-3", "ERROR: --perf-rounds: '-3' is not a whole number of at least 1"),
        ("--perf-effect-floor=abc",
         "ERROR: --perf-effect-floor: 'abc' is not a number greater than 0"),
        ("--perf-effect-floor=150", "ERROR: --perf-effect-floor: '150' must be a percentage "
                                    "between 0 and 100"),
        ("--perf-z=-1", "ERROR: --perf-z: '-1' is not a number greater than 0"),
        ("--perf-rerun=maybe", "ERROR: --perf-rerun: no value 'maybe'; valid: on, off"),
        ("--perf-profile=", "ERROR: --perf-profile: empty; give text from the ids of the cases "
                            "to profile, or 'all'"),
        ("--perf-profile-regressions=yes",
         "ERROR: --perf-profile-regressions: no value 'yes'; valid: on, off"),
        ("--perf-tfrecord-files=huge", "ERROR: --perf-tfrecord-files: no layout 'huge'; valid: "
                                       "many_small, few_large"),
        ("--perf-only=workload=resnet99", "ERROR: --perf-only: workload has no value 'resnet99'; "
                                          "valid: tinycnn"),
        ("--perf-inject-cost=memory=1.5", "ERROR: --perf-inject-cost: 'memory=1.5' is not "
                                          "compile=SECONDS (above 0) or memory=MIB (a whole "
                                          "number above 0)"),
        ("--perf-yardstick-every=0", "ERROR: --perf-yardstick-every: '0' is not a whole number "
                                     "of at least 1"),
        ("--perf-yardstick-fault=1.5@x", "ERROR: --perf-yardstick-fault: '1.5@x' is not "
                                         "FACTOR[/EVERY][@TEXT] with a whole FACTOR of 2 or "
                                         "more and a whole EVERY of 1 or more, e.g. 3/2@resnet20"),
    ],
)
def test_bad_option_is_one_line_before_any_case(make_suite: MakeSuite, option: str,
                                                message: str) -> None:
    suite = make_suite("tinycnn")
    result = suite.runpytest(option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # TensorFlow's own start-up chatter may precede ours; our error is one line.
    errors = [line for line in result.errlines if line.startswith("ERROR")]
    assert len(errors) == 1, result.errlines
    result.stderr.fnmatch_lines([message])
    assert "test_training" not in result.stdout.str()


# Run in a pytest process of its own: this one has TensorFlow imported already, and there the
# folder is read in-process (the import it avoids is paid).
PROBE = '''
import sys


def pytest_collection_finish(session):
    print("tensorflow imported in the pytest process:", "tensorflow" in sys.modules)
'''


def test_the_pytest_process_reads_workloads_through_a_worker_and_never_imports_tensorflow(
        make_suite: MakeSuite, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = make_suite("tinycnn", "hidden_xla")
    suite.makepyfile(tf_probe=PROBE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(suite.path / "cache"))  # nothing kept yet
    log = suite.path / ".perf-results" / "logs" / "catalog.log"

    def listed() -> list[str]:
        result = suite.runpytest_subprocess("-p", "tf_probe", "--collect-only", "-q",
                                            "--perf-only=workload=hidden_xla")
        assert result.ret == pytest.ExitCode.OK, result.stderr.str()
        result.stdout.fnmatch_lines(["tensorflow imported in the pytest process: False"])
        return [line for line in result.outlines if "::test_training[" in line]

    ids = listed()
    assert ids and all("hidden_xla-" in line for line in ids)
    assert log.exists()
    # What the worker read is kept by the files it read: the next session starts no worker.
    log.unlink()
    assert listed() == ids and not log.exists()
    # A workload's file changed: read again.
    module = suite.path / "workloads" / "hidden_xla.py"
    module.write_text(module.read_text() + "\n# changed\n")
    assert listed() == ids and log.exists()


def test_a_workload_module_that_cannot_be_imported_is_one_line_naming_it(
        make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    (suite.path / "workloads" / "broken.py").write_text("import tensorflow\nWORKLOAD = (\n")
    result = suite.runpytest_subprocess("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.startswith("ERROR")]
    assert errors == [f"ERROR: {suite.path / 'workloads' / 'broken.py'}: cannot be imported: "
                      "SyntaxError: '(' was never closed (broken.py, line 2)"], result.errlines


def test_two_workloads_of_one_name_are_one_line_naming_both(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    folder = suite.path / "workloads"
    (folder / "tinycnn_again.py").write_text((folder / "tinycnn.py").read_text())
    result = suite.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.startswith("ERROR")]
    assert errors == [f"ERROR: {folder / 'tinycnn_again.py'}: workload name 'tinycnn' is taken "
                      f"by {(folder / 'tinycnn.py').resolve()}"], result.errlines
