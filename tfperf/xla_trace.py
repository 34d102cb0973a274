"""Proof that XLA ran: count XLA compilations and executions in a TensorFlow profiler trace.

Asking for XLA (a flag, jit_compile=True) proves nothing: auto-clustering silently compiles
nothing on CPU without --tf_xla_cpu_global_jit, and a cluster can fall back to TensorFlow ops.
The profiler records what actually happened: `CpuExecutable::ExecuteAsyncOnStream` (or the
GPU's executable) for each XLA execution and `*Compiler::Compile*` for each compilation.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import tensorflow as tf


@dataclass
class XlaActivity:
    executions: int = 0
    compilations: int = 0


def _is_execution(name: str) -> bool:
    return name.endswith("Executable::ExecuteAsyncOnStream")


def _is_compilation(name: str) -> bool:
    return name.startswith(("CpuCompiler::Compile", "GpuCompiler::Compile")) or \
        name.endswith(":_XlaCompile")


def event_names(logdir: Path) -> Iterator[str]:
    """The name of every event in every profiler trace under logdir."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    for path in sorted(logdir.rglob("*.xplane.pb")):
        space = xplane_pb2.XSpace()
        space.ParseFromString(path.read_bytes())
        for plane in space.planes:
            names = {key: meta.name for key, meta in plane.event_metadata.items()}
            for line in plane.lines:
                for event in line.events:
                    yield names.get(event.metadata_id, "")


def read(logdir: Path) -> XlaActivity:
    activity = XlaActivity()
    for name in event_names(logdir):
        activity.executions += _is_execution(name)
        activity.compilations += _is_compilation(name)
    return activity


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


@contextlib.contextmanager
def traced() -> Iterator[XlaActivity]:
    """Profile the body; the yielded XlaActivity is filled in when the body ends."""
    activity = XlaActivity()
    with tempfile.TemporaryDirectory(prefix="tfperf-xla-trace-") as logdir:
        try:
            with profiling(Path(logdir)):
                yield activity
        finally:
            seen = read(Path(logdir))
            activity.executions, activity.compilations = seen.executions, seen.compilations
