"""An A/B session's reports, all made from its session file (ab_runner.py writes it), so that the
standalone command (tfperf-ab) makes the same ones from a kept file: the terminal table, the
Markdown summary (also appended to $GITHUB_STEP_SUMMARY), a plot per case, and one JSON file
per side in pytest-benchmark's format (`pytest-benchmark compare A.json B.json`)."""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

import numpy as np

from tfperf.ab import benchmark_format, costs, differences, method_text, numerics_check, random_effects, where
from tfperf.ab.random_effects import Pairs
from tfperf.ab.verdict import SLOWER, UNDECIDED, Verdict, sequential
from tfperf.gate.summary_and_trends import SUMMARY_ENV, save, slug
from tfperf.ground import vocabulary
from tfperf.ground.vocabulary import SIDES, ABCaseOutcome
from tfperf.options.ab_settings import BONFERRONI, RETIRED_RULES, ABSettings
from tfperf.storage.results_store import ABCaseRow

# "2nd turn": a side's speed in its pair's second turn over its first, less 1 (each duet
# counterbalances it, so it moves no estimate; reported as the start order is).
HEADER = ["case", "A ex/s", "B ex/s", "B/A", "interval", "verdict", "numerics", "pairs",
          "2nd turn"]


def settings_of(data: dict[str, Any], floor: float | None = None) -> ABSettings:
    kept = data["settings"]
    defaults = ABSettings()
    return ABSettings(floor=kept["floor"] if floor is None else floor, alpha=kept["alpha"],
                      min_pairs=kept["min_pairs"], max_pairs=kept["max_pairs"],
                      # Files kept before --perf-ab-duets had 2, before --perf-ab-relay none,
                      # before the spending rule Bonferroni's looks.
                      duets=kept.get("duets", 2), relay=kept.get("relay", 0),
                      # Kept before the late relay: one relay length throughout.
                      late_relay=kept.get("late_relay", 0),
                      relay_until=kept.get("relay_until", defaults.relay_until),
                      trim=kept.get("trim", defaults.trim),
                      same_power=kept.get("same_power", defaults.same_power),
                      # Kept before they were named: the rule's first spending, (n / MAX)^3.
                      direction_power=kept.get("direction_power", 3.0),
                      direction_linear=kept.get("direction_linear", 0.0),
                      look_rule=kept.get("look_rule", BONFERRONI),
                      min_duet_sd=kept.get("min_duet_sd", defaults.min_duet_sd),
                      adjust_yardstick=kept.get("adjust_yardstick", False),
                      # Kept without them: alpha spent evenly, looks at MIN and each doubling.
                      spending_power=kept.get("spending_power", 1.0),
                      half_doubling=kept.get("half_doubling", False))


def pairs_of(case: dict[str, Any]) -> Pairs:
    """A kept case's pairs as the verdict reads them."""
    kept = case["pairs"]
    return Pairs.of([p["b_rate"] / p["a_rate"] for p in kept], [p["duet"] for p in kept],
                    [p["order"] for p in kept],
                    [(p.get("a_yardstick"), p.get("b_yardstick")) for p in kept])


def start_order_effect(case: dict[str, Any]) -> float | None:
    """B/A where B started first over B/A where A did; None if either is missing. Files kept
    before --perf-ab-duets name the two duets' ratios by number (duet 1 started A first)."""
    kept = case["order_effect"]
    a_first = kept.get("a_first_ratio", kept.get("duet1_ratio"))
    b_first = kept.get("b_first_ratio", kept.get("duet2_ratio"))
    return None if a_first is None or b_first is None else b_first / a_first


def _fit(case: dict[str, Any]) -> random_effects.Fit | None:
    """The random-effects model of a case's pairs (None with fewer than 3 duets, or too few
    pairs to tell a duet's spread from its pairs')."""
    pairs = pairs_of(case)
    if len(set(pairs.duets.tolist())) < 3 or len(pairs) < 2 * len(set(pairs.duets.tolist())):
        return None
    fit = random_effects.fit(pairs, 0.0, False)
    return fit if fit.df > 0 else None


def duet_offset(case: dict[str, Any]) -> float | None:
    """How far a duet's own B/A lies from the others' beyond what its pairs' spread explains:
    the SD of the duets' offsets in log B/A, from the model's analysis of variance over the
    duets (0 when the duets differ no more than sampling makes them)."""
    fit = _fit(case)
    return None if fit is None else fit.duet_sd


def second_turn_effect(case: dict[str, Any]) -> float | None:
    """A side's speed in its pair's second turn over its first (1: no effect)."""
    fit = _fit(case)
    return None if fit is None else float(np.exp(fit.order_effect))


