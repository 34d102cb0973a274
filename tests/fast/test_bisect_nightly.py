"""The nightly's bisection: which cases of a candidate A/B it bisects and over what range
(releases, or nightlies by date), and one GitHub issue per culprit through `gh` (a FAKE of the
GitHub boundary: tests/helpers/fake_gh.py), opened once and commented on after. The workflow's jobs:
test_workflows.py's rules, and the wiring below."""

from __future__ import annotations

from tests.helpers.workflow_policy import load


def test_the_nightly_bisects_on_the_gpu_runner_and_writes_issues_from_a_hosted_one() -> None:
    jobs = load("nightly.yml")["jobs"]
    bisect, issues = jobs["bisect"], jobs["bisect-issues"]
    assert bisect["needs"] == "candidate" and "needs.candidate.result == 'failure'" in bisect["if"]
    assert "self-hosted" in bisect["runs-on"] and bisect["permissions"] == {"contents": "read"}
    runs = " ".join(str(s.get("run", "")) for s in bisect["steps"])
    assert "tfperf-bisect after-ab" in runs and "--budget" in runs
    assert issues["runs-on"] == "ubuntu-24.04" and issues["permissions"] == {"contents": "read",
                                                                "issues": "write"}
    runs = " ".join(str(s.get("run", "")) for s in issues["steps"])
    assert "tfperf-bisect issue" in runs
    assert any(s.get("env", {}).get("GH_TOKEN") == "${{ github.token }}" for s in issues["steps"])
