"""The workflows pass actionlint and keep the security rules (tests/workflow_policy.py); each
rule is also shown to fire on a workflow that breaks it."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.workflow_policy import triggers, violations

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"


def load(name: str) -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    return loaded


def test_the_workflows_exist_and_pass_actionlint() -> None:
    assert {p.name for p in WORKFLOWS.glob("*.yml")} == {"pr.yml", "nightly.yml", "refresh.yml"}
    beside = Path(sys.executable).parent / "actionlint"  # the venv's, when it is not on PATH
    actionlint = str(beside) if beside.exists() else shutil.which("actionlint")
    assert actionlint, "actionlint is a pinned dev dependency: install with ./run test"
    run = subprocess.run([actionlint], cwd=WORKFLOWS.parents[1], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("name", ["pr.yml", "nightly.yml", "refresh.yml"])
def test_each_workflow_keeps_the_security_rules(name: str) -> None:
    assert violations(name, load(name)) == []


def test_gpu_jobs_run_only_on_schedule_or_by_hand() -> None:
    for name in ("nightly.yml", "refresh.yml"):
        assert triggers(load(name)) <= {"schedule", "workflow_dispatch"}, name
    assert "self-hosted" not in repr(load("pr.yml"))


def _broken(change: str) -> dict[Any, Any]:
    workflow = copy.deepcopy(load("nightly.yml"))
    job = workflow["jobs"]["nightly"]
    if change == "pull_request":
        workflow[True]["pull_request"] = None
    elif change == "unpinned":
        job["steps"][0]["uses"] = "actions/checkout@v4"
    elif change == "write":
        job["permissions"] = {"contents": "write"}
    elif change == "no_permissions":
        del job["permissions"]
    elif change == "expression":
        job["steps"][2]["run"] = './run perf -k "${{ inputs.selection }}"'
    elif change == "secret":
        workflow[True] = {"pull_request": None}
        job["runs-on"] = "ubuntu-24.04"
        job["env"]["TOKEN"] = "${{ secrets.RUNNER_TOKEN }}"
    elif change == "pull_request_target":
        workflow[True] = {"pull_request_target": None}
    return workflow


@pytest.mark.parametrize(("change", "message"), [
    ("pull_request", "nightly.yml: job nightly: runs on a self-hosted runner, triggered by "
                     "['pull_request']"),
    ("unpinned", "nightly.yml: job nightly step 1: actions/checkout@v4 is not pinned to a full "
                 "commit SHA"),
    ("write", "nightly.yml: job nightly: a self-hosted job with write permission ['contents']"),
    ("no_permissions", "nightly.yml: job nightly: no permissions of its own"),
    ("expression", "nightly.yml: job nightly step 3: an expression inside a run script (pass it "
                   "through env)"),
    ("secret", "nightly.yml: job nightly: a secret in a job that ['pull_request'] triggers"),
    ("pull_request_target", "nightly.yml: pull_request_target runs a fork's changes with the "
                            "base's rights"),
])
def test_each_rule_fires_on_a_workflow_that_breaks_it(change: str, message: str) -> None:
    assert message in violations("nightly.yml", _broken(change))


def _self_hosted(workflow: dict[Any, Any]) -> list[dict[str, Any]]:
    return [job for job in workflow["jobs"].values() if "self-hosted" in repr(job["runs-on"])]


def test_every_gpu_workflow_shares_one_concurrency_group_and_keeps_its_environments() -> None:
    for name in ("nightly.yml", "refresh.yml"):
        workflow = load(name)
        assert workflow["concurrency"] == {"group": "gpu-runners", "cancel-in-progress": False}
        for job in _self_hosted(workflow):
            checkout = job["steps"][0]
            assert checkout["uses"].startswith("actions/checkout@"), name
            # The worker environments (.venv, .perf-results/cache) survive the next checkout.
            assert checkout["with"] == {"persist-credentials": False, "clean": False}, name
    pr = load("pr.yml")["concurrency"]
    assert pr["cancel-in-progress"] is True and "pull_request.number" in pr["group"]


def test_the_nightly_writes_to_the_team_store_and_publishes_the_dashboard() -> None:
    jobs = load("nightly.yml")["jobs"]
    for name in ("nightly", "candidate", "keep-history"):
        assert jobs[name]["env"]["TFPERF_STORE_URL"] == "${{ secrets.TFPERF_STORE_URL }}"
    keep = jobs["keep-history"]
    assert keep["needs"] == ["nightly", "candidate"]
    runs = " ".join(str(step.get("run", "")) for step in keep["steps"])
    assert "tfperf-dashboard --out dashboard" in runs and "GITHUB_STEP_SUMMARY" in runs
    assert any(step.get("with", {}).get("name") == "dashboard" for step in keep["steps"])
    refresh = load("refresh.yml")["jobs"]["propose"]["env"]
    assert refresh["GH_TOKEN"] == "${{ secrets.TFPERF_PR_TOKEN || github.token }}"


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
