"""Run one case on both sides, round by round, until the verdict is decided.

`settings.duets` duets, each a side A and a side B worker (or cluster), all alive at once: odd
duets start A's first, even ones B's first, and pairs go round the duets, so whatever the start
order does falls on each side equally at every look. Each worker process also runs at a speed
of its own (docs/ab.md), which more pairs of the same processes never average out. So the duets
relay: once a duet has measured its pairs (`settings.relay`, later `late_relay`), its workers
finish (their checks need their last figures) and end, and a fresh duet takes its slot, with
the slot's start order; the verdict (verdict.py) takes each duet as a unit. Within a pair the
two sides' turns run back to back, their order counterbalanced within each duet: every two of
its pairs in a row run AB and BA, which first drawn from the session's seed (kept in its file),
so that what the second turn gains falls on each side equally in every duet, and no two
sessions replay one sequence. A turn is as many whole rounds as last about `turn_s` (the same
count on both sides), after a yardstick burst that rates its rounds (MFU; before every
`yardstick_every`-th pair of a duet, the pairs between rated by their side's last burst). Each
pair keeps what the workers' CPUs did during its turns: the ones that wait should be asleep.
The verdict is judged at each look; the first decided one ends the measurement.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tfperf.ab import verdict
from tfperf.ab.duet_pool import DuetPool, Launch, Processes, blamed
from tfperf.ab.duet_types import SIDES, Comparison, Pair, Side, SideRounds
from tfperf.ab.random_effects import Pairs
from tfperf.ab.verdict import Verdict
from tfperf.ground.vocabulary import SIDE_A, SIDE_B, SideName
from tfperf.measure import figures
from tfperf.options.ab_settings import ABSettings
from tfperf.processes import cpu_time
from tfperf.processes.launcher import launch as launch_processes


def turn_orders(seed: int, case_id: str, duet: int) -> Iterator[tuple[SideName, SideName]]:
    """The order of each of a duet's pairs: AB and BA in every two in a row, which first drawn
    from the session's seed."""
    draw = random.Random(f"{seed}/{case_id}/{duet}")
    while True:
        block: list[tuple[SideName, SideName]] = [(SIDE_A, SIDE_B), (SIDE_B, SIDE_A)]
        draw.shuffle(block)
        yield from block


def as_pairs(pairs: Sequence[Pair]) -> Pairs:
    """The pairs as the verdict reads them."""
    return Pairs.of([p.ratio for p in pairs], [p.duet for p in pairs],
                    [p.order for p in pairs], [(p.a_yardstick, p.b_yardstick) for p in pairs])


def _turn(rounds: dict[SideName, SideRounds], turn_s: float) -> int:
    """Whole rounds per turn, the same on both sides: the nearest count to `turn_s` at the
    median round time measured so far (the warm-up's rounds still carry warming; the first pair runs one)."""
    measured = [s for side_rounds in rounds.values() for s in side_rounds.round_s]
    return max(1, round(turn_s / float(np.median(measured)))) if measured else 1


class _CpuWatch:
    """CPU cores that groups of processes keep busy from now on, on average."""

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self.groups = groups
        self.start = time.monotonic()
        self.before = {role: cpu_time.seconds(pids) for role, pids in groups.items()}

    def cores(self) -> dict[str, float | None]:
        wall = time.monotonic() - self.start
        found: dict[str, float | None] = {}
        for role, pids in self.groups.items():
            before, after = self.before[role], cpu_time.seconds(pids)
            found[role] = None if before is None or after is None or wall <= 0 \
                else (after - before) / wall
        return found


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(np.mean(known)) if len(known) == len(values) and known else None


