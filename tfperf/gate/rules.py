"""Per-case gate rules kept with the baselines, in baselines/gate.toml: effect floors and waivers.

    [floors]                       # a case-id substring = its least slowdown that fails
    "fused_elementwise-" = 0.08
    [memory_floors]                # the least growth of peak memory that fails (default 10%)
    "resnet50-" = 0.15
    [compile_floors]               # the least growth of compile time that fails (default 25%)
    "xla_jit" = 0.4

    [[waivers]]                    # a known regression, with a reason and an expiry date
    cases = "resnet50-gpu8"        # a case-id substring
    metric = "examples_per_sec"    # optional: one gated figure; default all of them
    reason = "cuDNN 9.14 conv regression, upstream issue 1234"
    expires = 2026-12-31           # the last day it applies; after it the case gates again

The file is checked whole before any case runs: a bad entry stops the run with one line.
"""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.gate.statistics import FLOOR_TABLES, METRICS

FILE_NAME = "gate.toml"


class RulesError(Exception):
    pass


@dataclass(frozen=True)
class Waiver:
    cases: str
    reason: str
    expires: datetime.date
    metric: str | None = None

    def covers(self, case_id: str, metric: str) -> bool:
        return self.cases in case_id and self.metric in (None, metric)

    def expired(self, today: datetime.date) -> bool:
        return today > self.expires


@dataclass(frozen=True)
class GateRules:
    floors: Mapping[str, float]  # throughput and scaling efficiency
    waivers: tuple[Waiver, ...] = ()
    # The other figures' floors, by table name (memory_floors, compile_floors).
    other_floors: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def floor(self, case_id: str, default: float, table: str = "floors") -> float:
        """The floor of the longest pattern in the case id; the default when none matches."""
        floors = self.floors if table == "floors" else self.other_floors.get(table, {})
        matching = [p for p in floors if p in case_id]
        return floors[max(matching, key=len)] if matching else default

    def waiver(self, case_id: str, metric: str) -> Waiver | None:
        """The waiver that covers this figure (an unexpired one first), if any."""
        found = [w for w in self.waivers if w.covers(case_id, metric)]
        return max(found, key=lambda w: w.expires) if found else None


# A growth floor (peak memory, compile time) may exceed 1: a compile that doubles is +100%. A
# slowdown's may not: throughput cannot fall by 100%.
GROWTH_MOST = 10.0


def _fraction(where: str, value: Any, table: str) -> float:
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if table == "floors" and not (number and 0 < value < 1):
        raise RulesError(f"{where}: {value!r} is not a fraction between 0 and 1 (0.05 is 5%)")
    if not (number and 0 < value <= GROWTH_MOST):
        raise RulesError(f"{where}: {value!r} is not a growth above 0 and at most "
                         f"{GROWTH_MOST:g} (0.25 is 25% more, 1.5 is 150% more)")
    return float(value)


def _waiver(where: str, item: Any) -> Waiver:
    if not isinstance(item, dict):
        raise RulesError(f"{where}: a waiver is a table with cases, reason and expires")
    unknown = set(item) - {"cases", "metric", "reason", "expires"}
    if unknown:
        raise RulesError(f"{where}: unknown key {sorted(unknown)[0]!r}; valid: cases, metric, "
                         "reason, expires")
    if not isinstance(item.get("cases"), str) or not item["cases"]:
        raise RulesError(f"{where}: 'cases' must be a non-empty case-id substring")
    if not isinstance(item.get("reason"), str) or not item["reason"].strip():
        raise RulesError(f"{where}: a waiver needs a 'reason'")
    expires = item.get("expires")
    if not isinstance(expires, datetime.date) or isinstance(expires, datetime.datetime):
        raise RulesError(f"{where}: 'expires' must be a date like 2026-12-31, not {expires!r}")
    metric = item.get("metric")
    names = [m.name for m in METRICS]
    if metric is not None and metric not in names:
        raise RulesError(f"{where}: no gated figure {metric!r}; valid: {', '.join(names)}")
    return Waiver(item["cases"], item["reason"].strip(), expires, metric)


def load(baselines: Path) -> GateRules:
    path = baselines / FILE_NAME
    if not path.is_file():
        return GateRules({})
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise RulesError(f"{path} is not readable TOML: {error}") from None
    unknown = set(data) - {*FLOOR_TABLES, "waivers"}
    if unknown:
        raise RulesError(f"{path}: unknown table {sorted(unknown)[0]!r}; valid: "
                         f"{', '.join(FLOOR_TABLES)}, waivers")
    tables = {}
    for table in FLOOR_TABLES:
        floors = data.get(table, {})
        if not isinstance(floors, dict):
            raise RulesError(f"{path}: [{table}] must map case-id substrings to fractions")
        tables[table] = {pattern: _fraction(f"{path} {table}.{pattern}", v, table)
                         for pattern, v in floors.items()}
    waivers = data.get("waivers", [])
    if not isinstance(waivers, list):
        raise RulesError(f"{path}: waivers must be [[waivers]] tables")
    return GateRules(
        tables.pop("floors"),
        tuple(_waiver(f"{path} waiver {i + 1}", w) for i, w in enumerate(waivers)), tables)
