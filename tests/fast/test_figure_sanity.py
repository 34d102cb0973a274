"""Figures that cannot be right are said, never printed silently: an MFU above 100%, a yardstick
that moved within a case or away from the session's other cases, a negative compile time
(flagged), bursts that shared their cores with other processes (flagged); a time or rate of
zero or less (the case fails `not_sane`). The figures here are the
ones a fresh-clone run printed on a 2-vCPU Xeon: resnet56's yardstick at 98 GFLOP/s (bursts
74-101) beside resnet20's 238-301."""

from __future__ import annotations

from typing import Any

import pytest

from tfperf.cases.matrix import Case
from tfperf.ground.failures import CaseFailure
from tfperf.measure import sanity, summary_table, training_checks
from tfperf.measure.case_record import CaseRecord

G = 1e9


def _info(workload: str, mfu: float, bursts: list[float], precision: str = "fp32",
          **more: Any) -> dict[str, Any]:
    case = Case(workload, "cpu", 1, "off", "NHWC", "default", "single", precision)
    rates = [b * G for b in bursts]
    return {"case_id": case.id, **case.axis_values(), "examples_per_sec": 100.0,
            "step_time_s": {"median": 0.1}, "worker_round_s": [0.2] * len(bursts),
            "compile_s": 1.5, "mfu": mfu, "peak_flops_per_device": sorted(rates)[len(rates) // 2],
            "peak_flops_per_device_by_round": rates, "figures_flagged": [], **more}


def test_an_mfu_above_100_percent_is_flagged_with_the_yardstick_it_rests_on() -> None:
    said = sanity.suspect(_info("resnet56", 1.476, [74, 98, 101]))
    assert said == ["MFU 147.6% is above 100%: its yardstick read 98 GFLOP/s (bursts 74-101), "
                    "lower than the device can be"]
    assert sanity.suspect(_info("resnet56", 0.52, [282, 290, 297])) == []


def test_a_yardstick_that_moves_within_a_case_and_a_negative_compile_time_are_flagged() -> None:
    said = sanity.suspect(_info("resnet20", 0.5, [290, 280, 120], compile_s=-0.02))
    assert said[0].startswith("the yardstick moved 2.4x within the case (120-290 GFLOP/s")
    assert said[1].startswith("compile time -0.02 s: the first round ran faster")
    assert sanity.suspect(_info("resnet20", 0.5, [290, 280, 150])) == []  # 1.9x: noise


def test_bursts_that_shared_their_cores_with_other_processes_are_flagged() -> None:
    # As with a busy loop on each core (benchmarks/yardstick_disturbance.py): the bursts had
    # under half their cores' time and read 3x low; an MFU of 106% or of 80% alike rests on
    # them. Shares near 1 say nothing; a cluster's tasks share the cores on purpose.
    said = sanity.suspect(_info("resnet56", 0.8, [50, 48, 52],
                                yardstick_cpu_share_by_round=[0.45, 0.38, 0.41]))
    assert said == ["the yardstick bursts had 41% of their cores' time (median; under 60% "
                    "means other processes ran on them), so they read low and the figures "
                    "rated against them read high"]
    assert sanity.suspect(_info("resnet56", 0.5, [150, 152, 149],
                                yardstick_cpu_share_by_round=[0.97, 0.6, 0.99])) == []
    cluster = _info("resnet56", 0.5, [75, 76, 74], yardstick_cpu_share_by_round=[0.5] * 3)
    assert sanity.suspect({**cluster, "workers": "2"}) == []


def test_a_case_whose_yardstick_reads_apart_from_the_session_is_flagged() -> None:
    infos = [_info("resnet20", 0.5, [238]), _info("resnet32", 0.5, [301]),
             _info("resnet50", 0.5, [186]), _info("resnet56", 1.476, [98]),
             # bf16 products run at another rate: compared only with bf16 cases
             _info("resnet20", 0.4, [460], precision="mixed_bf16")]
    flagged = sanity.between_cases(infos)
    assert list(flagged) == [infos[3]["case_id"]]
    assert flagged[infos[3]["case_id"]] == [
        "its yardstick read 98 GFLOP/s, 2.2x below the median 212 of the session's 4 cases on "
        "the same yardstick: MFU is not to be trusted"]
    # Of two cases, the one that is off.
    assert list(sanity.between_cases([infos[0], infos[3]])) == [infos[3]["case_id"]]
    # Two worker processes on one 2-core CPU burst together and read half each: compared only
    # with cases of two workers (a fresh-clone run flagged such a case, 80 against 154)
    two = {**_info("resnet20", 0.4, [72]), "workers": "2", "case_id": "resnet20-workers2",
           "strategy": "distributed_replicated"}
    # and a parameter-server cluster's one training task bursts alone (155 in that run).
    ps = {**_info("resnet20", 0.2, [155]), "workers": "2", "case_id": "resnet20-workers2-ps",
          "strategy": "parameter_server"}
    assert sanity.between_cases([*infos, two, ps]) == flagged


def test_a_time_of_zero_or_less_fails_the_case_not_sane() -> None:
    training_checks.sane(_info("resnet20", 0.5, [290, 280]))
    with pytest.raises(CaseFailure) as failed:
        training_checks.sane(_info("resnet20", 0.5, [290, 280], worker_round_s=[0.2, 0.0]),
                             "side B")
    assert failed.value.cause == "not_sane"
    assert failed.value.message.startswith("side B: 1 of 2 measured rounds took 0 s or less")


def test_the_summary_table_marks_a_flagged_figure_and_says_why() -> None:
    info = _info("resnet56", 1.476, [74, 98, 101])
    info["figures_flagged"] = sanity.suspect(info)
    case = Case("resnet56", "cpu", 1, "off", "NHWC", "default", "single", "fp32")
    lines = summary_table.table([CaseRecord(case, info)])
    assert "147.6%?" in lines[2]
    assert lines[3] == f"{case.id}: figure flagged: MFU 147.6% is above 100%: its yardstick " \
                       "read 98 GFLOP/s (bursts 74-101), lower than the device can be"