def run(sides: dict[SideName, Side], env: dict[str, str], settings: ABSettings, timeout_s: float,
        log_dir: Path, case_id: str, cluster_mode: str,
        around: Callable[[Callable[[], None]], dict[str, Any]], seed: int,
        launch: Launch = launch_processes,
        on_look: Callable[[Verdict], None] = lambda _: None) -> Comparison:
    """Measure the case's pairs; `around` runs the measured rounds inside the case's GPU
    telemetry and returns its summary; `seed` draws the pairs' orders; `launch` starts a
    side's worker (duet_pool.py); `on_look` hears each look's verdict."""
    started = time.monotonic()
    rounds = {name: SideRounds() for name in SIDES}
    pairs: list[Pair] = []
    verdicts: list[Verdict] = []
    orders: dict[int, Iterator[tuple[SideName, SideName]]] = {}
    last_rates: dict[int, dict[SideName, float]] = {}  # each duet's sides' last yardstick rates
    with DuetPool(sides, env, timeout_s, log_dir, case_id, cluster_mode, launch,
                  settings.duets, rounds) as pool:
        pool.start_all()
        per_round = {name: figures.examples_per_round(sides[name].spec, rounds[name].readies[1])
                     for name in SIDES}
        first = time.monotonic()

        def next_pair() -> None:
            slot = len(pairs) % settings.duets
            if settings.relay_due(len(pairs)):
                pool.relay(slot)
            duet, workers = pool.duet_in(slot)
            order = next(orders.setdefault(duet, turn_orders(seed, case_id, duet)))
            # A fresh duet's workers burst at their first pair: no rate of theirs is known.
            burst = pool.served[duet] % settings.yardstick_every == 0
            pairs.append(_pair(duet, order, workers, pool, sides, rounds, per_round,
                               _turn(rounds, settings.turn_s), timeout_s, first,
                               None if burst else last_rates[duet]))
            last_rates[duet] = {name: rounds[name].yardstick_rates[-1] for name in SIDES}
            pool.served[duet] += 1

        measuring = time.monotonic()
        telemetry = around(lambda: until_decided(settings, pairs, verdicts, next_pair, on_look))
        rounds_s = time.monotonic() - measuring
        pool.finish_all()
    return Comparison(pairs, rounds, verdicts, telemetry, time.monotonic() - started, rounds_s,
                pool.relay_s)


def until_decided(settings: ABSettings, pairs: list[Pair], verdicts: list[Verdict],
                  next_pair: Callable[[], None],
                  on_look: Callable[[Verdict], None] = lambda _: None) -> None:
    """The stopping rule: measure pairs up to each look, judge them there, and stop at the
    first decided verdict (or the last look)."""
    for look in settings.looks():
        while len(pairs) < look:
            next_pair()
        verdicts.append(verdict.judge(as_pairs(pairs), settings))
        on_look(verdicts[-1])
        if verdicts[-1].decided:
            return


def _pair(duet: int, order: tuple[SideName, SideName], workers: dict[SideName, Processes],
          pool: DuetPool, sides: dict[SideName, Side], rounds: dict[SideName, SideRounds],
          per_round: dict[SideName, int], turn: int, timeout_s: float, first: float,
          carried: dict[SideName, float] | None = None) -> Pair:
    """One pair: each side's turn of `turn` rounds, back to back in `order`, each after its
    yardstick burst (or, given `carried`, rated by its side's last burst, and keeping no
    yardstick of its own), with what the CPUs did meanwhile."""
    for name in SIDES:
        # The workers take turns for up to MAX pairs: the case's time limit bounds each
        # pair's wait, not the workers' whole life.
        workers[name].allow(timeout_s)
    rate: dict[SideName, float] = {}
    turns: dict[SideName, list[float]] = {}
    cpu: dict[SideName, float | None] = {}
    yardsticks: dict[SideName, float] = {}
    cores: dict[str, list[float | None]] = {"active": [], "idle": []}
    for name in order:
        worker, side_rounds = workers[name], rounds[name]
        seconds, turns[name], cpu[name] = 0.0, [], 0.0
        if carried is None:
            with blamed(sides[name]):
                yardstick = yardsticks[name] = worker.yardstick().rate
        else:
            yardstick = carried[name]
        busy = _CpuWatch({"active": worker.pids, "idle": pool.others(worker)})
        for _ in range(turn):
            with blamed(sides[name]):
                message = worker.run_round(inject_fraction=sides[name].inject_fraction)
            side_rounds.yardstick_rates.append(yardstick)
            side_rounds.round_s.append(message["seconds"])
            side_rounds.losses.append(message["loss"])
            seconds += message["seconds"]
            turns[name].append(message["seconds"])
            used = message.get("cpu_s")  # a cluster's chief alone; none from older workers
            cpu[name] = None if used is None or cpu[name] is None else cpu[name] + used
        for role, used in busy.cores().items():
            cores[role].append(used)
        rate[name] = per_round[name] * turn / seconds
    return Pair(duet, "AB" if order == (SIDE_A, SIDE_B) else "BA", rate[SIDE_A], rate[SIDE_B],
                time.monotonic() - first, turn, yardsticks.get(SIDE_A), yardsticks.get(SIDE_B),
                _mean(cores["active"]), _mean(cores["idle"]), tuple(turns[SIDE_A]),
                tuple(turns[SIDE_B]), cpu[SIDE_A], cpu[SIDE_B])
