"""Scaling efficiency: how much of N devices' worth a multi-device case got."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tfperf.cases.matrix import Case


def efficiency(case: Case, examples_per_sec: float, measured: Mapping[Case, float]
               ) -> dict[str, Any]:
    """Examples/s per device over the 1-device figure of the same configuration (single
    strategy, default placement) in `measured`, the session's cases so far. Cases run in the
    matrix's order, which puts device count 1 first."""
    if case.device_count == 1 and case.workers == 1 and case.strategy == "single":
        return {}
    reference = replace(case, device_count=1, strategy="single", placement="default",
                        workers=1, virtual=False)
    one = measured.get(reference)
    devices = case.device_count * case.workers
    return {
        "scaling_reference": reference.id,
        "scaling_efficiency": examples_per_sec / devices / one if one else None,
        **({} if one else {"scaling_note": f"{reference.id} did not run in this session"}),
    }
