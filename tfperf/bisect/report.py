"""A bisection's report: the terminal table, the Markdown (also appended to
$GITHUB_STEP_SUMMARY), a plot of B/A against the candidates, and the JSON document the results
store keeps (and the file beside the Markdown). All made from the document, so a kept bisection
reads the same as a fresh one.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfperf.ab import differences
from tfperf.bisect import followed, levels, search
from tfperf.bisect.candidates import Candidate
from tfperf.bisect.search import Bisection, Judged
from tfperf.gate.summary_and_trends import SUMMARY_ENV
from tfperf.ground import vocabulary
from tfperf.ground.vocabulary import FASTER, RUNS, SAME, SIDE_A, SIDE_B, SKIPPED, UNDECIDED, Followed

FORMAT = "tfperf-bisect/1"
UPSTREAM = "https://github.com/tensorflow/tensorflow"
HEADER = ["step", "B (later)", "A (earlier)", "B/A", "interval", "verdict", "pairs", "time"]

_SAYS = {
    search.FOUND: "found the culprit",
    search.NOT_APART: "stopped: the bad end is not {worse} than the good end",
    vocabulary.UNDECIDED: "stopped: a step stayed undecided; the culprit lies in the range below",
    vocabulary.SKIPPED: "stopped: every candidate inside the range was skipped",
    search.OUT_OF_TIME: "stopped: the time budget ran out; the culprit lies in the range below",
    search.END_FAILED: "stopped: an end could not be built or run",
    search.SCANNED: "compared each candidate with the one before it",
}


def document(found: Bisection, candidates: Sequence[Candidate], case_id: str, kind: str,
             bisect_id: str, machine_key: str, ab_floor: float) -> dict[str, Any]:
    steps = []
    for step in found.steps:
        result = step.result
        shown: dict[str, Any] = {"role": step.role, "candidate": step.candidate,
                                 "against": step.against, "floor": step.level.floor,
                                 "confidence": step.level.confidence,
                                 "seconds": round(result.seconds, 1)}
        if isinstance(result, Judged):
            shown.update(verdict=result.verdict, ratio=result.ratio, low=result.low,
                         high=result.high, pairs=result.pairs, session=result.session,
                         sides=result.sides, differences=result.differences)
            if result.note:
                shown["note"] = result.note
        else:
            shown.update(verdict=SKIPPED, reason=result.reason)
        steps.append(shown)
    return {
        "format": FORMAT, "id": bisect_id, "machine_key": machine_key, "case_id": case_id,
        "kind": kind, "followed": found.followed,
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "error": levels.ERROR, "ab_floor": ab_floor, "floor": found.floor,
        "planned": found.planned, "outcome": found.outcome, "good": found.good,
        "bad": found.bad, "culprit": found.culprit,
        "candidates": [{"label": c.label, "tensorflow": c.tensorflow,
                        "commit": vars(c.commit) if c.commit else None,
                        "skipped": found.skipped.get(i)} for i, c in enumerate(candidates)],
        "steps": steps,
        "below_floor": [found.steps.index(s) for s in found.below_floor()],
        "not_excluded": [found.steps.index(s) for s in found.not_excluded()],
    }


def _label(doc: dict[str, Any], index: int) -> str:
    return str(doc["candidates"][index]["label"])


def _followed(doc: dict[str, Any]) -> Followed:
    """What the bisection followed: speed for a document kept before any other could be."""
    return followed.finding(str(doc.get("followed", "slower")))


def _row(doc: dict[str, Any], number: int, step: dict[str, Any]) -> list[str]:
    name = f"{number} ({step['role']})" if step["role"] != search.BISECT else str(number)
    judged = step["verdict"] != SKIPPED
    measured = judged and step["pairs"] > 0  # a candidate failing as configured has no pairs
    floored = _followed(doc) not in search.UNFLOORED
    return [name, _label(doc, step["candidate"]), _label(doc, step["against"]),
            f"{step['ratio']:.3f}" if measured else "",
            f"[{step['low']:.3f}, {step['high']:.3f}] at {step['confidence']:.2%}"
            if measured else "",
            (f"{step['verdict']} (floor {step['floor']:.1%})" if floored else step["verdict"])
            if judged else "skipped (below)",
            str(step["pairs"]) if judged else "", f"{step['seconds']:.0f} s"]


def _error(doc: dict[str, Any]) -> str:
    """What the named culprit's error rate holds for, by what the bisection followed."""
    planned = (f"{doc['planned']} verdicts planned, each at "
               f"{1 - doc['error'] / (doc['planned'] + 1):.2%} confidence")
    what = _followed(doc)
    if what == "numerics":
        return ("- error: each step's numerics check trains both sides from the same weights and "
                "compares them against the precision's tolerance; a named culprit is as sure "
                "as those checks, and no other build between the ends may differ too")
    if what == "configuration":
        return ("- error: none from sampling: whether a candidate fails as configured is a fact "
                "of its run, so the culprit is the first that does, if no build between the "
                "ends fails and then runs again")
    change = ("slows the case" if what == "slower"
              else f"raises its {followed.COSTS[what].label}")
    return (f"- error: the steps' levels are set so that a named culprit is wrong at most "
            f"{doc['error']:.0%} of the time, when it {change} by at least twice the "
            f"steps' floor ({2 * doc['floor']:.1%}) and no other change between the ends "
            f"exceeds the floor ({doc['floor']:.1%}): {planned}")


