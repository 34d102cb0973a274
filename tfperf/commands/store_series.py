"""`tfperf-store series CASE`: a case's series across TensorFlow builds, as a table per kind of
machine and configuration, its builds in build order (tfperf.storage.build_series)."""

from __future__ import annotations

from tfperf.storage import build_series
from tfperf.storage.build_series import BuildPoint, Series
from tfperf.storage.errors import StorageError
from tfperf.storage.results_store import ResultsStore

HEADER = ("build", "commit", "runs", "ex/s", "vs previous", "MFU", "compile s", "peak MiB",
          "loss")


def chosen(store: ResultsStore, case_id: str, machine_kind: str | None) -> list[Series]:
    """The case's series (on one kind of machine); a StorageError that says what is there where
    there is none."""
    found = build_series.of_rows(store.series(case_id, machine_kind))
    if found:
        return found
    if machine_kind is not None:
        kinds = sorted({s.machine_kind for s in build_series.of_rows(store.series(case_id))})
        if kinds:
            raise StorageError(f"no runs of {case_id} on {machine_kind} in {store.where} (its "
                               f"kinds of machine there: {', '.join(kinds)})")
    raise StorageError(f"no runs of {case_id} in {store.where}: give a case id as the reports "
                       "name it (tfperf-store info says what the store holds)")


def _number(value: float | None, form: str) -> str:
    return "" if value is None else format(value, form)


def _row(build: BuildPoint, before: BuildPoint | None) -> tuple[str, ...]:
    speed, earlier = build.median("examples_per_sec"), before and before.median("examples_per_sec")
    change = f"{speed / earlier - 1:+.1%}" if speed and earlier else ""
    memory = build.median("peak_memory_bytes")
    return (build.label, build.git_hash[:10], str(len(build.sessions)), _number(speed, ".1f"),
            change, _number(build.median("mfu"), ".1%"),
            _number(build.median("compile_cpu_s"), ".2f"),
            _number(memory / 2**20 if memory is not None else None, ".0f"),
            _number(build.median("loss_last"), ".4g"))


def table(series: Series) -> str:
    """One series as text: a line that names it, then a row per build (medians over its runs)."""
    rows = [HEADER, *(_row(b, series.builds[i - 1] if i else None)
                      for i, b in enumerate(series.builds))]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = [f"{series.case_id} on {series.machine_kind} (configuration {series.series_key}): "
             f"{len(series.builds)} builds, {series.runs} runs"]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    return "\n".join(lines)
