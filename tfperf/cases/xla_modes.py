"""The three XLA modes: how each is switched on, in the worker's environment or its code; and
the environment a case's workers start from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfperf.cases.matrix import Case


@dataclass(frozen=True)
class XlaMode:
    name: str
    # TF_XLA_FLAGS for the worker; auto-clustering must be asked for before TF starts.
    tf_xla_flags: str
    # Whether the per-replica forward and gradient run under tf.function(jit_compile=True).
    jit_compile: bool


MODES: dict[str, XlaMode] = {
    "off": XlaMode("off", "", jit_compile=False),
    # --tf_xla_cpu_global_jit: without it auto-clustering compiles nothing on CPU.
    "auto": XlaMode("auto", "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit", jit_compile=False),
    "jit": XlaMode("jit", "", jit_compile=True),
}


def environment(mode: str, base: dict[str, str]) -> dict[str, str]:
    """`base` with the mode's TF_XLA_FLAGS (and none left over from the caller's shell), and
    TensorFlow's start-up chatter kept out of the worker's log."""
    env = dict(base)
    env["TF_CPP_MIN_LOG_LEVEL"] = env.get("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONUNBUFFERED"] = "1"
    flags = MODES[mode].tf_xla_flags
    if flags:
        env["TF_XLA_FLAGS"] = flags
    else:
        env.pop("TF_XLA_FLAGS", None)
    return env


def case_environment(case: Case, base: dict[str, str]) -> dict[str, str]:
    """The worker's own environment: XLA flags and visible devices are per case."""
    env = environment(case.xla, base)
    if case.device_kind == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""  # a CPU case must not touch (or allocate on) a GPU
    else:
        visible = base.get("CUDA_VISIBLE_DEVICES")
        ids = visible.split(",") if visible else [str(i) for i in range(case.device_count)]
        env["CUDA_VISIBLE_DEVICES"] = ",".join(ids[: case.device_count])
    return env
