"""The workflows pass actionlint and keep the security rules (tests/workflow_policy.py); each
rule is also shown to fire on a workflow that breaks it."""

from __future__ import annotations

import copy
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
