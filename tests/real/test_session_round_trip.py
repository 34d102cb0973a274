"""The results store is where a session's results are true; its session file is the store's
export of it. A session written, its file carried to another store (PostgreSQL, as a team's)
and imported there, and judged again there, gives the same rows, verdicts and figures."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.helpers import in_process
from tests.helpers.postgres_server import Server
from tests.helpers.suites import MakeSuite
from tfperf.commands import tfperf_gate, tfperf_store
from tfperf.storage import database
from tfperf.storage.results_store import ResultsStore

CASE = ("--perf-only=device_kind=cpu", "--perf-only=device_count=1", "--perf-only=xla=off",
        "--perf-only=data_format=NHWC", "--perf-only=strategy=single", "--perf-only=input=synthetic")
# The test is of verdicts travelling, not of what they say: a floor of 99% keeps a 2x swing of
# these 10-step rounds beside CI's other worker (seen once: ex/s flagged, then not confirmed)
# from changing the second session's verdict; the gate judges again with the same floor.
MEASURE = ("--perf-rounds=3", "--perf-steps-per-round=10", "--perf-warmup-rounds=1",
           "--perf-rerun=off", "--perf-effect-floor=99")


@pytest.mark.long
def test_a_session_file_carries_the_store_to_another_without_loss(
        make_suite: MakeSuite, postgres: Server, capsys: pytest.CaptureFixture[str]) -> None:
    suite = make_suite("tinycnn", "raises")  # a run and a failure in each session
    for _ in range(2):
        result = suite.runpytest(*CASE, *MEASURE)
        assert result.parseoutcomes().get("failed") == 1, result.stdout.str()
    history = suite.path / ".perf-results" / "history"
    files = sorted((history / "results").glob("*.json"))
    assert len(files) == 2
    kept = json.loads(files[-1].read_text())
    (run,) = kept["runs"]
    # The file is the store's export: each run with the figures the store keeps beside it.
    assert run["figures"]["mfu"] > 0 and run["verdict"] == "building history"
    assert [f["cause"] for f in kept["failures"]] == ["error"]

    here_url = database.default_url(history)
    there_url = postgres.new_database(f"round_trip_{uuid.uuid4().hex[:12]}")
    imported = in_process.run(tfperf_store.main, "import", *map(str, files), "--store",
                              there_url, capsys=capsys)
    assert imported.code == 0, imported
    here, there = (ResultsStore.open(url, create=False) for url in (here_url, there_url))
    try:
        assert there.runs() == here.runs()
        assert there.failures() == here.failures()
    finally:
        here.close()
        there.close()

    judged = [in_process.run(tfperf_gate.main, str(files[-1]), "--store", url,
                             "--reports", str(suite.path / "reports"), "--effect-floor", "99",
                             capsys=capsys)
              for url in (here_url, there_url)]
    assert judged[0] == judged[1] and judged[0].code == 0, judged
    # ... and the same as the session said when it ran.
    assert run["reason"] in judged[0].out
