"""The workflows pass actionlint and keep the security rules (tests/helpers/workflow_policy.py);
each
rule is also shown to fire on a workflow that breaks it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.workflow_policy import WORKFLOWS, load


def test_the_workflows_exist_and_pass_actionlint() -> None:
    assert {p.name for p in WORKFLOWS.glob("*.yml")} == {"pr.yml", "nightly.yml", "refresh.yml",
                                                         "follow-nightly.yml"}
    beside = Path(sys.executable).parent / "actionlint"  # the venv's, when it is not on PATH
    actionlint = str(beside) if beside.exists() else shutil.which("actionlint")
    assert actionlint, "actionlint is a pinned dev dependency: install with ./run test"
    run = subprocess.run([actionlint], cwd=WORKFLOWS.parents[1], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


SCRIPTS = WORKFLOWS.parent / "scripts"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _repository(tmp_path: Path, name: str, origin: str) -> Path:
    clone = tmp_path / name
    clone.mkdir()
    _git("init", "-q", "-b", "main", cwd=clone)
    _git("remote", "add", "origin", origin, cwd=clone)
    return clone


def _script(name: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_AUTHOR_NAME": "t",
           "GIT_COMMITTER_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run([str(SCRIPTS / name)], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)


def test_the_history_is_kept_and_restored_through_a_real_remote(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    # Before the first night: no branch, which is said and is not a failure.
    runner = _repository(tmp_path, "runner", str(remote))
    first = _script("restore-history.sh", runner)
    assert first.returncode == 0 and "no perf-history branch yet" in first.stdout, first.stderr
    # A night's files appended twice: kept files never replaced, new ones added.
    hosted = _repository(tmp_path, "hosted", str(remote))
    (hosted / "README").write_text("x")
    _git("add", "README", cwd=hosted)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "main", cwd=hosted)
    (hosted / "tonight" / "history" / "results").mkdir(parents=True)
    (hosted / "tonight-ab" / "ab").mkdir(parents=True)
    (hosted / "tonight" / "history" / "results" / "night1.json").write_text('{"n": 1}')
    (hosted / "tonight-ab" / "ab" / "ab1.json").write_text('{"ab": 1}')
    kept = _script("keep-history.sh", hosted)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    _git("worktree", "remove", "--force", "perf-history", cwd=hosted)
    (hosted / "tonight" / "history" / "results" / "night1.json").write_text('{"n": "changed"}')
    (hosted / "tonight" / "history" / "results" / "night2.json").write_text('{"n": 2}')
    again = _script("keep-history.sh", hosted)
    assert again.returncode == 0, again.stdout + again.stderr
    # What tfperf-notify sent, kept beside the files (a store rebuilt each night reads it).
    nothing = _script("keep-ledger.sh", hosted)
    assert nothing.returncode == 0 and "nothing posted yet" in nothing.stdout, nothing.stderr
    (hosted / "perf-history" / "notified.jsonl").write_text('{"finding": "f1"}\n')
    ledger = _script("keep-ledger.sh", hosted)
    assert ledger.returncode == 0, ledger.stdout + ledger.stderr
    assert _script("keep-ledger.sh", hosted).stdout.strip() == "nothing new posted"
    assert _git("show", "perf-history:notified.jsonl", cwd=remote) == '{"finding": "f1"}\n'
    restored = _script("restore-history.sh", runner)
    assert restored.returncode == 0 and "restored 2 session files" in restored.stdout
    results = runner / ".perf-results" / "history" / "results"
    assert (results / "night1.json").read_text() == '{"n": 1}'  # never replaced
    assert (results / "night2.json").exists()
    assert (runner / ".perf-results" / "ab" / "ab1.json").read_text() == '{"ab": 1}'
    # A remote that cannot be read is a failure, never "no history yet".
    lost = _repository(tmp_path, "lost", str(tmp_path / "gone.git"))
    failed = _script("restore-history.sh", lost)
    assert failed.returncode == 1 and "cannot read the perf-history branch" in failed.stderr
    assert "no perf-history branch yet" not in failed.stdout



def test_the_history_token_never_reaches_git_s_command_line(tmp_path: Path) -> None:
    """Restore-history.sh authenticates its fetch through git's environment, not its
    arguments (which any process on the runner can read in /proc and a log may keep)."""
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    seed = _repository(tmp_path, "seed", str(remote))
    _git("switch", "-q", "--orphan", "perf-history", cwd=seed)
    (seed / "results").mkdir()
    (seed / "results" / "night1.json").write_text("{}")
    _git("add", "-A", cwd=seed)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "night", cwd=seed)
    _git("push", "-q", "origin", "perf-history", cwd=seed)
    # A git that records its arguments and whether the header came through its environment,
    # then runs the real one.
    wrappers = tmp_path / "bin"
    wrappers.mkdir()
    real = shutil.which("git")
    wrapper = wrappers / "git"
    wrapper.write_text(f'#!/usr/bin/env bash\nprintf "%s\\n" "$*" >> {tmp_path}/argv.log\n'
                       f'echo "${{GIT_CONFIG_KEY_0:-}}" >> {tmp_path}/config.log\n'
                       f'exec {real} "$@"\n')
    wrapper.chmod(0o755)
    runner = _repository(tmp_path, "runner", str(remote))
    env = {"PATH": f"{wrappers}:{os.environ['PATH']}", "HOME": str(runner),
           "GH_TOKEN": "ghs_planted_token_5e1f7c"}
    done = subprocess.run([str(SCRIPTS / "restore-history.sh")], cwd=runner, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0 and "restored 1 session files" in done.stdout, done.stderr
    argv = (tmp_path / "argv.log").read_text()
    assert "ls-remote" in argv and "fetch" in argv
    assert "ghs_planted_token_5e1f7c" not in argv and "extraheader" not in argv.lower(), argv
    assert "http.extraheader" in (tmp_path / "config.log").read_text().splitlines()


def _step_script(job: str, name: str, workflow: str = "nightly.yml") -> str:
    (script,) = [s["run"] for s in load(workflow)["jobs"][job]["steps"]
                 if s.get("name") == name]
    return str(script)


def _runner(tmp_path: Path, candidate_says: str) -> Path:
    """A GPU runner's checkout where `./run` only records its arguments (a fake: the session it
    would start needs the GPUs) and tfperf-candidate prints what it is given (a fake of the
    package index's answer; the real command: tests/real/test_bisect.py)."""
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    run = tmp_path / "run"
    run.write_text('#!/usr/bin/env bash\necho "$*" >> run.log\n')
    fake = tmp_path / ".venv" / "bin" / "tfperf-candidate"
    fake.write_text(f"#!/usr/bin/env bash\necho 'one line' >&2\necho '{candidate_says}'\n"
                    "echo called >> candidate.log\n")
    for path in (run, fake):
        path.chmod(0o755)
    return tmp_path


def _bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={"PATH": os.environ["PATH"], **env})


