"""Secrets kept from the code under test: the results store's URL, with a planted
password, reaches a bisection (`--store`) and each step's A/B session (through the
environment); no worker's environment holds it or a token, and no file the bisection, its steps
or their sessions write (logs, reports, session files, what a workflow uploads) holds the
password. The workers' own record of their environment: tests/workloads/env_probe.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import bisect_repo
from tests.helpers.postgres_server import Server
from tests.helpers.suites import TEST_WORKLOADS
from tfperf.storage.results_store import ResultsStore

PLANTED = "planted-pw-5e1f7c"
SELECT = ("-k", "env_probe and xla_off", "--perf-only=device_kind=cpu",
          "--perf-only=device_count=1", "--perf-only=workers=1", "--perf-only=input=synthetic",
          "--perf-only=strategy=single", "--perf-only=placement=default",
          "--perf-only=data_format=NHWC", "--perf-only=precision=fp32")
# As short as a step can be (eight pairs on two duets, no relay): its verdict does not matter
# here, only what its session and workers saw and kept.
RUN = (*SELECT, "--perf-ab-turn=0.15", "--perf-warmup-rounds=2", "--perf-ab-duets=2",
       "--perf-ab-relay=0", "--perf-ab-yardstick-every=4")


def _files_holding(folder: Path, text: str) -> list[str]:
    return [str(path.relative_to(folder)) for path in folder.rglob("*")
            if path.is_file() and text.encode() in path.read_bytes()]


def test_no_worker_log_or_kept_file_holds_the_store_password_or_a_token(
        postgres: Server, tmp_path: Path) -> None:
    project = bisect_repo.make_project(tmp_path / "project")
    for name in ("_tiny.py", "env_probe.py"):
        shutil.copy(TEST_WORKLOADS / name, project / "workloads")
    probes = tmp_path / "probes"
    probes.mkdir()
    store = postgres.new_database("secrets").replace("tfperf@", f"tfperf:{PLANTED}@")
    env = {**os.environ, "ENV_PROBE_FOLDER": str(probes), "GH_TOKEN": f"gh-{PLANTED}",
           "MY_API_TOKEN": f"api-{PLANTED}"}
    # Two names for one TensorFlow: an A/A step, whose ends are not apart (exit 1).
    done = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_bisect", "specs",
                           "current", sys.executable, "--floor", "40", "--pairs", "8:8",
                           "--confirm-pairs", "8", "--store", store, "--", *RUN],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert PLANTED not in done.stdout + done.stderr
    (folder,) = (project / ".perf-results" / "reports" / "bisect").iterdir()
    steps = json.loads((folder / "bisect.json").read_text())["steps"]
    assert steps and steps[0]["verdict"] != "skipped", steps
    # The step's session reached the store through its environment: its A/B case is there,
    # and so is the bisection.
    kept = ResultsStore.open(store)
    try:
        assert len(kept.ab_cases()) == len(steps) and len(kept.bisects()) == 1
    finally:
        kept.close()
    # Every worker the step started wrote its environment: none holds a secret.
    seen = [json.loads(path.read_text()) for path in probes.glob("worker-*.json")]
    assert len(seen) >= 4, seen  # two duets of two sides
    for worker in seen:
        assert not {"TFPERF_STORE_URL", "GH_TOKEN", "MY_API_TOKEN"} & set(worker), sorted(worker)
        assert PLANTED not in json.dumps(worker)
    # Nor any file the bisection, its steps and their sessions kept.
    assert _files_holding(project, PLANTED) == []

