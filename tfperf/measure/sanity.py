"""Figures that cannot be right, said in the result instead of printed silently.

Two kinds:
- Impossible: a round, a step or a rate of zero or less. The measurement itself is broken, so
  the case fails (`not_sane`), as a case whose rounds traced again fails `not_steady`.
- Suspect: a figure that rests on a yardstick burst the machine disturbed (each round is rated
  against the faster of the bursts on either side of it, figures.beside_rounds, so a burst
  hit alone does not move it; a disturbance that lasts does). Above 100% of the
  device's own matrix-product rate (MFU) or copy rate; a yardstick that moved by more than
  WITHIN_CASE between one case's bursts; a case whose yardstick read more than BETWEEN_CASES
  away from the other cases of its session that use the same yardstick; bursts that had
  under CPU_SHARE_MIN of their cores' time (another process ran on them). The throughput was
  measured apart from the yardstick and stands; the flag says which figure not to trust, and
  why. A compile time below zero (the first round ran faster than the median one) is flagged,
  never clamped to zero.

The first figure that asked for this: MFU 147.6% for resnet56 on a 2-vCPU Xeon, whose
yardstick read 98 GFLOP/s while the resnet20 cases of the same session read 238-301.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

# No workload does more than the device's own matrix products or copies.
FRACTION_MAX = 1.0
# One case's bursts, highest over lowest. On the 2-core CPU on a noisy evening 0.2 s bursts of
# the 1024-square product spread 108-152 GFLOP/s (1.4x) over 72 bursts: twice is not noise.
WITHIN_CASE = 2.0
# A case's median burst against the median of its session's cases on the same yardstick (itself
# included, so that of two cases the one that is off is the one flagged; cases of several
# worker processes are compared only with cases of as many, of the same strategy): the resnet20 cases
# of one session read 238-301 (1.26x apart); the disturbed one 98 (2.7x).
BETWEEN_CASES = 1.5
# A CPU burst's share of its cores' time (protocol.Burst), median over the case's bursts, below
# which other processes had the cores. On the 2-core CPU alone: 0.97-0.99 (matrix product),
# 0.81-0.86 (copy, partly memory-bound); with a busy loop beside it 0.5, with one on each core
# 0.32, where a resnet56 case's bursts read 3x low while its rounds ran 1.2x slower, so MFU
# rose above 100% (benchmarks/yardstick_disturbance.py; docs/results.md). Said for cases of
# one worker process: a cluster's tasks burst at once on purpose and share the cores.
CPU_SHARE_MIN = 0.6

# The figure each yardstick rates, and the rate it was rated against.
_RATED = (("mfu", "MFU", "peak_flops_per_device", "peak_flops_per_device_by_round", 1e9,
           "GFLOP/s"),
          ("fraction_of_copy_rate", "fraction of the copy rate", "copy_bytes_per_sec",
           "copy_bytes_per_sec_by_round", 1e9, "GB/s"))


def impossible(info: dict[str, Any]) -> list[str]:
    """Times and rates of zero or less: what makes a measurement meaningless."""
    said = []
    rounds = info.get("worker_round_s") or []
    bad = [s for s in rounds if not s > 0]
    if bad:
        said.append(f"{len(bad)} of {len(rounds)} measured rounds took {min(bad):g} s or less")
    step = (info.get("step_time_s") or {}).get("median")
    if step is not None and not step > 0:
        said.append(f"the median step took {step:g} s")
    rate = info.get("examples_per_sec")
    if rate is not None and not rate > 0:
        said.append(f"{rate:g} examples/s")
    return said


def suspect(info: dict[str, Any]) -> list[str]:
    """One case's figures that rest on a disturbed yardstick, or a negative compile time."""
    said = []
    for key, name, rate_key, rounds_key, unit, unit_name in _RATED:
        fraction, rates = info.get(key), info.get(rounds_key) or []
        if fraction is not None and fraction > FRACTION_MAX:
            said.append(f"{name} {fraction:.1%} is above 100%: its yardstick read "
                        f"{info[rate_key] / unit:.0f} {unit_name} (bursts "
                        f"{min(rates) / unit:.0f}-{max(rates) / unit:.0f}), lower than the "
                        "device can be")
        if rates and min(rates) > 0 and max(rates) / min(rates) > WITHIN_CASE:
            said.append(f"the yardstick moved {max(rates) / min(rates):.1f}x within the case "
                        f"({min(rates) / unit:.0f}-{max(rates) / unit:.0f} {unit_name}; more "
                        f"than {WITHIN_CASE:g}x is not the machine's noise): something else "
                        f"ran beside it; {name} rates each round against the faster burst "
                        "beside it")
    shares = info.get("yardstick_cpu_share_by_round") or []
    share = float(np.median(shares)) if shares else 1.0
    if str(info.get("workers")) == "1" and share < CPU_SHARE_MIN:
        said.append(f"the yardstick bursts had {share:.0%} of their cores' "
                    f"time (median; under {CPU_SHARE_MIN:.0%} means other processes ran on "
                    "them), so they read low and the figures rated against them read high")
    compile_s = info.get("compile_s")
    if compile_s is not None and compile_s < 0:
        said.append(f"compile time {compile_s:.3g} s: the first round ran faster than the "
                    "median one, so no compile time was measurable")
    return said


def _yardstick(info: dict[str, Any]) -> tuple[tuple[str, ...], float, str, float, str] | None:
    """What rated the case (device kind, precision, kind of yardstick, and which worker
    processes burst at once: two training tasks on one 2-core CPU read half each, while a
    parameter-server cluster's one training task has the CPU) and its median rate."""
    for key, name, rate_key, _, unit, unit_name in _RATED:
        if info.get(key) is not None and info.get(rate_key):
            group = (str(info.get("device_kind")), str(info.get("precision")), key,
                     str(info.get("workers")), str(info.get("strategy")))
            return group, float(info[rate_key]), name, unit, unit_name
    return None


def between_cases(infos: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Cases whose yardstick read more than BETWEEN_CASES away from the median of the
    session's cases on the same yardstick: case id -> what to say."""
    rated = [(info["case_id"], found) for info in infos if (found := _yardstick(info))]
    flagged: dict[str, list[str]] = {}
    for case_id, (group, rate, name, unit, unit_name) in rated:
        alike = [r for _, (g, r, *_) in rated if g == group]
        usual = float(np.median(alike))
        factor = max(rate / usual, usual / rate)
        if len(alike) > 1 and factor > BETWEEN_CASES:
            flagged[case_id] = [
                f"its yardstick read {rate / unit:.0f} {unit_name}, {factor:.1f}x "
                f"{'below' if rate < usual else 'above'} the median {usual / unit:.0f} of the "
                f"session's {len(alike)} cases on the same yardstick: {name} is not to be "
                "trusted"]
    return flagged


def flag_between_cases(infos: Sequence[dict[str, Any]]) -> None:
    """Add between_cases' flags to the measured cases' `figures_flagged`, in place (the list
    pytest-benchmark's extra_info holds too)."""
    measured = [info for info in infos if "figures_flagged" in info]
    for case_id, said in between_cases(measured).items():
        next(i for i in measured if i["case_id"] == case_id)["figures_flagged"].extend(said)