def test_a_scheduled_night_without_a_candidate_runs_no_a_b(tmp_path: Path) -> None:
    """No candidate input and none newer on the index is no A/B (said by
    tfperf-candidate in one line); one found is A/Bed; a named one is used as given."""
    script = _step_script("candidate", "A/B of the candidate TensorFlow against the pinned one")
    none = _runner(tmp_path / "none", "")
    done = _bash(script, none, CANDIDATE="", SELECTION="")
    assert done.returncode == 0 and "one line" in done.stderr, done.stderr
    assert (none / "run.log").read_text().splitlines() == ["perf --collect-only -q"]
    found = _runner(tmp_path / "found", "tf-nightly[and-cuda]==2.22.0.dev20261126")
    done = _bash(script, found, CANDIDATE="", SELECTION="")
    assert done.returncode == 0, done.stderr
    assert (found / "run.log").read_text().splitlines()[-1] == (
        "perf --perf-tier=nightly --perf-budget=3h -m gpu "
        "--perf-tensorflow=tf-nightly[and-cuda]==2.22.0.dev20261126 --perf-ab-side-a=current "
        "-k test_training")
    named = _runner(tmp_path / "named", "")
    done = _bash(script, named, CANDIDATE="tensorflow[and-cuda]==2.21.1", SELECTION="resnet20")
    assert done.returncode == 0 and not (named / "candidate.log").exists(), done.stderr
    assert "--perf-tensorflow=tensorflow[and-cuda]==2.21.1" in (named / "run.log").read_text()


