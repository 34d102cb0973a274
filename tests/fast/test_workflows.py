"""The workflows pass actionlint and keep the security rules (tests/helpers/workflow_policy.py);
each
rule is also shown to fire on a workflow that breaks it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.helpers.workflow_policy import load, triggers, violations


@pytest.mark.parametrize("name", ["pr.yml", "nightly.yml", "refresh.yml", "follow-nightly.yml"])
def test_each_workflow_keeps_the_security_rules(name: str) -> None:
    assert violations(name, load(name)) == []


def test_gpu_jobs_run_only_on_schedule_or_by_hand() -> None:
    for name in ("nightly.yml", "refresh.yml", "follow-nightly.yml"):
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
    elif change == "checkout_without_contents":
        workflow["jobs"]["bisect-issues"]["permissions"] = {"issues": "write"}
    elif change == "download_must_succeed":
        del workflow["jobs"]["keep-history"]["steps"][1]["continue-on-error"]
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
    ("checkout_without_contents", "nightly.yml: job bisect-issues: checks out the repository "
                                  "without contents: read (a private repository's checkout "
                                  "fails)"),
    ("download_must_succeed", "nightly.yml: job keep-history step 2: downloads an artifact "
                              "without continue-on-error (the job fails when an earlier one "
                              "kept none)"),
])
def test_each_rule_fires_on_a_workflow_that_breaks_it(change: str, message: str) -> None:
    assert message in violations("nightly.yml", _broken(change))


def _self_hosted(workflow: dict[Any, Any]) -> list[dict[str, Any]]:
    return [job for job in workflow["jobs"].values() if "self-hosted" in repr(job["runs-on"])]


def test_every_gpu_workflow_shares_one_concurrency_group_and_keeps_its_environments() -> None:
    for name in ("nightly.yml", "refresh.yml", "follow-nightly.yml"):
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
    assert "args=(--out dashboard)" in runs and 'tfperf-dashboard "${args[@]}"' in runs
    assert "GITHUB_STEP_SUMMARY" in runs
    assert any(step.get("with", {}).get("name") == "dashboard" for step in keep["steps"])
    refresh = load("refresh.yml")["jobs"]["propose"]["env"]
    assert refresh["GH_TOKEN"] == "${{ secrets.TFPERF_PR_TOKEN || github.token }}"
    # The refresh measures into the store the nightly gates from.
    measure = load("refresh.yml")["jobs"]["measure"]["env"]
    assert measure["TFPERF_STORE_URL"] == "${{ secrets.TFPERF_STORE_URL }}"
    assert jobs["bisect"]["env"]["TFPERF_STORE_URL"] == "${{ secrets.TFPERF_STORE_URL }}"


def test_findings_reach_people_with_the_webhook_in_one_step_and_a_comment_from_base_code(
        ) -> None:
    """The webhook's URL (a secret) is in the one step that posts; the pull request's
    comment is written by the base branch's code, for this repository's pull requests only."""
    jobs = load("nightly.yml")["jobs"]
    holders = [(name, step) for name, job in jobs.items() for step in job["steps"]
               if "TFPERF_WEBHOOK_URL" in repr(step.get("env", {}))]
    assert [name for name, _ in holders] == ["keep-history"]
    assert not any("TFPERF_WEBHOOK_URL" in repr(job.get("env", {})) for job in jobs.values())
    posting = holders[0][1]["run"]
    assert "tfperf-notify" in posting and "--ledger perf-history/notified.jsonl" in posting
    assert "keep-ledger.sh" in posting
    comment = load("pr.yml")["jobs"]["ab-comment"]
    assert comment["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert comment["steps"][0]["with"]["ref"] == "${{ github.base_ref }}"
    assert "github.event.pull_request.head.repo.full_name == github.repository" in comment["if"]
    assert "tfperf-notify pr" in comment["steps"][-1]["run"]


def test_the_dashboard_goes_to_github_pages_where_the_repository_asks_for_it() -> None:
    """Deployable as GitHub Pages from the nightly, with the feed's links absolute
    under the site's address; a job that publishes and runs nothing of the repository."""
    jobs = load("nightly.yml")["jobs"]
    keep = jobs["keep-history"]["steps"]
    upload = next(s for s in keep if str(s.get("uses", "")).startswith(
        "actions/upload-pages-artifact@"))
    assert upload["if"] == "vars.TFPERF_PAGES == 'true'" and upload["with"]["path"] == "dashboard/"
    built = next(s for s in keep if s.get("name") == "Build the dashboard")
    assert "--url" in built["run"] and built["env"]["PAGES"] == "${{ vars.TFPERF_PAGES }}"
    pages = jobs["pages"]
    assert pages["needs"] == "keep-history" and "vars.TFPERF_PAGES == 'true'" in pages["if"]
    assert pages["permissions"] == {"pages": "write", "id-token": "write"}
    assert pages["environment"]["name"] == "github-pages"
    assert [str(s["uses"]).split("@")[0] for s in pages["steps"]] == ["actions/deploy-pages"]
