"""Change points in a case's series across builds: Apache Otava, in the environment of its own
the command builds (it pins numpy and scipy below the suite's), finds where a figure moved
between two builds of a real store's series, at each figure's least change; a flat figure has
none. Bad input is one line. How often it is right: benchmarks/change_points.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers import gate_runs
from tfperf.commands import tfperf_store
from tfperf.storage.results_store import ResultsStore, SessionRow
from tfperf.storage.timestamps import utc

KIND = "Linux-py3.11-Intel_R_Xeon_R_Processor-amx-2cpu"


def _nightly(day: int) -> str:
    return f"2.22.0-dev202605{day:02d}"


@pytest.mark.long
def test_the_build_where_peak_memory_grew_is_named_and_a_flat_figure_has_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store = ResultsStore.open(url)
    draw = np.random.default_rng(78)
    try:
        for day in range(1, 25):  # 24 nightlies, 2 runs each; memory 1.84x from the 15th on
            tensorflow = _nightly(day)
            hard = dict(gate_runs.HARD, tensorflow=tensorflow, tensorflow_git=f"g{day}")
            key = KIND.replace("-Intel", f"-tf{tensorflow}-Intel")
            for repeat in range(2):
                session = f"s{day}-{repeat}"
                run = gate_runs.run(1000 * float(np.exp(draw.normal(0, 0.01))), day, hard=hard,
                                    session=session,
                                    memory=(276 if day >= 15 else 150) * 2**20).to_json()
                assert store.add_runs(SessionRow(session, "measured", "nightly", key, "",
                                                 utc(run["when"])), [run]) == 1
    finally:
        store.close()
    assert tfperf_store.main(["--store", url, "changes", gate_runs.CASE]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"{gate_runs.CASE}: 1 change point in 1 series (examples_per_sec from "
                      "2%, peak_memory_bytes from 5%, compile_cpu_s from 50%, loss_last from "
                      "1%, p below 0.001, Apache Otava 0.8.0)"), out
    assert out[1].endswith(f"peak memory +84.0% (worse) from {_nightly(14)} to {_nightly(15)}, "
                           "p=0 (2 and 2 runs)"), out
    assert out[-1] == ("not confirmed: confirm and place each worse one with an A/B: "
                       f"tfperf-bisect changes {gate_runs.CASE}")
    # Bad input: one line, before anything is read.
    with pytest.raises(SystemExit):
        tfperf_store.main(["--store", url, "changes", gate_runs.CASE, "--figure", "speed"])
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        "--figure: no figure 'speed'; valid: examples_per_sec, peak_memory_bytes, "
        "compile_cpu_s, loss_last")
    assert tfperf_store.main(["--store", url, "changes", "nocase"]) == 2
    assert capsys.readouterr().err.startswith("tfperf-store: no runs of nocase")