def yardstick_share(case: dict[str, Any]) -> float | None:
    """Of the pairs' variance within duets, the share the yardstick explains."""
    fit = _fit(case)
    return None if fit is None else fit.yardstick_share


def final(case: dict[str, Any], settings: ABSettings) -> Verdict | None:
    """The case's verdict under `settings`, from its kept pairs."""
    verdicts = sequential(pairs_of(case), settings) if case["pairs"] else []
    return verdicts[-1] if verdicts else None


def outcome(case: dict[str, Any], settings: ABSettings) -> ABCaseOutcome:
    """The store's A/B row's verdict: `FAILED (cause)` but for slower, its verdict, `no pairs`."""
    failure = case["failure"]
    if failure and failure["cause"] != SLOWER:
        return vocabulary.failed(failure["cause"])
    verdict = final(case, settings)
    return verdict.status if verdict else vocabulary.NO_PAIRS


def stored_row(case: dict[str, Any], settings: ABSettings, when: datetime.datetime) -> ABCaseRow:
    """The case as the results store indexes it: its outcome and final interval."""
    verdict = final(case, settings)
    return ABCaseRow(case["case_id"], when, outcome(case, settings),
                     verdict.ratio if verdict else None, verdict.low if verdict else None,
                     verdict.high if verdict else None, len(case["pairs"]), case)


def _row(case: dict[str, Any], settings: ABSettings) -> list[str]:
    verdict = final(case, settings)
    eps = {name: case["sides"].get(name, {}).get("examples_per_sec") for name in SIDES}
    return [case["case_id"], *(f"{eps[n]:.1f}" if eps[n] else "" for n in SIDES),
            f"{verdict.ratio:.3f}" if verdict else "",
            f"[{verdict.low:.3f}, {verdict.high:.3f}]" if verdict else "",
            outcome(case, settings), (case.get("numerics") or {}).get("status", ""),
            str(len(case["pairs"])),
            f"{second - 1:+.1%}" if (second := second_turn_effect(case)) is not None else ""]


