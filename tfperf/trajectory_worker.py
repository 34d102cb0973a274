"""A long-lived worker for XLA equivalence arms: `python -m tfperf.trajectory_worker`.

One process serves many arms of one XLA environment (auto-clustering must be switched on
before TensorFlow starts, so `auto` arms get a process of their own), which keeps the import
of TensorFlow out of every hypothesis example. Requests and answers are protocol lines.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from tfperf import protocol
from tfperf.failures import in_one_line
from tfperf.process_start import claim_stdout, without_plotting
from tfperf.worker import classify

ARM = "arm"
ARM_DONE = "arm_done"


def main() -> int:
    without_plotting()
    channel = claim_stdout()
    from tfperf import equivalence, trajectory

    for line in sys.stdin:
        request = protocol.parse(line)
        try:
            activity = trajectory.run(
                equivalence.ArmSpec.from_json(request["spec"]),
                Path(request["workload_path"]),
                Path(request["out"]),
                Path(request["initial"]) if request.get("initial") else None,
            )
        except Exception as error:
            traceback.print_exc()
            protocol.send(channel, protocol.FAILED, failure=classify(error, "setup"),
                          message=in_one_line(error), phase="setup")
            continue
        protocol.send(channel, ARM_DONE, xla_executions=activity.executions,
                      xla_compilations=activity.compilations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
