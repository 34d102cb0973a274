"""The duets' relay and the stopping rule, with a fake launcher at the process boundary: its
workers report round times drawn from a stated truth (side B's change, each worker's own speed)
instead of training. What is tested is tfperf.ab.duet and duet_pool: which duets start and
end when, which pairs each serves in which order, when measuring stops, and that a failing
worker names its side. The real-worker A/B self-tests are in test_ab.py."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from tfperf.ab import duet
from tfperf.ab.ab_runner import ROLES
from tfperf.ab.duet_types import SIDES, Comparison, Side
from tfperf.ab.verdict import SAME, SLOWER
from tfperf.cases.matrix import Case
from tfperf.ground.failures import CaseFailure
from tfperf.ground.vocabulary import SideName
from tfperf.options.ab_settings import ABSettings
from tfperf.processes.protocol import Burst, WorkerSpec
from tfperf.processes.runtime import Runtime

SPEC = WorkerSpec(case=Case("tinycnn", "cpu", 1, "off", "NHWC", "default", "single",
                            "fp32").worker_axes(),
                  workload_path="fake", size="tiny", batch_size=32, warmup_rounds=1,
                  steps_per_round=2)
SETTINGS = ABSettings(min_pairs=16, max_pairs=64, duets=4, relay=8)


@dataclass
class FakeWorkers:
    """The fake launcher: each launched worker's round takes `seconds` times side B's change
    (B only), times its own speed (drawn per worker), times a little per-round noise."""

    b_change: float = 1.0
    process_sd: float = 0.0
    round_sd: float = 0.002
    fail: str | None = None  # "B3": that worker's rounds fail
    events: list[tuple[str, str]] = field(default_factory=list)
    draw: random.Random = field(default_factory=lambda: random.Random(1))

    def __call__(self, spec: WorkerSpec, env: Any, timeout_s: float, log: Path, mode: str,
                 runtime: Runtime) -> FakeWorker:
        name = log.name.split(".")[-2]  # CASE.A3.log: side A, duet 3
        speed = self.draw.gauss(1.0, self.process_sd)
        return FakeWorker(self, name, speed * (self.b_change if name[0] == "B" else 1.0))


@dataclass
class FakeWorker:
    launcher: FakeWorkers
    name: str
    slowness: float

    @property
    def pids(self) -> list[int]:
        return []

    def __enter__(self) -> FakeWorker:
        self.launcher.events.append(("start", self.name))
        return self

    def __exit__(self, *exc: object) -> None:
        self.launcher.events.append(("end", self.name))

    def allow(self, timeout_s: float) -> None:
        pass

    def wait_ready(self) -> dict[str, Any]:
        return {"strategy": {"replicas": 1}, "loss_first": 2.0}

    def yardstick(self) -> Burst:
        return Burst(1e11)

    def run_round(self, inject_seconds: float = 0.0, inject_fraction: float = 0.0
                  ) -> dict[str, Any]:
        if self.launcher.fail == self.name:
            raise CaseFailure("crash", "the worker went away")
        self.launcher.events.append(("round", self.name))
        noise = self.launcher.draw.gauss(1.0, self.launcher.round_sd)
        return {"seconds": 0.1 * self.slowness * noise, "loss": 1.0}

    def finish(self) -> dict[str, Any]:
        self.launcher.events.append(("finish", self.name))
        return {"loss_last": 0.5}


def _run(fake: FakeWorkers, settings: ABSettings = SETTINGS, seed: int = 7) -> Comparison:
    sides = {name: Side(name, ROLES[name], Runtime(), SPEC) for name in SIDES}

    def around(measure: Any) -> dict[str, Any]:
        measure()
        return {}

    return duet.run(sides, {}, settings, 60.0, Path("/nonexistent"), "case", "local", around,
                    seed, launch=fake)


def test_a_clear_slowdown_stops_at_the_first_look() -> None:
    duel = _run(FakeWorkers(b_change=1.10))
    assert [v.status for v in duel.verdicts] == [SLOWER]
    assert len(duel.pairs) == SETTINGS.min_pairs


def test_noisy_rounds_run_look_after_look_until_a_verdict_and_no_further() -> None:
    duel = _run(FakeWorkers(b_change=1.0, round_sd=0.03))
    looks = SETTINGS.looks()
    assert len(duel.verdicts) >= 2 and len(duel.pairs) == looks[len(duel.verdicts) - 1]
    assert all(not v.decided for v in duel.verdicts[:-1])
    assert duel.verdicts[-1].decided or len(duel.pairs) == looks[-1]


def test_quiet_rounds_without_a_change_say_same() -> None:
    assert _run(FakeWorkers(b_change=1.0)).verdicts[-1].status == SAME


def test_duets_relay_every_relay_pairs_and_every_worker_finishes_and_ends() -> None:
    fake = FakeWorkers(b_change=1.0)
    settings = replace(SETTINGS, min_pairs=64, max_pairs=64)  # one look: all 64 pairs
    duel = _run(fake, settings)
    # 64 pairs over 4 slots, a fresh duet every 8 of a slot's pairs: duets 1-8.
    assert sorted({p.duet for p in duel.pairs}) == list(range(1, 9))
    assert all(sum(p.duet == d for p in duel.pairs) == 8 for d in range(1, 9))
    for duet_number in range(1, 9):
        for side in "AB":
            name = f"{side}{duet_number}"
            mine = [kind for kind, who in fake.events if who == name]
            assert mine[0] == "start" and mine[-2:] == ["finish", "end"], (name, mine)
    # A relayed duet ends before its successor starts: at most 4 duets alive at once.
    alive = peak = 0
    for kind, _ in fake.events:
        alive += {"start": 1, "end": -1}.get(kind, 0)
        peak = max(peak, alive)
    assert peak == 2 * settings.duets
    # The first duets all start before any pair runs; odd ones A first, even ones B first.
    starts = [who for kind, who in fake.events if kind == "start"][:8]
    assert starts == ["A1", "B1", "B2", "A2", "A3", "B3", "B4", "A4"]


def test_each_duet_serves_ab_and_ba_equally_in_an_order_drawn_from_the_seed() -> None:
    settings = replace(SETTINGS, min_pairs=64, max_pairs=64)
    first = _run(FakeWorkers(), settings, seed=1)
    for number in range(1, 9):
        orders = [p.order for p in first.pairs if p.duet == number]
        assert orders.count("AB") == orders.count("BA") == 4
    again = _run(FakeWorkers(), settings, seed=1)
    other = _run(FakeWorkers(), settings, seed=2)
    assert [p.order for p in again.pairs] == [p.order for p in first.pairs]
    assert [p.order for p in other.pairs] != [p.order for p in first.pairs]


def test_a_failing_worker_names_its_side_and_every_worker_still_ends() -> None:
    fake = FakeWorkers(fail="B3")
    with pytest.raises(CaseFailure, match=r"^crash: side B \(under test, .*\): the worker went away"):
        _run(fake)
    started = {who for kind, who in fake.events if kind == "start"}
    ended = {who for kind, who in fake.events if kind == "end"}
    assert started == ended


def test_an_injected_slowdown_reaches_side_b_s_rounds_only() -> None:
    """--perf-inject-slowdown in an A/B (test-only, and the campaigns' known slowdowns:
    benchmarks/ab_reservoir.py) is side B's: every B round is asked for it, no A round."""
    asked: list[tuple[str, float]] = []

    class Asked(FakeWorker):
        def run_round(self, inject_seconds: float = 0.0, inject_fraction: float = 0.0
                      ) -> dict[str, Any]:
            asked.append((self.name[0], inject_fraction))
            return super().run_round(inject_seconds, inject_fraction)

    def launch(spec: WorkerSpec, env: Any, timeout_s: float, log: Path, mode: str,
               runtime: Runtime) -> FakeWorker:
        return Asked(fake, log.name.split(".")[-2], 1.0)

    fake = FakeWorkers()
    sides: dict[SideName, Side] = {"A": Side("A", "reference", Runtime(), SPEC),
                                   "B": Side("B", "under test", Runtime(), SPEC, 0.3)}
    def around(measure: Any) -> dict[str, Any]:
        measure()
        return {}

    duet.run(sides, {}, SETTINGS, 60.0, Path("/nonexistent"), "case", "local", around, 7,
             launch=launch)
    assert {(side, fraction) for side, fraction in asked} == {("A", 0.0), ("B", 0.3)}
    assert sum(side == "B" for side, _ in asked) >= SETTINGS.min_pairs  # a turn: whole rounds
