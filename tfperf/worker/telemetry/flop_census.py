"""FLOPs per trained example of every workload in a folder, at one size: `python -m
tfperf.worker.telemetry.flop_census FOLDER SIZE`, started by tfperf.plan.flops_cache.

Counted from each workload's traced forward and gradient at batch 1 (FLOPs grow linearly with
the batch), in fp32 and its first layout, on the CPU, as the suite counts them for MFU.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tfperf.processes import protocol
from tfperf.processes.process_setup import claim_stdout, without_plotting

CENSUS = "census"


def main(argv: list[str]) -> int:
    without_plotting()
    channel = claim_stdout()
    if len(argv) != 2:
        print("usage: python -m tfperf.worker.telemetry.flop_census FOLDER SIZE", file=sys.stderr)
        return 2
    from tfperf.worker import strategies
    from tfperf.worker.training import loop
    from tfperf.workload import ModelConfig, discover, load_module

    found: dict[str, float] = {}
    for name, info in sorted(discover(Path(argv[0])).items()):
        workload = load_module(info.path)
        config = ModelConfig(argv[1], 1, info.data_formats[0], 0)
        strategy = strategies.load("single").create(["/cpu:0"], strategies.StrategySettings())
        trainer = loop.Trainer(workload, config, strategy, "/cpu:0", jit_compile=False,
                                   pool_size=1)
        found[name] = trainer.flops_per_example(1)
    protocol.send(channel, CENSUS, flops_per_example=found)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
