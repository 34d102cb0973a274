"""tfperf-notify as CI runs it, a process with its console script: a pull request's A/B posted
as one comment and edited by every later run (through `gh`, a FAKE of the GitHub boundary:
tests/helpers/fake_gh.py, whose pages hold two comments), and a webhook sent the store's
findings with its URL only in the environment (tests/helpers/webhook_receiver.py: a real HTTP
server)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from tests.helpers import fake_gh
from tests.helpers.webhook_receiver import receiver
from tfperf.notify.pr_comment import MARKER
from tfperf.storage import formats
from tfperf.storage.results_store import FailureRow, ResultsStore, SessionRow
from tfperf.storage.timestamps import utc

NOTIFY = shutil.which("tfperf-notify")


def _ab_file(path: Path, session: str, ratio: float) -> Path:
    """An A/B session file of one case whose 64 pairs say B/A = `ratio` (a little noise)."""
    draw = np.random.default_rng(0)
    pairs = [{"duet": 1 + i // 16, "order": "AB" if i % 2 else "BA", "a_rate": 100.0,
              "b_rate": 100.0 * ratio * float(np.exp(draw.normal(0, 0.005))), "at_s": i}
             for i in range(64)]
    path.write_text(json.dumps({
        "format": formats.AB_FORMAT, "session": session, "machine_key": "k", "tier": "smoke",
        "settings": {"floor": 0.015, "alpha": 0.05, "min_pairs": 64, "max_pairs": 64,
                     "duets": 4, "relay": 16, "look_rule": "duets-t"},
        "sides": {"A": {"spec": "base", "tensorflow": "2.21.0"},
                  "B": {"spec": "this branch", "tensorflow": "2.21.0"}},
        "cases": [{"case_id": "resnet20-cpu1", "sides": {}, "pairs": pairs, "failure": None,
                   "order_effect": {}}]}))
    return path


def _pr(env: dict[str, str], session: Path, repo: str = "octo/perf"
        ) -> subprocess.CompletedProcess[str]:
    assert NOTIFY is not None, "tfperf-notify is not installed (pyproject.toml's scripts)"
    return subprocess.run([NOTIFY, "pr", str(session), "--repo", repo, "--number", "7",
                           "--link", "https://ci.example/run/1"], capture_output=True,
                          text=True, timeout=120, env=env, check=False)


def test_a_pull_request_s_ab_is_one_comment_that_each_run_edits(tmp_path: Path) -> None:
    env = fake_gh.on_path(tmp_path)
    state: dict[str, Any] = {"issues": [], "labels": [], "calls": [], "pr_comments": {"7": [
        {"id": i, "body": f"a reviewer's comment {i}"} for i in range(1, 4)]}}
    Path(env["FAKE_GH_STATE"]).write_text(json.dumps(state))
    first = _pr(env, _ab_file(tmp_path / "first.json", "s-first", 0.9))
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("posted the A/B comment on #7")
    second = _pr(env, _ab_file(tmp_path / "second.json", "s-second", 1.0))
    assert second.returncode == 0, second.stderr
    # The fourth comment is on the second page: found there, and edited in place.
    assert second.stdout.strip() == "updated the A/B comment on #7 (comment 1003)"
    comments = json.loads(Path(env["FAKE_GH_STATE"]).read_text())["pr_comments"]["7"]
    assert [c["id"] for c in comments] == [1, 2, 3, 1003]
    body = comments[-1]["body"]
    assert body.startswith(MARKER) and "session s-second" in body and "s-first" not in body
    assert "| `resnet20-cpu1` |" in body and "[this run](https://ci.example/run/1)" in body
    wrong = _pr(env, tmp_path / "second.json", repo="octo/other")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert wrong.stderr.startswith("tfperf-notify: gh api --paginate: gh: Not Found (HTTP 404)")
    (tmp_path / "bad.json").write_text("{}")
    bad = _pr(env, tmp_path / "bad.json")
    assert bad.returncode == 2 and "is not a valid tfperf A/B session file" in bad.stderr


def test_the_webhook_s_url_is_only_ever_in_the_environment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store = ResultsStore.open(url)
    session = SessionRow("night", "measured", "nightly", "k", "0" * 40, utc("2026-11-27T02:00"))
    store.add_failures(session, [FailureRow("c1", session.started, "crash", "call", "E boom",
                                            "l", "t")])
    store.close()
    with receiver("T0KEN-planted") as hook:
        env = {**os.environ, "TFPERF_WEBHOOK_URL": hook.url}
        assert NOTIFY is not None
        done = subprocess.run([NOTIFY, "webhook", "--store", url, "--since", "3650d",
                               "--format", "json"], capture_output=True, text=True, timeout=120,
                              env=env, check=False)
        assert done.returncode == 0, done.stderr
        assert [f["case_id"] for f in hook.posts[0][1]["findings"]] == ["c1"]
        assert "T0KEN" not in done.stdout + done.stderr
