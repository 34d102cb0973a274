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
    """`base` with the mode's TF_XLA_FLAGS (and none left over from the caller's shell),
    TensorFlow's start-up chatter kept out of the worker's log, and oneDNN on unless `base`
    says otherwise."""
    env = dict(base)
    env["TF_CPP_MIN_LOG_LEVEL"] = env.get("TF_CPP_MIN_LOG_LEVEL", "2")
    # TensorFlow turns its oneDNN kernels on by itself only on CPUs with AVX512_VNNI, BF16 or
    # AMX. Without them (an AMD EPYC with AVX2 only, seen 2026-11-25) NCHW convolutions have no
    # gradient kernel, the CPU allocator keeps no statistics (no peak memory) and ResNet-20
    # runs 5x slower: one setting on every CPU kind keeps the cases runnable and comparable. A
    # side or a shell that sets it (TF_ENABLE_ONEDNN_OPTS=0, an A/B subject) still wins.
    env["TF_ENABLE_ONEDNN_OPTS"] = env.get("TF_ENABLE_ONEDNN_OPTS", "1")
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
