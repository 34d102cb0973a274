"""`tfperf-store changes CASE`: the change points of a case's series across builds, figure by
figure (tfperf.changes.detect). Each is a question for an A/B, not a finding: it is listed as
not confirmed, with the command that confirms and places it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tfperf.changes import detect
from tfperf.changes.detect import ChangePoint
from tfperf.changes.otava_env import OTAVA
from tfperf.commands import store_series
from tfperf.storage.results_store import ResultsStore


def figures(names: Sequence[str]) -> list[detect.Figure]:
    """The figures named (all by default); a ValueError, one line, naming the valid ones."""
    unknown = [n for n in names if n not in detect.BY_NAME]
    if unknown:
        raise ValueError(f"--figure: no figure {unknown[0]!r}; valid: "
                         f"{', '.join(detect.BY_NAME)}")
    return [detect.BY_NAME[n] for n in names] if names else list(detect.FIGURES)


def lines(store: ResultsStore, case_id: str, machine_kind: str | None,
          chosen: Sequence[detect.Figure], cache: Path, max_pvalue: float) -> list[str]:
    series = store_series.chosen(store, case_id, machine_kind)
    found = detect.detect(series, chosen, cache, max_pvalue)
    said = [f"{case_id}: {len(found)} change point{'' if len(found) == 1 else 's'} in "
            f"{len(series)} series "
            f"({', '.join(f'{f.name} from {f.min_change:.0%}' for f in chosen)}, "
            f"p below {max_pvalue:g}, Apache Otava {OTAVA.split('==')[1]})"]
    said += [_line(point) for point in found]
    if any(p.worse for p in found):
        said.append(f"not confirmed: confirm and place each worse one with an A/B: "
                    f"tfperf-bisect changes {case_id}")
    return said


def _line(point: ChangePoint) -> str:
    runs = f"{len(point.before.sessions)} and {len(point.after.sessions)} runs"
    return (f"  {point.series.machine_kind} ({point.series.series_key[:8]}): "
            f"{point.describe()} ({runs})")
