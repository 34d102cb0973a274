"""Proof that XLA ran: count XLA compilations and executions in a TensorFlow profiler trace.

Asking for XLA (a flag, jit_compile=True) proves nothing: auto-clustering silently compiles
nothing on CPU without --tf_xla_cpu_global_jit, and a cluster can fall back to TensorFlow ops.
The profiler records what actually happened: `CpuExecutable::ExecuteAsyncOnStream` (or the
GPU's executable) for each XLA execution and `*Compiler::Compile*` for each compilation; in
TensorFlow 2.20, whose XLA:CPU traces no executable event, each HLO instruction it ran
(`end: <instruction>`); in 2.18 and 2.19, each instruction by its bare name on XLA:CPU's own
thread (a line named `host_executor/<id>`). 2.16 and 2.17 trace nothing of XLA:CPU at all (only
the TensorFlow function that called it): the proof cannot see their XLA, and fails the case.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import tensorflow as tf

from tfperf.processes import protocol

if TYPE_CHECKING:
    from tfperf.worker.pipelines import Source
    from tfperf.worker.training.loop import RoundResult


@dataclass
class XlaActivity:
    executions: int = 0
    compilations: int = 0


def _is_execution(name: str) -> bool:
    return name.endswith("Executable::ExecuteAsyncOnStream")


def _is_compilation(name: str) -> bool:
    return name.startswith(("CpuCompiler::Compile", "GpuCompiler::Compile")) or \
        name.endswith(":_XlaCompile")


def event_name(line: str, name: str) -> str:
    """An event's name as activity() reads it: an instruction on XLA:CPU's host-executor thread
    (TensorFlow 2.18, 2.19) named as 2.20 names one, `end: <instruction>`."""
    return f"end: {name}" if line.startswith("host_executor/") else name


def file_event_names(path: Path) -> Iterator[str]:
    """The name of every event in one profiler trace (an .xplane.pb file)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    for plane in space.planes:
        names = {key: meta.name for key, meta in plane.event_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                yield event_name(line.name, names.get(event.metadata_id, ""))


def event_names(logdir: Path) -> Iterator[str]:
    """The name of every event in every profiler trace under logdir."""
    for path in sorted(logdir.rglob("*.xplane.pb")):
        yield from file_event_names(path)


def activity(names: Iterable[str]) -> XlaActivity:
    seen = XlaActivity()
    instructions: Counter[str] = Counter()
    for name in names:
        seen.executions += _is_execution(name)
        seen.compilations += _is_compilation(name)
        if name.startswith("end: "):
            instructions[name] += 1
    if not seen.executions and instructions:
        # TensorFlow 2.20's XLA:CPU traces no executable event, only each HLO instruction it
        # runs ("dot.3", then "end: dot.3"). Every instruction of an execution runs at least
        # once in it, so the least-run one counts the executions (at most).
        seen.executions = min(instructions.values())
    return seen


def read(logdir: Path) -> XlaActivity:
    return activity(event_names(logdir))


@contextlib.contextmanager
def profiling(logdir: Path) -> Iterator[None]:
    """TensorFlow's profiler around the body, its trace written where TensorBoard's profile
    plugin finds it (logdir/plugins/profile/<run>/)."""
    logdir.mkdir(parents=True, exist_ok=True)
    tf.profiler.experimental.start(str(logdir))
    try:
        yield
    finally:
        tf.profiler.experimental.stop()


def trace_folder() -> tempfile.TemporaryDirectory[str]:
    """A folder for one trace, in the worker's scratch folder where it has one: its runner
    removes that even where the worker is killed while tracing."""
    return tempfile.TemporaryDirectory(prefix="tfperf-xla-trace-",
                                       dir=os.environ.get(protocol.SCRATCH_ENV))


@contextlib.contextmanager
def traced() -> Iterator[XlaActivity]:
    """Profile the body; the yielded XlaActivity is filled in when the body ends."""
    activity = XlaActivity()
    with trace_folder() as logdir:
        try:
            with profiling(Path(logdir)):
                yield activity
        finally:
            seen = read(Path(logdir))
            activity.executions, activity.compilations = seen.executions, seen.compilations


def trace_tasks(addresses: Sequence[str], logdir: Path, keep_busy: Callable[[], object],
                seconds: float) -> int:
    """Profile remote TensorFlow servers for `seconds`, calling keep_busy until every trace is
    in, so the window holds their work from start to end. Every tf.distribute.Server hosts a
    profiler service on its own port; each server writes its trace itself, under logdir, so
    on a cluster of several machines logdir must be shared storage. Returns how many times
    keep_busy ran."""
    failures: list[str] = []

    def trace(address: str) -> None:
        try:
            tf.profiler.experimental.client.trace(
                f"grpc://{address}", str(logdir), max(1, round(seconds * 1000)))
        except Exception as error:  # reported below, in the caller's thread
            failures.append(f"{address}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=trace, args=(a,), daemon=True) for a in addresses]
    for thread in threads:
        thread.start()
    # The profiler server takes a moment to start: work begins before and ends after.
    deadline = time.monotonic() + seconds + 60
    busy = 0
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        keep_busy()
        busy += 1
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in threads):
        failures.append(f"no trace within {seconds + 60:.0f} s")
    if failures:
        raise RuntimeError(f"profiling the remote tasks failed: {'; '.join(failures)}")
    return busy


def profiled_rounds(source: Source, k: int, logdir: Path, tasks: dict[str, str]
                     ) -> list[RoundResult]:
    """One round under TensorFlow's profiler, into logdir. Where the steps run in remote tasks,
    their own profiles go there too (TensorBoard shows each task as a host), taken while
    rounds run for a two-second window."""
    if not tasks:
        with profiling(logdir):
            return [source.round(k)]
    rounds: list[RoundResult] = []
    with profiling(logdir):
        trace_tasks(list(tasks.values()), logdir,
                              lambda: rounds.append(source.round(k)), 2.0)
    return rounds
