"""CPU time used by worker processes, all their threads together, read from /proc.

An A/B case keeps its duets' workers alive and lets one train at a time: what the others'
thread pools burn meanwhile (spinning instead of sleeping) is taken from the one that trains.
No TensorFlow here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def seconds(pids: Iterable[int]) -> float | None:
    """User and system CPU seconds of the processes so far; None where /proc cannot say (not
    Linux, or a process is gone)."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        # The command name, field 2, is in parentheses and may hold spaces: count after it.
        fields = stat[stat.rindex(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15
    return total / _TICKS_PER_S
