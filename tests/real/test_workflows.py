"""The workflows pass actionlint and keep the security rules (tests/helpers/workflow_policy.py);
each
rule is also shown to fire on a workflow that breaks it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.workflow_policy import WORKFLOWS


def test_the_workflows_exist_and_pass_actionlint() -> None:
    assert {p.name for p in WORKFLOWS.glob("*.yml")} == {"pr.yml", "nightly.yml", "refresh.yml"}
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
