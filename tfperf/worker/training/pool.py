"""The synthetic pool: the batches a case trains on when its input is `synthetic`, resident on
its devices."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tfperf.workload import ModelConfig, Workload

# The synthetic pool: up to POOL_BATCHES distinct batches, so that a step does not reread the
# batch it has just left in the caches, but at most POOL_BYTES of them (never fewer than 2).
# fused_elementwise's full batch is 1 GiB: 8 of them are 8 GiB on the device and more on the
# host while they are made, and the OOM killer ended its nightly cases on a 24 GiB machine.
POOL_BATCHES = 8
POOL_BYTES = 1 << 30


def pool_batches(workload: Workload, config: ModelConfig, most: int = POOL_BATCHES,
                 budget: int = POOL_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """The workload's batches for a synthetic pool: `most`, or as many as `budget` bytes hold
    but at least 2 (if `most` allows). A batch's size is learnt from one example, made first:
    a whole extra batch costs fused_elementwise's tiny pool 0.4 s."""
    example = workload.make_batches(replace(config, batch_size=1), 1)
    batch_bytes = config.batch_size * sum(array.nbytes for array in example)
    return workload.make_batches(config, min(most, max(2, budget // batch_bytes)))
