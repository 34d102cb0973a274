"""benchmarks/slower_host.py: the quota its calibration takes, and bad input refused before any
work (its cgroup is not made). Running a command under it needs root and a cgroup v1 cpu
controller; benchmarks/results/selftest_time.md (2026-11-29, late afternoon) has what it
measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import benchmark_scripts

slower_host = benchmark_scripts.load("slower_host")


def test_the_quota_takes_the_rate_to_its_target_in_proportion() -> None:
    # The calibration of 2026-11-29 (AVX-512 EPYC): 1,179 ex/s there, 701 with oneDNN at AVX2,
    # a third of 1,179 wanted.
    first = slower_host.quota_us(2, 701.0, 1179 / 3)
    assert first / slower_host.PERIOD_US == pytest.approx(1.121, abs=0.001)
    # Read 20% too fast at that quota: a sixth less of it.
    again = slower_host.quota_us(first / slower_host.PERIOD_US, 1.2 * 1179 / 3, 1179 / 3)
    assert again == pytest.approx(first / 1.2, abs=1)


def test_a_slowdown_below_one_is_one_line_before_any_work(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setattr(slower_host, "CGROUP", tmp_path / "group")
    with pytest.raises(SystemExit) as stopped:
        slower_host.main(["--slowdown", "0.5", "--", "true"])
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()[-1:]
    assert line.endswith("error: --slowdown: 0.5 is not a factor of at least 1"), line
    assert not (tmp_path / "group").exists()