def side_of(doc: dict[str, Any], index: int) -> dict[str, Any]:
    """What a step measured of a candidate: its TensorFlow version and git hash."""
    for step in doc["steps"]:
        for side, at in ((SIDE_B, step["candidate"]), (SIDE_A, step["against"])):
            if at == index and step.get("sides", {}).get(side):
                found: dict[str, Any] = step["sides"][side]
                return found
    return {}


def _git_ref(side: dict[str, Any]) -> str:
    """A ref upstream knows: the hash of a `v2.21.0-0-g<hash>` description, or its tag."""
    git = str(side.get("git") or "")
    hashed = re.search(r"-g([0-9a-f]{7,40})$", git)
    if hashed:
        return hashed.group(1)
    if re.fullmatch(r"[0-9a-f]{7,40}", git):
        return git
    return f"v{side['tensorflow']}" if side.get("tensorflow") else ""


def _described(doc: dict[str, Any], index: int) -> str:
    candidate = doc["candidates"][index]
    if candidate["commit"]:
        commit = candidate["commit"]
        return f"`{commit['sha'][:12]}` {commit['subject']} ({commit['author']})"
    side = side_of(doc, index)
    what = f"`{candidate['label']}`"
    if side.get("tensorflow"):
        what += f": TensorFlow {side['tensorflow']}, git `{side.get('git') or '?'}`"
    return what


def conclusion(doc: dict[str, Any]) -> list[str]:
    """What the bisection says, as Markdown lines."""
    lines = [f"**{_SAYS[doc['outcome']].format(worse=vocabulary.FOLLOWED_WORDS[_followed(doc)])}**."]
    good, bad = doc["good"], doc["bad"]
    if doc["outcome"] == search.SCANNED:
        told = [s for s in doc["steps"] if s["verdict"] not in (SAME, RUNS, SKIPPED)]
        lines += [f"- {_label(doc, s['against'])} to {_label(doc, s['candidate'])}: "
                  f"**{s['verdict']}**, B/A {s['ratio']:.3f} [{s['low']:.3f}, {s['high']:.3f}]"
                  + (" (its interval reaches both within the floor and beyond it)"
                     if s["verdict"] == UNDECIDED else "") for s in told]
        if not told:
            lines.append(f"- no change beyond the floor ({doc['floor']:.1%}) anywhere")
        lines.append(f"- error: {len(doc['steps'])} verdicts, each at "
                     f"{doc['steps'][0]['confidence']:.2%} confidence, so that all are right "
                     f"together at least {1 - doc['error']:.0%} of the time")
    if doc["outcome"] == search.FOUND:
        lines.append(f"- culprit: {_described(doc, bad)}")
        lines.append(f"- last good: {_described(doc, good)}")
        a, b = side_of(doc, good), side_of(doc, bad)
        if doc["kind"] == "tensorflow" and _git_ref(a) and _git_ref(b) and _git_ref(a) != _git_ref(b):
            lines.append(f"- upstream changes: {UPSTREAM}/compare/{_git_ref(a)}...{_git_ref(b)}")
    elif doc["outcome"] in (vocabulary.UNDECIDED, vocabulary.SKIPPED, search.OUT_OF_TIME):
        inside = [_label(doc, i) for i in range(good + 1, bad + 1)]
        lines.append(f"- the culprit is one of: {', '.join(inside)} (after the last good "
                     f"{_label(doc, good)})")
    if doc["outcome"] not in (search.NOT_APART, search.END_FAILED, search.SCANNED):
        lines.append(_error(doc))
    for number in doc["below_floor"]:
        step = doc["steps"][number]
        if step["verdict"] == UNDECIDED:
            lines.append(
                f"- not split: {_label(doc, step['against'])} to {_label(doc, step['candidate'])}"
                f" stayed undecided, B/A {step['ratio']:.3f} ([{step['low']:.3f}, "
                f"{step['high']:.3f}]) at the steps' floor of {step['floor']:.1%}: a change near "
                "the floor may lie there, which this bisection does not look for; the other "
                "half's verdict (the next step) carried it on")
            continue
        lines.append(
            f"- not split: {_label(doc, step['against'])} to {_label(doc, step['candidate'])} "
            f"changed B/A by {step['ratio'] - 1:+.1%} ([{step['low']:.3f}, {step['high']:.3f}]), "
            f"less than the steps' floor of {step['floor']:.1%}: a smaller change lies there, "
            "which this bisection does not look for")
    for number in doc.get("not_excluded", []):  # documents kept before it have none
        step = doc["steps"][number]
        lines.append(
            f"- not excluded: {_label(doc, step['against'])} to {_label(doc, step['candidate'])} "
            f"said same, B/A {step['ratio']:.3f} ([{step['low']:.3f}, {step['high']:.3f}]): a "
            + (f"slowdown of up to {1 - step['low']:.1%}" if _followed(doc) == "slower"
               else f"growth of up to {step['high'] - 1:.1%}")
            + f", below the steps' floor of {step['floor']:.1%}, may lie there, which this "
            "bisection does not look for")
    skipped = [(c["label"], c["skipped"]) for c in doc["candidates"] if c["skipped"]]
    for label, reason in skipped:
        lines.append(f"- skipped {label}: {reason}")
    return lines


