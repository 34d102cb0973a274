"""The rules every workflow in .github/workflows must keep, as a checker that names each broken
rule: no untrusted code on a self-hosted runner, minimal permissions declared per job (yet
`contents: read` wherever a job checks out the repository, which a private repository's
checkout needs), third-party actions pinned to full commit SHAs, no secret in a pull-request
job, no `${{ }}` expression spliced into a shell script (inputs reach scripts through env), and
no job that fails because an earlier one had nothing to hand it (an artifact is downloaded
with continue-on-error, and the steps after say what was missing)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

# Events whose code or text a stranger controls.
UNTRUSTED_EVENTS = frozenset({"pull_request", "pull_request_target", "pull_request_review",
                              "pull_request_review_comment", "issue_comment", "issues",
                              "discussion", "discussion_comment", "workflow_run", "fork"})
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")
WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"


def load(name: str) -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    return loaded


def triggers(workflow: dict[Any, Any]) -> set[str]:
    # YAML 1.1 reads the key `on` as the boolean True.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on}
    return set(on or ())


def _labels(job: dict[str, Any]) -> list[str]:
    runs_on = job.get("runs-on", [])
    if isinstance(runs_on, dict):
        runs_on = runs_on.get("labels", [])
    return [runs_on] if isinstance(runs_on, str) else list(runs_on)


def _writes(permissions: Any) -> list[str]:
    if permissions in ("write-all",):
        return ["write-all"]
    if isinstance(permissions, dict):
        return [scope for scope, access in permissions.items() if access == "write"]
    return []


def violations(name: str, workflow: dict[Any, Any]) -> list[str]:
    found: list[str] = []
    events = triggers(workflow)
    if "pull_request_target" in events:
        found.append(f"{name}: pull_request_target runs a fork's changes with the base's rights")
    if "permissions" not in workflow:
        found.append(f"{name}: no workflow-level permissions (the default token may write)")
    elif _writes(workflow["permissions"]):
        found.append(f"{name}: workflow-level write permission {_writes(workflow['permissions'])}")
    untrusted = events & UNTRUSTED_EVENTS
    for job_name, job in (workflow.get("jobs") or {}).items():
        where = f"{name}: job {job_name}"
        self_hosted = "self-hosted" in _labels(job)
        if "permissions" not in job:
            found.append(f"{where}: no permissions of its own")
        if self_hosted and untrusted:
            found.append(f"{where}: runs on a self-hosted runner, triggered by "
                         f"{sorted(untrusted)}")
        if self_hosted and _writes(job.get("permissions")):
            found.append(f"{where}: a self-hosted job with write permission "
                         f"{_writes(job.get('permissions'))}")
        if untrusted and "secrets." in repr(job):
            found.append(f"{where}: a secret in a job that {sorted(untrusted)} triggers")
        steps = job.get("steps") or []
        reads = job.get("permissions") in ("read-all", "write-all") or (
            isinstance(job.get("permissions"), dict)
            and job["permissions"].get("contents") in ("read", "write"))
        if any(str(step.get("uses", "")).startswith("actions/checkout@") for step in steps) \
                and not reads:
            found.append(f"{where}: checks out the repository without contents: read (a private "
                         "repository's checkout fails)")
        for index, step in enumerate(steps):
            uses = step.get("uses")
            if str(uses).startswith("actions/download-artifact@") \
                    and step.get("continue-on-error") is not True:
                found.append(f"{where} step {index + 1}: downloads an artifact without "
                             "continue-on-error (the job fails when an earlier one kept none)")
            if uses and not uses.startswith("./") and not PINNED.fullmatch(uses):
                found.append(f"{where} step {index + 1}: {uses} is not pinned to a full "
                             "commit SHA")
            if "${{" in str(step.get("run", "")):
                found.append(f"{where} step {index + 1}: an expression inside a run script "
                             "(pass it through env)")
    return found
