"""The checks every measured worker gets, whichever runner measured it: the loss fell (a
workload that did not learn has a speed that means nothing) and the measured rounds neither
traced nor compiled (they measured training, not set-up), and no time or rate it reports is
zero or less. The XLA and layout proofs are the workers' own, made before they say READY."""

from __future__ import annotations

from typing import Any

from tfperf.ground.failures import CaseFailure
from tfperf.measure import figures, sanity


def check(loss_first: float, loss_last: float, traces: int, compilations: int,
          where: str = "") -> None:
    """Raise CaseFailure (loss_not_falling, not_steady) naming `where`, if given."""
    said = f"{where}: " if where else ""
    if not loss_last < loss_first:
        raise CaseFailure("loss_not_falling", f"{said}loss went from {loss_first:.4g} to "
                          f"{loss_last:.4g}: the workload did not learn, so its speed means "
                          "nothing")
    unsteady = figures.unsteady(traces, compilations)
    if unsteady:
        raise CaseFailure("not_steady", f"{said}during the measured rounds {unsteady}: the "
                          "measurement did not see steady state")


def sane(info: dict[str, Any], where: str = "") -> None:
    """Raise CaseFailure (not_sane) if the figures hold a time or a rate of zero or less."""
    broken = sanity.impossible(info)
    if broken:
        said = f"{where}: " if where else ""
        raise CaseFailure("not_sane", f"{said}{'; '.join(broken)}: a measurement that cannot "
                          "be, so none of its figures is reported as one")
