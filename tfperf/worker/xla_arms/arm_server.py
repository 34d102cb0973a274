"""A long-lived worker for XLA equivalence arms: `python -m tfperf.worker.xla_arms.arm_server`.

One process serves many arms of one XLA environment (auto-clustering must be switched on
before TensorFlow starts, so `auto` arms get a process of their own), which keeps the import
of TensorFlow out of every hypothesis example. Requests and answers are protocol lines.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from tfperf.ground.failures import in_one_line
from tfperf.processes import protocol
from tfperf.processes.process_setup import claim_stdout, without_plotting
from tfperf.worker.proofs.case_checks import classify


def main() -> int:
    without_plotting()
    channel = claim_stdout()
    from tfperf.numerics import compare
    from tfperf.worker.xla_arms import trajectory

    for line in sys.stdin:
        request = protocol.parse(line)
        try:
            activity = trajectory.run(
                compare.ArmSpec.from_json(request["spec"]),
                Path(request["workload_path"]),
                Path(request["out"]),
                Path(request["initial"]) if request.get("initial") else None,
            )
        except Exception as error:
            traceback.print_exc()
            protocol.send(channel, protocol.FAILED, failure=classify(error, "setup"),
                          message=in_one_line(error), phase="setup")
            continue
        protocol.send(channel, protocol.ARM_DONE, xla_executions=activity.executions,
                      xla_compilations=activity.compilations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
