"""The refresh writes the sessions its dry run kept, without measuring again (git runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.gate_runs import CASE, run
from tfperf.commands import tfperf_refresh as refresh
from tfperf.storage.session_files import History


def test_the_refresh_writes_the_sessions_its_dry_run_kept_without_measuring_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    kept = tmp_path / ".perf-results" / "refresh" / "20261122"
    for day, eps in ((1, 1000.0), (2, 1300.0), (3, 800.0)):
        History(kept).keep(f"s{day}", "smoke", "m", [run(eps, day)])
    baselines = ["--baselines", str(tmp_path / "baselines")]

    assert refresh.main(["--sessions-from", str(kept), *baselines]) == 1
    refused = capsys.readouterr().err
    assert "sessions spread" in refused and f"the sessions are kept in {kept}" in refused

    assert refresh.main(["--sessions-from", str(kept), "--max-spread=60", *baselines]) == 0
    dry = capsys.readouterr().out
    assert CASE in dry and "new" in dry
    # The write it suggests judges as the dry run did.
    assert (f"to write this entry: tfperf-refresh --sessions-from {kept} --max-spread 60.0 "
            f"--baselines {tmp_path / 'baselines'} --write --reason" in dry.splitlines()[-1])
    assert not (tmp_path / "baselines").exists()

    assert refresh.main(["--sessions-from", str(kept), "--max-spread=60", "--write",
                         "--reason=kept sessions", *baselines]) == 0
    written = json.loads(next((tmp_path / "baselines").glob("*/entries/0001.json")).read_text())
    assert [r["examples_per_sec"] for r in written["cases"][CASE]["runs"]] == [1000, 1300, 800]