def test_a_bisect_job_whose_candidate_kept_nothing_says_so_and_passes(tmp_path: Path) -> None:
    script = _step_script("bisect", "Bisect each slower case within the budget")
    runner = _runner(tmp_path, "")
    done = _bash(script, runner)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no A/B session file from the candidate job: nothing to bisect"
    assert not (runner / "run.log").exists()


def test_a_night_that_follows_tf_nightly_runs_it_ungated_and_answers_the_cases_it_ran(
        tmp_path: Path) -> None:
    """Tonight's newest nightly runs the selection ungated, three times (./run a fake: the
    session needs the GPUs); then every case tonight's session files hold is handed to
    `tfperf-bisect changes`, a case at a time (a fake that records its arguments and writes a
    report for one case: the command itself is tested in tests/fast/test_bisect_changes.py).
    Only tonight's reports go to the issue job, and no marker outlives its night."""
    runner = _runner(tmp_path, "")
    candidate = runner / ".venv" / "bin" / "tfperf-candidate"
    candidate.write_text("#!/usr/bin/env bash\necho \"$*\" >> candidate.log\n"
                         "echo 'tf-nightly[and-cuda]==2.22.0.dev20261126'\n")
    bisect = runner / ".venv" / "bin" / "tfperf-bisect"
    bisect.write_text("#!/usr/bin/env bash\necho \"$*\" >> bisect.log\n"
                      'if [ "$2" = b-case ]; then mkdir -p .perf-results/reports/bisect/new\n'
                      "  echo {} > .perf-results/reports/bisect/new/bisect.json; fi\n")
    bisect.chmod(0o755)
    (runner / ".venv" / "bin" / "python").symlink_to(sys.executable)
    changes = SCRIPTS / "follow-changes.sh"
    marker = runner / ".perf-results" / "follow-started"

    def answer() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(changes)], cwd=runner, capture_output=True, text=True,
                              timeout=60)

    said = answer()
    assert said.returncode == 0 and said.stdout.strip() == \
        "no follow session tonight: no change point to answer", said.stderr
    script = _step_script("follow", "The nightly selection on tonight's tf-nightly",
                          "follow-nightly.yml")
    bad = _bash(script, runner, NIGHTLY="", SELECTION="", RUNS="many")
    assert bad.returncode == 2 and bad.stderr.strip() == "runs: 'many' is not 1-9"
    assert not (runner / "candidate.log").exists()  # refused before any work
    old = runner / ".perf-results" / "reports" / "bisect" / "old"  # an earlier night's
    old.mkdir(parents=True)
    (old / "bisect.json").write_text("{}")
    os.utime(old / "bisect.json", (0, 0))
    done = _bash(script, runner, NIGHTLY="", SELECTION="", RUNS="3")
    assert done.returncode == 0, done.stderr
    assert (runner / "candidate.log").read_text().strip() == "--nightly"
    assert (runner / "run.log").read_text().splitlines()[-3:] == [  # three runs share 3 hours
        "perf --perf-tier=nightly --perf-budget=60m -m gpu --perf-gate=off "
        "--perf-tensorflow=tf-nightly[and-cuda]==2.22.0.dev20261126 -k test_training "
        f"--benchmark-json=.perf-results/follow-{run}.json" for run in (1, 2, 3)]
    os.utime(marker, (1, 1))  # tonight began before the files below
    results = runner / ".perf-results" / "history" / "results"
    results.mkdir(parents=True)
    (results / "20261208T020000Z-1.json").write_text(
        '{"runs": [{"case_id": "b-case"}, {"case_id": "a-case"}, {"case_id": "b-case"}]}')
    answered = answer()
    assert answered.returncode == 0, answered.stderr
    assert (runner / "bisect.log").read_text().splitlines() == [
        f"changes {case} --package tensorflow[and-cuda] --budget 1h -- --perf-tier=nightly "
        "-m gpu" for case in ("a-case", "b-case")]
    reports = runner / ".perf-results" / "follow-reports"
    assert [p.name for p in reports.iterdir()] == ["new"]
    assert not marker.exists()
    # A night with no bisection folder on the runner at all, and a marker: nothing to copy.
    shutil.rmtree(runner / ".perf-results" / "reports")
    marker.touch()
    os.utime(marker, (1, 1))
    (runner / "bisect.log").unlink()
    quiet = answer()
    assert quiet.returncode == 0, quiet.stderr
    assert [p.name for p in reports.iterdir()] == ["new"] and not marker.exists()
