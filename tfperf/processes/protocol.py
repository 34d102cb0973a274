"""What the runner and its worker process say to each other: one JSON object per line.

The worker's real stdout is reserved for this channel (TensorFlow's own chatter is moved to
stderr before it is imported), so a stray print can never corrupt a result.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import IO, Any, NamedTuple, TypedDict

# The values of WorkerSpec's all_reduce and file_layout, and the options that set them.
ALL_REDUCE = ("auto", "nccl", "hierarchical_copy", "one_device", "ring")
FILE_LAYOUTS = ("many_small", "few_large")
# A cluster task's environment: the folder under which each server task counts its XLA
# compilations (see tfperf.worker.proofs.xla_compilations), set by the launcher for a local cluster.
XLA_COMPILATIONS_ENV = "TFPERF_XLA_COMPILATIONS"
# Every process's environment: a folder of its own for what it writes while it runs (a worker
# counts its XLA compilations there), made and removed by the runner, which ends the process
# with SIGKILL and so cannot leave the cleaning to it.
SCRATCH_ENV = "TFPERF_SCRATCH"


class CaseAxes(TypedDict):
    """A case as it crosses to its worker: the workload and each axis value, as strings (what
    tfperf.cases.matrix.Case.worker_axes gives)."""

    workload: str
    device_kind: str
    device_count: str
    xla: str
    data_format: str
    placement: str
    strategy: str
    precision: str
    input: str
    preprocess: str
    workers: str


@dataclass(frozen=True)
class WorkerFaults:
    """Test-only faults a worker puts into its own case, to prove that a check catches them
    (tfperf.options.faults): one value, none by default."""

    # The measured round (from 0) before which the step is made to trace again.
    retrace_round: int | None = None
    # --perf-inject-cost (an A/B's side B): CPU seconds burnt inside the first round, as a
    # longer compile would take, and MiB held on the device from before the first round.
    compile_s: float = 0.0
    memory_mb: int = 0


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs to build and train one case."""

    case: CaseAxes
    workload_path: str
    size: str
    batch_size: int
    warmup_rounds: int
    steps_per_round: int
    seed: int = 0
    cache_dir: str = ".perf-results/cache"
    virtual: bool = False  # split one physical device into device_count logical ones
    virtual_memory_mb: int | None = None  # per logical GPU
    all_reduce: str = "auto"
    file_layout: str = "few_large"
    # Where a multi-process case's tasks are: local (started by the runner on loopback),
    # tf_config or slurm (a real cluster this machine joins as one task).
    cluster: str = "local"
    faults: WorkerFaults = WorkerFaults()

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerSpec:
        data = json.loads(text)
        return cls(**{**data, "faults": WorkerFaults(**data.get("faults", {}))})


# Commands, runner -> worker.
ROUND = "round"
PROFILE = "profile"  # one more round under the profiler, into `logdir`; `summarise`: read it
YARDSTICK = "yardstick"  # time one burst of the case's yardstick (see peak), between rounds
FINISH = "finish"

# Events, worker -> runner.
PHASE = "phase"  # the worker's phase before READY changed: building, compiling, proving XLA...
READY = "ready"  # warm-up done: compile time, FLOPs, first loss
ROUND_DONE = "round_done"
PROFILED = "profiled"
YARDSTICK_DONE = "yardstick_done"  # with its rate (FLOP/s or bytes/s) and cpu_share
FINISHED = "finished"
ARM = "arm"  # an XLA equivalence arm to train (tfperf.worker.xla_arms.arm_server)
ARM_DONE = "arm_done"
FAILED = "failed"  # with kind and message: the worker knew what went wrong


class Burst(NamedTuple):
    """One yardstick burst: its rate, and on CPU the share of the process's cores' time it
    had (its CPU time over wall time x cores; None on GPU, whose burst the CPU only waits
    for). A burst that shared its cores with another process reads low by more than the
    rounds beside it do (benchmarks/yardstick_disturbance.py)."""

    rate: float
    cpu_share: float | None = None

    @classmethod
    def of(cls, done: dict[str, Any]) -> Burst:
        """From a YARDSTICK_DONE message."""
        return cls(float(done["rate"]), done.get("cpu_share"))


def encode(kind: str, **payload: Any) -> str:
    return json.dumps({"kind": kind, **payload})


def send(stream: IO[str], kind: str, **payload: Any) -> None:
    stream.write(encode(kind, **payload) + "\n")
    stream.flush()


def parse(line: str) -> dict[str, Any]:
    message = json.loads(line)
    if not isinstance(message, dict) or "kind" not in message:
        raise ValueError(f"not a protocol message: {line[:200]!r}")
    return message