def table(data: dict[str, Any], settings: ABSettings) -> list[str]:
    rows = [HEADER] + [_row(case, settings) for case in data["cases"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for case in data["cases"]:
        verdict = final(case, settings)
        failure = case["failure"]
        if failure and failure["cause"] != SLOWER:
            lines.append(f"{case['case_id']}: {failure['cause']}: {failure['message']}")
        elif verdict is not None and verdict.status in (SLOWER, UNDECIDED):
            # Judged now: a kept session judged with another floor may say otherwise.
            lines.append(f"{case['case_id']}: {verdict.describe()}")
        if failure is None or failure["cause"] != vocabulary.NUMERICS_DIFFER:  # its message says it
            lines.extend(f"{case['case_id']}: {said}" for said in numerics_check.lines(case)
                         if "numerics differ" in said)
        lines.extend(f"{case['case_id']}: side {name}: figure flagged: {said}" for name in SIDES
                     for said in case["sides"].get(name, {}).get("figures_flagged") or [])
        told = (costs.SAME, costs.UNDECIDED, costs.HIGHER) if failure and failure["cause"] == \
            vocabulary.COSTS_MORE else (costs.SAME, costs.UNDECIDED)  # its message names them
        lines.extend(f"{case['case_id']}: {said}" for said in costs.lines(case, where=False)
                     if not said.split(": ", 1)[1].startswith(told))
        if case.get("where"):
            lines.append(f"{case['case_id']}: {where.brief(case['where'])}")
    if settings.look_rule in RETIRED_RULES:
        lines.append(f"judged by {settings.look_rule}, as the file names: a retired research rule, "
                     "which no session runs under (benchmarks/ab_designs.py)")
    return lines


def differences_of(data: dict[str, Any]) -> list[dict[str, str]]:
    """What differs between the sides: as kept, or, in a file kept without them, found from
    its sides (their variables and workloads; such files kept no packages)."""
    found: list[dict[str, str]] = data.get("differences") or differences.between(data["sides"])
    return found


def markdown(data: dict[str, Any], settings: ABSettings) -> str:
    slower = sum(outcome(c, settings) == SLOWER for c in data["cases"])
    differ = sum((c.get("numerics") or {}).get("status") == numerics_check.DIFFER
                 for c in data["cases"])
    lines = [f"## tfperf A/B: {data['tier']} tier on {data['machine_key']}", "",
             differences.describe_sides(data), "", *differences.markdown(differences_of(data)), "",
             f"{len(data['cases'])} cases; {slower} slower beyond the {settings.floor:.1%} floor"
             f"{f'; {differ} training to other numbers' if differ else ''}. "
             f"Intervals: {method_text.looks_rule(settings)}.", "",
             "| " + " | ".join(HEADER) + " |", "|---|---:|---:|---:|---|---|---|---:|---:|"]
    for case in data["cases"]:
        cells = _row(case, settings)
        cells[0] = f"`{cells[0]}`"
        if cells[5] == SLOWER:
            cells[5] = f"**{SLOWER}**"
        lines.append("| " + " | ".join(cells) + " |")
    costed = [(case["case_id"], said) for case in data["cases"] if (said := costs.lines(case))]
    if costed:
        lines += ["", "What each side costs besides its steps, B/A over the duets (side B "
                  "costing more beyond the floor fails the case):", ""]
        lines += [f"- `{case_id}`: " + "; ".join(said) for case_id, said in costed]
    checked = [(case["case_id"], said) for case in data["cases"]
               for said in numerics_check.lines(case)]
    if checked:
        lines += ["", "Numerics: both sides trained from side A's initial weights on its "
                  "batches, losses, first-step gradients and final weights compared within "
                  "the precision's tolerance (differ fails the case):", ""]
        lines += [f"- `{case_id}`: {said}" for case_id, said in checked]
    return "\n".join(lines + where.section(data["cases"])) + "\n"


def plot(case: dict[str, Any], settings: ABSettings, path: Path) -> None:
    """Each pair's B/A over time (circles where A's worker started first, triangles where
    B's did), the verdict's estimate and interval (shaded), the floor (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 3.2))
    for parity, first, marker in ((1, vocabulary.SIDE_A, "o"), (0, vocabulary.SIDE_B, "^")):
        pairs = [p for p in case["pairs"] if p["duet"] % 2 == parity]
        axes.plot([p["at_s"] for p in pairs], [p["b_rate"] / p["a_rate"] for p in pairs],
                  marker, markersize=4, alpha=0.7, label=f"duets that started {first} first")
    verdict = final(case, settings)
    if verdict is not None:
        axes.axhline(verdict.ratio, color="black", linewidth=1, label=f"B/A: {verdict.status}")
        axes.axhspan(verdict.low, verdict.high, color="#4c72b0", alpha=0.2,
                     label=f"{verdict.confidence:.1%} interval")
    for edge in (1 - settings.floor, 1 + settings.floor):
        axes.axhline(edge, color="#c44e52", linewidth=0.8, linestyle="--")
    save(figure, axes, (case["case_id"], "seconds into the measured rounds", "B/A examples/s"),
         path)


def write(data: dict[str, Any], settings: ABSettings, folder: Path) -> list[str]:
    """Write ab.md, A.json, B.json and plots/<case>.png under `folder`; append the summary to
    the step summary in GitHub Actions. Returns lines for the terminal."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    text = markdown(data, settings)
    (folder / "ab.md").write_text(text, encoding="utf-8")
    if os.environ.get(SUMMARY_ENV):
        with open(os.environ[SUMMARY_ENV], "a", encoding="utf-8") as summary:
            summary.write(text)
    for name in SIDES:
        side = benchmark_format.benchmark_json(data, name)
        (folder / f"{name}.json").write_text(json.dumps(side, indent=1))
    for case in data["cases"]:
        if case["pairs"]:
            plot(case, settings, folder / "plots" / f"{slug(case['case_id'])}.png")
        if vocabulary.SIDE_A in (case.get("where") or {}):  # a finding's op times, a bar a side an op
            where.plot(case, folder / "plots" / f"{slug(case['case_id'])}.where.png")
    spread = [e for e in map(start_order_effect, data["cases"]) if e is not None]
    lines = [f"A/B reports: {folder / 'ab.md'}, plots in {folder / 'plots'}, "
             f"pytest-benchmark compare {folder / 'A.json'} {folder / 'B.json'}"]
    if spread:
        effect = np.median(spread)
        lines.append(f"start order: B/A with B started first over B/A with A started first, "
                     f"median over cases {effect:.3f} (cancelled by alternating the duets)")
    lines.extend(method_text.method_lines(
        [fit for case in data["cases"] if (fit := _fit(case)) is not None], settings))
    busy = {role: [p[f"{role}_cores"] for c in data["cases"] for p in c["pairs"]
                   if p.get(f"{role}_cores") is not None] for role in ("active", "idle")}
    if busy["idle"] and busy["active"]:
        # Idle workers whose thread pools spin take cores from the side that trains.
        lines.append(f"CPU cores busy during a turn, median over pairs: the side training "
                     f"{np.median(busy['active']):.2f}, the idle workers together "
                     f"{np.median(busy['idle']):.2f}")
    return lines