def table(doc: dict[str, Any]) -> list[str]:
    rows = [HEADER] + [_row(doc, n, s) for n, s in enumerate(doc["steps"], 1)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return [f"tfperf bisect {doc['id']}: {doc['case_id']} on {doc['machine_key']}", *lines,
            *(re.sub(r"\*\*|`", "", line) for line in conclusion(doc))]


def markdown(doc: dict[str, Any], plot: str | None = None) -> str:
    head = "| " + " | ".join(HEADER) + " |\n|" + "---|" * len(HEADER) + "\n"
    rows = "".join("| " + " | ".join(cell.replace("|", "\\|") for cell in _row(doc, n, s))
                   + " |\n" for n, s in enumerate(doc["steps"], 1))
    picture = f"\n![B/A against the candidates]({plot})\n" if plot else ""
    return (f"## tfperf bisect: `{doc['case_id']}`\n\n{len(doc['candidates'])} candidates "
            f"on `{doc['machine_key']}`; each step is an interleaved A/B of B against A.\n\n"
            f"{head}{rows}\n" + "\n".join(conclusion(doc)) + "\n" + _step_differences(doc)
            + picture)


def _step_differences(doc: dict[str, Any]) -> str:
    """What else differed between each step's sides besides the candidates."""
    said = [f"- step {n}: " + "; ".join(differences.lines(step["differences"]))
            for n, step in enumerate(doc["steps"], 1) if step.get("differences")]
    return ("\nWhat else differed between the sides of a step:\n\n" + "\n".join(said) + "\n"
            if said else "")


def plot(doc: dict[str, Any], path: Path) -> Path:
    """B/A of each measured step at its candidate, with its interval, coloured by verdict."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def colour(verdict: str) -> str:  # the finding red, its absence blue, better green
        said = followed.worse(verdict)
        return "#8c8c8c" if said is None else "#c44e52" if said else \
            "#55a868" if verdict in (FASTER, vocabulary.LOWER) else "#4c72b0"

    labels = [c["label"] for c in doc["candidates"]]
    figure, axes = plt.subplots(figsize=(max(6.0, 0.5 * len(labels) + 2), 4))
    for number, step in enumerate(doc["steps"], 1):
        x = step["candidate"]
        if step["verdict"] == SKIPPED:
            axes.plot([x], [1.0], "x", color="#dd8452", markersize=8)
            continue
        if not step["pairs"]:  # failed as configured: no ratio to draw
            axes.plot([x], [1.0], "s", color=colour(step["verdict"]), markersize=7)
            continue
        axes.errorbar([x], [step["ratio"]], yerr=[[step["ratio"] - step["low"]],
                                                 [step["high"] - step["ratio"]]],
                      fmt="o", color=colour(step["verdict"]), capsize=3)
        axes.annotate(f"{number}: vs {step['against']}", (x, step["high"]), fontsize=7,
                      textcoords="offset points", xytext=(3, 3))
    axes.axhline(1.0, color="black", linewidth=0.6)
    for floor in {doc["floor"], doc["ab_floor"]}:
        if floor:
            axes.axhspan(1 - floor, 1 + floor, color="#4c72b0", alpha=0.08)
    if doc["culprit"] is not None:
        axes.axvline(doc["culprit"] - 0.5, color="#c44e52", linestyle="--", linewidth=1)
    axes.set_xticks(range(len(labels)), [re.sub(r"^[\w\[\]-]+==", "", label) for label in labels],
                    rotation=60, ha="right", fontsize=7)
    axes.set_ylabel("B/A against the good end of the step")
    axes.set_title(doc["case_id"], fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write(doc: dict[str, Any], folder: Path) -> list[str]:
    """The report's files (document, Markdown, plot) in `folder`; lines saying where. The
    Markdown is also appended to $GITHUB_STEP_SUMMARY when it is set."""
    folder.mkdir(parents=True, exist_ok=True)
    picture = plot(doc, folder / "bisect.png")
    (folder / "bisect.json").write_text(json.dumps(doc, indent=1) + "\n")
    text = markdown(doc, picture.name)
    (folder / "bisect.md").write_text(text)
    summary = os.environ.get(SUMMARY_ENV)
    if summary:
        with open(summary, "a") as out:
            out.write(markdown(doc) + "\n")
    return [f"bisection report: {folder / 'bisect.md'} (plot {picture.name}, document "
            "bisect.json)"]
