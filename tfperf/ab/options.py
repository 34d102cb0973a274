"""The options that name the TensorFlow under test and the A/B comparison's baseline side.

Each spec is checked here (a requirement that parses, a wheel or an interpreter that exists);
its environment is built when the session starts, before any case (tfperf.plugin).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.ab.verdict import ABSettings
from tfperf.processes import environments

TENSORFLOW_ENV = "TFPERF_TENSORFLOW"
BASELINE_ENV = "TFPERF_BASELINE"


@dataclass(frozen=True)
class ABOptions:
    tensorflow: str = "current"  # side B, and every worker of a session that is not an A/B one
    baseline: str | None = None  # side A's spec: an A/B session when set
    baseline_env: dict[str, str] = field(default_factory=dict)
    baseline_workloads: Path | None = None  # side A's workloads folder, if not the session's
    settings: ABSettings = field(default_factory=ABSettings)


def add(group: Any) -> None:
    defaults = ABSettings()
    group.addoption("--perf-tensorflow", metavar="SPEC",
                    help="The TensorFlow under test: a pip requirement (tensorflow-cpu==2.20.0), "
                         "a wheel file, the path of a Python interpreter, or current (default: "
                         f"${TENSORFLOW_ENV}, else the pinned one). Built once, cached.")
    group.addoption("--perf-baseline", metavar="SPEC",
                    help="Compare every case with this TensorFlow (side A) round by round, in "
                         "interleaved pairs; current is the session's own (an A/A run) "
                         f"(default: ${BASELINE_ENV}, else no comparison).")
    group.addoption("--perf-baseline-env", metavar="NAME=VALUE", action="append", default=[],
                    help="An environment variable that side A adds (repeatable), e.g. "
                         "TF_ENABLE_ONEDNN_OPTS=0.")
    group.addoption("--perf-baseline-workloads", metavar="DIR",
                    help="Side A's workloads folder (default: the session's), e.g. the main "
                         "branch's, to compare a changed model with it.")
    group.addoption("--perf-ab-floor", metavar="PERCENT",
                    help="The least change an A/B verdict calls slower or faster (default: "
                         f"{defaults.floor * 100:g}%%).")
    group.addoption("--perf-ab-pairs", metavar="MIN:MAX",
                    help="Pairs of rounds per case: judged at MIN, then each time the pairs "
                         "double, and at MAX (default: "
                         f"{defaults.min_pairs}:{defaults.max_pairs}).")
    group.addoption("--perf-ab-duets", metavar="N",
                    help="Pairs of side A and side B workers alive at once, an even number: "
                         f"more average out more workers' own speeds (default: {defaults.duets}).")
    group.addoption("--perf-ab-relay", metavar="PAIRS",
                    help="A duet's workers measure this many pairs, then fresh ones take over, "
                         "so that more processes' own speeds average out; 0: never "
                         f"(default: {defaults.relay}).")
    group.addoption("--perf-ab-turn", metavar="SECONDS",
                    help="Each side's turn in a pair runs whole rounds for about this long "
                         f"(default: {defaults.turn_s:g}).")


def _spec(option: str, text: str) -> str:
    try:
        environments.kind(text)
    except environments.SpecError as error:
        raise ValueError(f"{option}: {error}") from None
    return text


def _variables(items: list[str]) -> dict[str, str]:
    found = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or " " in name:
            raise ValueError(f"--perf-baseline-env: {item!r} is not NAME=VALUE")
        found[name] = value
    return found


def _settings(floor: str | None, pairs: str | None, turn: str | None,
              duets: str | None, relay: str | None) -> ABSettings:
    defaults = ABSettings()
    value = defaults.floor
    if floor:
        try:
            value = float(floor.strip().rstrip("%")) / 100
        except ValueError:
            value = -1
        if not 0 < value < 0.5:
            raise ValueError(f"--perf-ab-floor: {floor!r} is not a percentage above 0 and "
                             "below 50")
    least, most = defaults.min_pairs, defaults.max_pairs
    if pairs:
        low, _, high = pairs.partition(":")
        try:
            least, most = int(low), int(high or low)
        except ValueError:
            least = most = 0
        if least < 6 or most < least:
            raise ValueError(f"--perf-ab-pairs: {pairs!r} is not MIN:MAX with 6 <= MIN <= MAX")
    turn_s = defaults.turn_s
    if turn:
        try:
            turn_s = float(turn)
        except ValueError:
            turn_s = -1
        if not 0 <= turn_s <= 60:
            raise ValueError(f"--perf-ab-turn: {turn!r} is not a number of seconds from 0 to 60")
    count = defaults.duets
    if duets:
        try:
            count = int(duets)
        except ValueError:
            count = 0
        # Even: half the duets start A's worker first, half B's (duet.py).
        if not 2 <= count <= 16 or count % 2:
            raise ValueError(f"--perf-ab-duets: {duets!r} is not an even number from 2 to 16")
    share = defaults.relay
    if relay:
        try:
            share = int(relay)
        except ValueError:
            share = -1
        if share < 0:
            raise ValueError(f"--perf-ab-relay: {relay!r} is not a whole number of pairs "
                             "(0: never)")
    return ABSettings(floor=value, min_pairs=least, max_pairs=most, turn_s=turn_s, duets=count,
                      relay=share)


def parse(get: Callable[[str], Any], rootpath: Path) -> ABOptions:
    """Raises ValueError with one line on a bad value."""
    tensorflow = get("perf_tensorflow") or os.environ.get(TENSORFLOW_ENV) or "current"
    baseline = get("perf_baseline") or os.environ.get(BASELINE_ENV) or None
    comparing = {"--perf-baseline-env": get("perf_baseline_env"),
                 "--perf-baseline-workloads": get("perf_baseline_workloads"),
                 "--perf-ab-floor": get("perf_ab_floor"), "--perf-ab-pairs": get("perf_ab_pairs"),
                 "--perf-ab-turn": get("perf_ab_turn"), "--perf-ab-duets": get("perf_ab_duets"),
                 "--perf-ab-relay": get("perf_ab_relay")}
    if baseline is None:
        given = [name for name, value in comparing.items() if value]
        if given:
            raise ValueError(f"{given[0]}: only with --perf-baseline (an A/B comparison)")
    workloads = get("perf_baseline_workloads")
    folder = Path(rootpath, workloads) if workloads else None
    if folder is not None and not folder.is_dir():
        raise ValueError(f"--perf-baseline-workloads: no folder {workloads!r}")
    return ABOptions(
        tensorflow=_spec("--perf-tensorflow", tensorflow),
        baseline=_spec("--perf-baseline", baseline) if baseline else None,
        baseline_env=_variables(get("perf_baseline_env")),
        baseline_workloads=folder,
        settings=_settings(get("perf_ab_floor"), get("perf_ab_pairs"), get("perf_ab_turn"),
                           get("perf_ab_duets"), get("perf_ab_relay")),
    )
