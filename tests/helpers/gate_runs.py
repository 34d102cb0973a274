"""Runs of one case as the gate keeps them, made up for the gate's tests."""

from __future__ import annotations

from tfperf.ground.vocabulary import RunVerdict
from tfperf.storage.fingerprint import Fingerprint
from tfperf.storage.session_files import Run

CASE = "resnet20-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"
HARD = {"cpu_model": "Xeon", "cpu_cores": 2, "tensorflow": "2.21.0", "config": "abc"}


def run(eps: float, when: int, *, hard: dict[str, object] | None = None, verdict: RunVerdict = "",
        session: str = "", memory: float = 1e8, compile_s: float = 2.0) -> Run:
    """A run of CASE at `eps` examples/s on day `when` of November 2026, its rounds 1% apart."""
    rounds = tuple(eps * f for f in (0.99, 1.0, 1.01, 1.0, 0.995))
    return Run(CASE, Fingerprint(hard or HARD, {"host": f"h{when}"}), f"2026-11-{when:02d}",
               session or f"s{when}", eps, rounds, peak_memory_bytes=memory,
               compile_cpu_s=compile_s, verdict=verdict)
