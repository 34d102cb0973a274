"""The worker: one process per case, run as `python -m tfperf.worker`.

It reads a WorkerSpec from stdin, then its case goes through three phases (tfperf.worker.case):
build, warm up (READY), serve the runner's commands until FINISH (FINISHED). Anything it knows
went wrong is reported as a FAILED event with a kind; anything it cannot report (a segfault,
the OOM killer, a hang) the runner works out from the process itself.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import IO

from tfperf.ground.failures import in_one_line
from tfperf.processes import protocol, scratch
from tfperf.processes.process_setup import claim_stdout, without_plotting
from tfperf.worker.case.phases import Phases
from tfperf.worker.proofs import case_checks, xla_compilations


def _run(spec: protocol.WorkerSpec, channel: IO[str], phases: Phases, started: float,
         compiled: Path) -> None:
    # TensorFlow is imported here, after stdout is claimed for the protocol: its own chatter
    # must not reach the channel.
    from tfperf.worker.case import build, serve, warm_up
    from tfperf.worker.telemetry.phase_memory import PhasePeaks

    phases.memory = PhasePeaks()
    built = build.case(spec, started)
    phases.memory.track(built.devices[0].replace("/device:", ""))
    warm = warm_up.case(built, spec, phases, compiled, channel)
    serve.case(built, warm, spec, sys.stdin, channel, compiled, phases.memory)


def _serve(started: float, compiled: Path) -> int:
    without_plotting()
    channel = claim_stdout()
    spec = protocol.WorkerSpec.from_json(sys.stdin.readline())
    phases = Phases(channel)
    compiled.mkdir(exist_ok=True)
    xla_compilations.enable(os.environ, compiled)
    try:
        _run(spec, channel, phases, started, compiled)
    except Exception as error:
        traceback.print_exc()
        protocol.send(channel, protocol.FAILED,
                      failure=case_checks.classify(error, phases.phase),
                      message=in_one_line(error), phase=phases.phase)
        return 1
    return 0


def main() -> int:
    started = time.perf_counter()
    # The runner's scratch folder (a worker started by hand makes its own), which both remove:
    # the runner when it ends this worker, the worker as it exits however it exits (its runner
    # may have been killed outright, even before it sent the case).
    folder = os.environ.get(protocol.SCRATCH_ENV)
    own = Path(folder) if folder else scratch.make("worker")
    try:
        return _serve(started, own / "xla-compilations")
    finally:
        shutil.rmtree(own, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
