"""The options of an A/B comparison: its side A (the reference the TensorFlow under test, side B,
is compared with) and how its cases are judged.

Side A's spec is checked here (a requirement that parses, a wheel or an interpreter that
exists); its environment is built when the session starts, before any case (tfperf.plugin).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tfperf.options.ab_settings import ABSettings
from tfperf.options.tensorflow_spec import spec
from tfperf.options.values import min_max, number, percent_below

SIDE_A_ENV = "TFPERF_AB_SIDE_A"
# The old spellings of side A's options: "baseline" names only the gate's reviewed entries now,
# but workflows written with these keep working, each with one line that names the new one.
RENAMED = {"--perf-baseline": "--perf-ab-side-a", "--perf-baseline-env": "--perf-ab-side-a-env",
           "--perf-baseline-workloads": "--perf-ab-side-a-workloads"}
OLD_SIDE_A_ENV = "TFPERF_BASELINE"


@dataclass(frozen=True)
class ABOptions:
    side_a: str | None = None  # side A's spec: an A/B session when set
    side_a_env: dict[str, str] = field(default_factory=dict)
    side_a_workloads: Path | None = None  # side A's workloads folder, if not the session's
    settings: ABSettings = field(default_factory=ABSettings)
    deprecated: tuple[str, ...] = ()  # one line for each old spelling given


def add(group: Any) -> None:
    defaults = ABSettings()
    group.addoption("--perf-ab-side-a", metavar="SPEC",
                    help="Compare every case with this TensorFlow (side A) round by round, in "
                         "interleaved pairs; current is the session's own (an A/A run) "
                         f"(default: ${SIDE_A_ENV}, else no comparison).")
    group.addoption("--perf-ab-side-a-env", metavar="NAME=VALUE", action="append", default=[],
                    help="An environment variable that side A adds (repeatable), e.g. "
                         "TF_ENABLE_ONEDNN_OPTS=0.")
    group.addoption("--perf-ab-side-a-workloads", metavar="DIR",
                    help="Side A's workloads folder (default: the session's), e.g. the main "
                         "branch's, to compare a changed model with it.")
    metavars = {"--perf-baseline": "SPEC", "--perf-baseline-env": "NAME=VALUE",
                "--perf-baseline-workloads": "DIR"}
    for old, new in RENAMED.items():
        group.addoption(old, metavar=metavars[old],
                        action="append" if old.endswith("-env") else "store",
                        default=[] if old.endswith("-env") else None,
                        help=f"Deprecated: {new}.")
    group.addoption("--perf-ab-floor", metavar="PERCENT",
                    help="The least change an A/B verdict calls slower or faster (default: "
                         f"{defaults.floor * 100:g}%%).")
    group.addoption("--perf-ab-confidence", metavar="PERCENT",
                    help="The chance that a case's intervals hold the true B/A at every look "
                         "together, so that a decided verdict is wrong at most 100 - PERCENT "
                         f"of the time (default: {(1 - defaults.alpha) * 100:g}%%; tfperf-bisect "
                         "sets it per step).")
    group.addoption("--perf-ab-pairs", metavar="MIN:MAX",
                    help="Pairs of turns per case: judged from MIN, at every quarter doubling "
                         "down from MAX, and at MAX (default: "
                         f"{defaults.min_pairs}:{defaults.max_pairs}).")
    group.addoption("--perf-ab-duets", metavar="N",
                    help="Pairs of side A and side B workers alive at once, an even number: "
                         f"more average out more workers' own speeds (default: {defaults.duets}).")
    group.addoption("--perf-ab-relay", metavar="PAIRS",
                    help="A duet's workers measure this many pairs, then fresh ones take over, "
                         "so that more processes' own speeds average out; 0: never "
                         f"(default: {defaults.relay}).")
    group.addoption("--perf-ab-cost-floors", metavar="TIME%:MEMORY%",
                    help="The least change in side B's compile time and time to the first step, "
                         "and in its peak device and host memory, that its cost verdicts call "
                         "higher or lower (default: "
                         f"{defaults.time_cost_floor * 100:g}:{defaults.memory_cost_floor * 100:g}).")
    group.addoption("--perf-ab-numerics", metavar="on|off",
                    help="Whether each case also trains both sides from side A's initial "
                         "weights on side A's batches and judges whether their losses, "
                         "gradients and weights agree (default: on).")
    group.addoption("--perf-ab-turn", metavar="SECONDS",
                    help="Each side's turn in a pair runs whole rounds for about this long "
                         f"(default: {defaults.turn_s:g}).")
    group.addoption("--perf-ab-yardstick-every", metavar="K",
                    help="A side's yardstick burst (its device's speed now, for MFU and the "
                         "disturbance check) before every K-th pair of a duet, its first "
                         f"always (default: {defaults.yardstick_every}: every pair).")


def _variables(items: list[str]) -> dict[str, str]:
    found = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or " " in name:
            raise ValueError(f"--perf-ab-side-a-env: {item!r} is not NAME=VALUE")
        found[name] = value
    return found


def _on_off(text: str) -> bool:
    if text.strip() not in ("on", "off"):
        raise ValueError(text)
    return text.strip() == "on"


def _settings(floor: str | None, pairs: str | None, turn: str | None,
              duets: str | None, relay: str | None, confidence: str | None = None,
              cost_floors: str | None = None, numerics: str | None = None,
              yardstick_every: str | None = None) -> ABSettings:
    defaults = ABSettings()

    def two_percentages(text: str) -> tuple[float, float]:
        time_floor, _, memory_floor = text.partition(":")
        return float(time_floor.strip().rstrip("%")) / 100, \
            float(memory_floor.strip().rstrip("%")) / 100

    least, most = min_max("--perf-ab-pairs", pairs, 6) if pairs \
        else (defaults.min_pairs, defaults.max_pairs)
    settings = ABSettings(
        floor=percent_below("--perf-ab-floor", floor, 0.5) if floor else defaults.floor,
        alpha=1 - number("--perf-ab-confidence", confidence, 1 - defaults.alpha,
                         lambda t: float(t.strip().rstrip("%")) / 100, lambda v: 0.5 <= v < 1,
                         "a percentage from 50 to below 100"),
        min_pairs=least, max_pairs=most,
        turn_s=number("--perf-ab-turn", turn, defaults.turn_s, float, lambda v: 0 <= v <= 60,
                       "a number of seconds from 0 to 60"),
        # Even: half the duets start A's worker first, half B's (duet.py).
        duets=number("--perf-ab-duets", duets, defaults.duets, int,
                      lambda v: 2 <= v <= 16 and v % 2 == 0, "an even number from 2 to 16"),
        relay=number("--perf-ab-relay", relay, defaults.relay, int, lambda v: v == 0 or v >= 2,
                      "a whole number of pairs from 2 (0: never)"),
        yardstick_every=number("--perf-ab-yardstick-every", yardstick_every,
                               defaults.yardstick_every, int, lambda v: v >= 1,
                               "a whole number of pairs from 1"))
    time_floor, memory_floor = number(
        "--perf-ab-cost-floors", cost_floors, (defaults.time_cost_floor,
                                               defaults.memory_cost_floor), two_percentages,
        lambda v: 0 < v[0] < 10 and 0 < v[1] < 10,
        "TIME:MEMORY, two percentages above 0 and below 1000, e.g. 25:10")
    settings = replace(settings, time_cost_floor=time_floor, memory_cost_floor=memory_floor,
                       numerics=number("--perf-ab-numerics", numerics, defaults.numerics,
                                       _on_off, lambda _: True, "on or off"))
    # The verdict estimates each duet's own speed from its pairs and the order effect from
    # their spread within duets (random_effects.py): the first look needs two pairs a duet.
    if settings.min_pairs < 2 * settings.duets:
        raise ValueError(f"--perf-ab-pairs: MIN {settings.min_pairs} is less than two pairs for "
                         f"each of the {settings.duets} duets; give MIN of at least "
                         f"{2 * settings.duets} or fewer --perf-ab-duets")
    return settings


def _dest(option: str) -> str:
    return option.removeprefix("--").replace("-", "_")


def _renamed(get: Callable[[str], Any], environ: Mapping[str, str]
             ) -> tuple[Callable[[str], Any], str | None, tuple[str, ...]]:
    """`get` that reads side A's options under either spelling; side A's spec from the options
    or the environment; one line for each old spelling given."""
    said = [f"{old} is deprecated: use {new} (the same meaning; \"baseline\" names only the "
            "gate's reviewed entries)" for old, new in RENAMED.items() if get(_dest(old))]
    old_dests = {_dest(new): _dest(old) for old, new in RENAMED.items()}

    def either(dest: str) -> Any:
        if dest not in old_dests:
            return get(dest)
        if dest.endswith("_env"):  # repeatable: both spellings' variables
            return [*(get(dest) or []), *(get(old_dests[dest]) or [])]
        new, old = get(dest), get(old_dests[dest])
        if new and old and new != old:
            raise ValueError(f"--{old_dests[dest].replace('_', '-')} {old!r} and "
                             f"--{dest.replace('_', '-')} {new!r}: give one (the first is the "
                             "second's old spelling)")
        return new or old

    side_a = either("perf_ab_side_a") or environ.get(SIDE_A_ENV) or None
    if side_a is None and environ.get(OLD_SIDE_A_ENV):
        side_a = environ[OLD_SIDE_A_ENV]
        said.append(f"${OLD_SIDE_A_ENV} is deprecated: use ${SIDE_A_ENV} (the same meaning)")
    return either, side_a, tuple(said)


def parse(get: Callable[[str], Any], rootpath: Path,
          environ: Mapping[str, str] = os.environ) -> ABOptions:
    """Raises ValueError with one line on a bad value."""
    get, side_a, deprecated = _renamed(get, environ)
    comparing = {"--perf-ab-side-a-env": get("perf_ab_side_a_env"),
                 "--perf-ab-side-a-workloads": get("perf_ab_side_a_workloads"),
                 "--perf-ab-floor": get("perf_ab_floor"),
                 "--perf-ab-confidence": get("perf_ab_confidence"),
                 "--perf-ab-pairs": get("perf_ab_pairs"),
                 "--perf-ab-turn": get("perf_ab_turn"), "--perf-ab-duets": get("perf_ab_duets"),
                 "--perf-ab-relay": get("perf_ab_relay"),
                 "--perf-ab-cost-floors": get("perf_ab_cost_floors"),
                 "--perf-ab-numerics": get("perf_ab_numerics"),
                 "--perf-ab-yardstick-every": get("perf_ab_yardstick_every")}
    if side_a is None:
        given = [name for name, value in comparing.items() if value]
        if given:
            raise ValueError(f"{given[0]}: only with --perf-ab-side-a (an A/B comparison)")
    workloads = get("perf_ab_side_a_workloads")
    folder = Path(rootpath, workloads) if workloads else None
    if folder is not None and not folder.is_dir():
        raise ValueError(f"--perf-ab-side-a-workloads: no folder {workloads!r}")
    return ABOptions(
        side_a=spec("--perf-ab-side-a", side_a) if side_a else None,
        side_a_env=_variables(get("perf_ab_side_a_env")),
        side_a_workloads=folder,
        settings=_settings(get("perf_ab_floor"), get("perf_ab_pairs"), get("perf_ab_turn"),
                           get("perf_ab_duets"), get("perf_ab_relay"),
                           get("perf_ab_confidence"), get("perf_ab_cost_floors"),
                           get("perf_ab_numerics"), get("perf_ab_yardstick_every")),
        deprecated=deprecated,
    )
