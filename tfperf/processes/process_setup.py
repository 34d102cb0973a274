"""What every process the suite starts (worker, cluster server, equivalence arm, catalog,
zygote) does before anything else. Light on purpose: the zygote imports it, and a module the
zygote has imported cannot also be run afresh as `python -m` without two copies of it."""

from __future__ import annotations

import os
import sys
from typing import IO


def without_plotting() -> None:
    """Keras imports matplotlib.pyplot when it can (0.4-0.6 s of a 6 s start on two cores),
    for plotting helpers no worker calls: make that import fail, which Keras allows for."""
    sys.modules.setdefault("matplotlib", None)  # type: ignore[arg-type]


def claim_stdout() -> IO[str]:
    """Keep the real stdout for the protocol; everything else printed goes to stderr."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel
