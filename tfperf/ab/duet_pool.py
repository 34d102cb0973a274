"""The live duets of one A/B case: each a side A and a side B worker (or cluster), one duet per
slot. Started in their start order, warmed up, relayed by fresh ones and ended. The launcher is
passed in: the real one starts TensorFlow workers (tfperf.processes.launcher), a test's fake one
stands in for them at that boundary, so relay and stopping can be tested without TensorFlow."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from tfperf.ab.duet_types import SIDES, Pair, Side, SideRounds
from tfperf.ab.signed_rank import centre
from tfperf.ground.failures import CaseFailure
from tfperf.ground.vocabulary import SIDE_A, SIDE_B, SideName
from tfperf.processes.protocol import Burst, WorkerSpec
from tfperf.processes.runtime import Runtime


class Processes(Protocol):
    """A started worker or cluster, as tfperf.processes.worker_process.Worker and launcher.Cluster."""

    @property
    def pids(self) -> list[int]: ...
    def __enter__(self) -> Any: ...
    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> Any: ...
    def allow(self, timeout_s: float) -> None: ...
    def wait_ready(self) -> dict[str, Any]: ...
    def run_round(self, inject_seconds: float = 0.0, inject_fraction: float = 0.0
                  ) -> dict[str, Any]: ...
    def yardstick(self) -> Burst: ...
    def finish(self) -> dict[str, Any]: ...


# spec, environment, time limit, log file, cluster mode, runtime: processes not started yet.
Launch = Callable[[WorkerSpec, Mapping[str, str], float, Path, str, Runtime], Processes]


def start_order(duet: int) -> tuple[SideName, SideName]:
    """Odd duets start A's worker first, even ones B's."""
    return (SIDE_A, SIDE_B) if duet % 2 else (SIDE_B, SIDE_A)


def order_effect(pairs: Sequence[Pair]) -> dict[str, float]:
    """B/A in the duets that started A first alone, and in those that started B first. Their
    difference is what starting second does, which the alternation of the duets cancels."""
    found = {}
    for first in SIDES:
        ratios = [p.ratio for p in pairs if start_order(p.duet)[0] == first]
        if len(ratios) >= 2:
            found[f"{first.lower()}_first_ratio"] = math.exp(
                centre([math.log(r) for r in ratios]))
    return found


@contextlib.contextmanager
def blamed(side: Side) -> Iterator[None]:
    """A failure of a side's worker names the side."""
    try:
        yield
    except CaseFailure as failure:
        raise CaseFailure(failure.cause, f"{side.label()}: {failure.message}",
                          failure.log_tail, failure.phase, failure.log_path) from None


class DuetPool:
    """Duet number n holds slot (n - 1) % duets, so a slot's start order stays the same
    through its relay. Every worker ends when the pool's context does."""

    def __init__(self, sides: Mapping[SideName, Side], env: Mapping[str, str], timeout_s: float,
                 log_dir: Path, case_id: str, cluster_mode: str, launch: Launch, duets: int,
                 rounds: Mapping[SideName, SideRounds]) -> None:
        self.sides, self.env, self.timeout_s = sides, env, timeout_s
        self.log_dir, self.case_id = log_dir, case_id
        self.cluster_mode, self.launch = cluster_mode, launch
        self.duets, self.rounds = duets, rounds
        self.live: dict[int, tuple[int, dict[SideName, Processes], contextlib.ExitStack]] = {}
        self.served: dict[int, int] = {}  # pairs measured, by duet number
        self.started: list[int] = []  # every duet number, in the order it started
        self.relay_s = 0.0  # duets ending and fresh ones starting
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> DuetPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def start_all(self) -> None:
        """Every first duet starts before any warms up, as one case's workers do."""
        for duet in range(1, self.duets + 1):
            self._start(duet)
        for duet in range(1, self.duets + 1):
            self._wait_ready(duet)

    def duet_in(self, slot: int) -> tuple[int, dict[SideName, Processes]]:
        duet, workers, _ = self.live[slot]
        return duet, workers

    def others(self, worker: Processes) -> list[int]:
        """The pids of every live worker but this one: they should be asleep."""
        return [pid for _, workers, _ in self.live.values() for other in workers.values()
                if other is not worker for pid in other.pids]

    def relay(self, slot: int) -> None:
        """The slot's duet has measured its share: it finishes (its checks need its last
        figures) and ends, and a fresh duet takes its place."""
        began = time.monotonic()
        duet, workers, stack = self.live[slot]
        self._finish(duet, workers)
        stack.close()
        self._start(duet + self.duets)
        self._wait_ready(duet + self.duets)
        self.relay_s += time.monotonic() - began

    def finish_all(self) -> None:
        for duet, workers, _ in self.live.values():
            self._finish(duet, workers)

    def _start(self, duet: int) -> None:
        stack = self._stack.enter_context(contextlib.ExitStack())
        workers: dict[SideName, Processes] = {}
        for name in start_order(duet):
            side = self.sides[name]
            worker = self.launch(side.spec, self.env, self.timeout_s,
                                 self.log_dir / f"{self.case_id}.{name}{duet}.log",
                                 self.cluster_mode, side.runtime)
            with blamed(side):
                stack.enter_context(worker)  # which starts it
            workers[name] = worker
        self.live[(duet - 1) % self.duets] = duet, workers, stack
        self.served[duet] = 0
        self.started.append(duet)

    def _wait_ready(self, duet: int) -> None:
        workers = self.live[(duet - 1) % self.duets][1]
        for name in start_order(duet):
            with blamed(self.sides[name]):
                self.rounds[name].readies[duet] = workers[name].wait_ready()

    def _finish(self, duet: int, workers: dict[SideName, Processes]) -> None:
        for name, worker in workers.items():
            worker.allow(self.timeout_s)
            with blamed(self.sides[name]):
                self.rounds[name].finished[duet] = worker.finish()
