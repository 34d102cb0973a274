"""Real sessions whose yardstick bursts are disturbed on purpose (--perf-yardstick-fault: a burst
does several bursts' work and reports one's): a burst disturbed now and then is left out of the
rating, and a case whose every burst is disturbed, or shares its cores, says so."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from typing import Any

import pytest

from tests.helpers.suites import MakeSuite
from tfperf.measure import sanity

TINY = ("tinycnn and cpu1 and workers1 and single and synthetic and prep_host and default and "
        "fp32")
# A burst before every round, as a user's session times them (the copies default to every 5th).
SHORT = ("--perf-rounds=3", "--perf-steps-per-round=3", "--perf-batch-size=16",
         "--perf-yardstick-every=1")


def _infos(suite: pytest.Pytester, json_name: str) -> dict[str, dict[str, Any]]:
    saved = json.loads((suite.path / json_name).read_text())
    return {b["extra_info"]["case_id"]: b["extra_info"] for b in saved["benchmarks"]}


def test_a_burst_disturbed_now_and_then_is_left_out_of_the_rating(make_suite: MakeSuite) -> None:
    """Every other burst of the NCHW case does 16 bursts' work (real work, read as one): each
    round is rated against the undisturbed burst beside it, and the case says the yardstick
    moved."""
    suite = make_suite("tinycnn")
    # 16, not 4: a busy neighbour once made an undisturbed burst read 3 times low (86 and 28
    # GFLOP/s), within a factor of 2 of a 4-times disturbed one's 22.
    result = suite.runpytest("-k", f"{TINY} and xla_off", *SHORT, "--benchmark-json=out.json",
                             "--perf-yardstick-fault=16/2@NCHW")
    assert result.parseoutcomes().get("no_baseline") == 2, result.stdout.str()
    (info,) = [i for i in _infos(suite, "out.json").values() if i["data_format"] == "NCHW"]
    bursts, rounds = info["peak_flops_per_device_by_round"], info["worker_round_s"]
    assert len(bursts) == len(rounds) + 1 == 4  # before each round, and after the last
    assert max(bursts[0::2]) < min(bursts[1::2]) / 2  # the disturbed ones read low
    work = info["flops_per_example"] * 16 * 3
    assert info["mfu"] == pytest.approx(statistics.median(  # against the undisturbed one
        work / s / bursts[1 + 2 * (n // 2)] for n, s in enumerate(rounds)), rel=1e-9)
    assert any(s.startswith("the yardstick moved") for s in info["figures_flagged"])
    assert not any("above 100%" in s for s in info["figures_flagged"])


def test_a_case_whose_every_burst_is_disturbed_says_so(make_suite: MakeSuite) -> None:
    """Every burst of resnet20 does 8 bursts' work: its MFU reads above 100%, and its yardstick
    far below the session's other cases; the table marks the figure and says why."""
    suite = make_suite("tinycnn", "resnet20")
    result = suite.runpytest(
        "-k", f"(({TINY}) or resnet20) and cpu1 and workers1 and single and synthetic and "
        "prep_host and default and fp32 and NHWC and not xla_auto and not (resnet20 and "
        "xla_jit)", *SHORT, "--benchmark-json=out.json", "--perf-yardstick-fault=8@resnet20")
    assert result.parseoutcomes().get("no_baseline") == 3, result.stdout.str()
    infos = _infos(suite, "out.json")
    (case_id,) = [c for c in infos if c.startswith("resnet20")]
    said = infos[case_id]["figures_flagged"]
    assert infos[case_id]["mfu"] > 1
    assert said[0].startswith(f"MFU {infos[case_id]['mfu']:.1%} is above 100%")
    assert said[-1].startswith("its yardstick read") and "below the median" in said[-1]
    result.stdout.fnmatch_lines([f"{case_id}  *{infos[case_id]['mfu']:.1%}?*",
                                 f"{case_id}: figure flagged: MFU *% is above 100%*"])


def test_a_case_whose_bursts_share_their_cores_with_other_processes_says_so(
        make_suite: MakeSuite) -> None:
    """A busy loop on every core, each in a session of its own as an unrelated job: the
    bursts have a third to a half of their cores' time (under per-session or per-thread fair
    scheduling alike), and the case says what its figures rest on."""
    suite = make_suite("tinycnn")
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
             for _ in range(len(os.sched_getaffinity(0)))]
    try:
        result = suite.runpytest("-k", f"{TINY} and xla_off and NHWC", *SHORT,
                                 "--benchmark-json=out.json")
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    assert result.parseoutcomes().get("no_baseline") == 1, result.stdout.str()
    (info,) = _infos(suite, "out.json").values()
    shares = info["yardstick_cpu_share_by_round"]
    assert len(shares) == len(info["peak_flops_per_device_by_round"]) == 4
    assert statistics.median(shares) < sanity.CPU_SHARE_MIN, shares
    assert any(s.startswith("the yardstick bursts had") for s in info["figures_flagged"])
    result.stdout.fnmatch_lines([f"{info['case_id']}: figure flagged: the yardstick bursts had *"])
