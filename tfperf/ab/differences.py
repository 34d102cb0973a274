"""Everything that differs between an A/B session's two sides besides the code each runs: each
package whose version differs or that one side lacks, each environment variable a side adds,
and the workloads folder. A verdict the user reads as TensorFlow's may be keras's or numpy's:
the report says what else changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tfperf.ground.vocabulary import SIDE_A, SIDE_B, SIDES, SideName

# Not a difference between the sides: the harness, which both run from this checkout (side B's
# environment reaches it by a path entry, not as an installed distribution).
SAME_BY_DESIGN = frozenset({"tfperf"})
ABSENT = "-"
SHOWN = 12  # one-sided packages named in a line, the rest counted


def between(sides: Mapping[SideName, Mapping[str, Any]]) -> list[dict[str, str]]:
    """What differs from side A to side B: {"kind": package|env|workloads, "name", "A", "B"},
    packages first, each kind by name. "-" where a side has none. A side kept without its
    packages (older files) has none to compare."""
    a, b = sides[SIDE_A], sides[SIDE_B]
    found: list[dict[str, str]] = []
    if "packages" in a and "packages" in b:
        for name in sorted((set(a["packages"]) | set(b["packages"])) - SAME_BY_DESIGN):
            old, new = a["packages"].get(name, ABSENT), b["packages"].get(name, ABSENT)
            if old != new:
                found.append({"kind": "package", "name": name, "A": old, "B": new})
    env_a, env_b = a.get("env") or {}, b.get("env") or {}
    for name in sorted(set(env_a) | set(env_b)):
        if env_a.get(name) != env_b.get(name):
            found.append({"kind": "env", "name": name, "A": env_a.get(name, ABSENT),
                          "B": env_b.get(name, ABSENT)})
    if a.get("workloads") != b.get("workloads"):
        found.append({"kind": "workloads", "name": "folder", "A": str(a.get("workloads")),
                      "B": str(b.get("workloads"))})
    return found


def _both(found: Sequence[Mapping[str, str]]) -> list[Mapping[str, str]]:
    return [d for d in found if d["kind"] != "package" or ABSENT not in (d["A"], d["B"])]


def _only(found: Sequence[Mapping[str, str]], side: SideName) -> list[str]:
    other = SIDE_B if side == SIDE_A else SIDE_A
    return [d["name"] for d in found if d["kind"] == "package" and d[other] == ABSENT]


def lines(found: Sequence[Mapping[str, str]]) -> list[str]:
    """For the terminal: one line for what both sides have at other versions or values, one for
    the packages only one side has (named up to SHOWN, then counted)."""
    if not found:
        return ["sides differ in nothing but their specs"]
    said = []
    changed = _both(found)
    if changed:
        said.append("sides differ in: " + ", ".join(
            f"{d['name']} {d['A']} -> {d['B']}" if d["kind"] == "package" else
            f"{d['kind']} {d['name']} {d['A']} -> {d['B']}" for d in changed))
    for side in SIDES:
        only = _only(found, side)
        if only:
            more = f" and {len(only) - SHOWN} more" if len(only) > SHOWN else ""
            said.append(f"only side {side} has {len(only)} package{'s' if len(only) > 1 else ''}"
                        f": {', '.join(only[:SHOWN])}{more}")
    return said


def markdown(found: Sequence[Mapping[str, str]]) -> list[str]:
    """For the report: a table of every difference."""
    if not found:
        return ["The sides differ in nothing but their specs: the same packages at the same "
                "versions, the same variables and workloads."]
    rows = [f"| {d['kind']} | `{d['name']}` | {d['A']} | {d['B']} |" for d in found]
    return [f"What differs between the sides ({len(found)}):", "",
            "| what | name | A | B |", "|---|---|---|---|", *rows]


def describe_sides(data: Mapping[str, Any]) -> str:
    """Each side in one line: its role, TensorFlow, spec, variables and workloads."""

    def side(name: SideName) -> str:
        kept = data["sides"][name]  # the schema requires only the two sides: each part read so
        env = " ".join(f"{k}={v}" for k, v in (kept.get("env") or {}).items())
        return (f"{name} = {kept.get('role', '')}: TensorFlow {kept.get('tensorflow', '')} "
                f"({kept.get('spec', '')}{', ' + env if env else ''}; workloads "
                f"{kept.get('workloads', '')})")
    return "; ".join(side(name) for name in SIDES)
