"""The gate's reports: a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when set) and
one PNG trend plot per gated case (its history, the noise band, tonight's point)."""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfperf.gate.case_verdict import CaseGate, reason
from tfperf.ground.vocabulary import WAIVED
from tfperf.storage.results_store import FailureRow

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def _cell(value: float | None, form: str) -> str:
    return format(value, form) if value is not None else ""


def _failure_line(f: FailureRow) -> str:
    where = f" (while {f.phase})" if f.phase and f"while {f.phase}" not in f.message else ""
    log = f"; log: `{f.log_path}`" if f.log_path and f.log_path not in f.message else ""
    note = f"{f.message}{where}{log}".replace("|", "/").replace("\n", " ")
    return f"| `{f.case_id}` | **FAILED ({f.cause})** |  |  |  |  |  | {note} |"


def markdown(gates: Sequence[CaseGate], title: str, failures: Sequence[FailureRow] = ()) -> str:
    """Every case of the session: each gated one with its verdict, each that failed before it
    could be gated (crashed, out of memory, timed out, not steady...) with its cause and log."""
    failed = sum(g.failed for g in gates)
    lines = [f"## tfperf gate: {title}", "",
             f"{len(gates)} cases gated, {failed} confirmed regression"
             f"{'s' if failed != 1 else ''}, {len(failures)} failed before the gate.", "",
             "| case | verdict | examples/s | baseline | change | z | history | reason |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    lines += [_failure_line(f) for f in failures]
    for g in gates:
        v = g.throughput
        notes = [reason(g)] + ([f"soft facts differ: {g.soft_note}"] if g.soft_note else [])
        if g.profile:
            notes.append(f"profile: `tensorboard --logdir {g.profile}`")
        verdict = f"**{g.status}**" if g.failed else g.status
        lines.append(
            f"| `{g.run.case_id}` | {verdict} | {g.run.examples_per_sec:.1f} | "
            f"{_cell(v.baseline if v else None, '.1f')} | "
            f"{_cell(v.change if v else None, '+.1%')} | {_cell(v.z if v else None, '+.1f')} | "
            f"{len(g.history)} | {'; '.join(notes).replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def slug(case_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", case_id)


def plot(g: CaseGate, path: Path) -> None:
    """History (dots), its median and noise band (shaded), tonight (a large point, red and
    marked when a regression was confirmed)."""
    # Imported here: only a session that gated something pays for matplotlib.
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on runners
    import matplotlib.pyplot as plt

    v = g.throughput
    figure, axes = plt.subplots(figsize=(7, 3.2))
    past = [r.examples_per_sec for r in g.history]
    xs = [_date(r.when) for r in g.history]
    axes.plot(xs, past, "o-", color="#4c72b0", markersize=4, label="history (per-run median)")
    if v is not None and v.baseline is not None and v.band is not None:
        axes.axhline(v.baseline, color="#4c72b0", linewidth=0.8, linestyle="--", label="median")
        axes.axhspan(v.band[0], v.band[1], color="#4c72b0", alpha=0.12, label="noise band")
    colour = "#c44e52" if g.failed else "#dd8452" if g.status == WAIVED else "#55a868"
    tonight = _date(g.run.when)
    axes.plot([tonight], [g.run.examples_per_sec], "o", color=colour, markersize=9,
              label=f"this run: {g.status}")
    if g.failed:
        axes.annotate("regression", (tonight, g.run.examples_per_sec),
                      textcoords="offset points", xytext=(-30, -18), color=colour)
    axes.xaxis_date()
    figure.autofmt_xdate()
    save(figure, axes, (g.run.case_id, "date (UTC)", "examples/s"), path)


def _date(when: str) -> float:
    """A run's time as the plot's x value, in matplotlib's days (a time without a zone is
    UTC)."""
    moment = datetime.datetime.fromisoformat(when)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)
    return (moment - _EPOCH).total_seconds() / 86400


# matplotlib's dates count days from this epoch (its default, matplotlib.dates.get_epoch()).
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def save(figure: Any, axes: Any, labels: tuple[str, str, str], path: Path) -> None:
    """Title, axis labels and legend of a case's plot, then the file (the figure closed)."""
    import matplotlib.pyplot as plt

    title, x, y = labels
    axes.set_title(title, fontsize=8)
    axes.set_xlabel(x)
    axes.set_ylabel(y)
    axes.legend(fontsize=7, loc="best")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)


def write_reports(gates: Sequence[CaseGate], folder: Path, title: str,
                  failures: Sequence[FailureRow] = ()) -> list[str]:
    """Write summary.md and trends/<case>.png under `folder`; append the summary to the
    step summary when running in GitHub Actions. Returns lines for the terminal."""
    folder.mkdir(parents=True, exist_ok=True)
    text = markdown(gates, title, failures)
    (folder / "summary.md").write_text(text, encoding="utf-8")
    step_summary = os.environ.get(SUMMARY_ENV)
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as f:
            f.write(text)
    for g in gates:
        if g.history:
            plot(g, folder / "trends" / f"{slug(g.run.case_id)}.png")
    return [f"gate reports: {folder / 'summary.md'}, trend plots in {folder / 'trends'}"]
