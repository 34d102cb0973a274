"""The summary table at the end of a run: one line per case that ran."""

from __future__ import annotations

from collections.abc import Sequence

from tfperf.gate import case_verdict
from tfperf.gate.statistics import GateSettings
from tfperf.measure.case_record import CaseRecord


def _outcome(record: CaseRecord) -> str:
    if record.failure is not None:
        return f"FAILED ({record.failure.cause})"
    if record.gate is None:
        return "recorded" if record.run is not None else "?"
    return record.gate.status


def _row(record: CaseRecord) -> list[str]:
    info = record.extra_info
    verdict = record.gate.throughput if record.gate else None
    eps = info.get("examples_per_sec")
    step = info.get("step_time_s", {}).get("median")
    mfu = info.get("mfu")
    compile_s = info.get("compile_s")
    loss = (f"{info['loss_first']:.3g}->{info['loss_last']:.3g}"
            if "loss_last" in info else "")
    base = verdict.baseline if verdict else None
    change = verdict.change if verdict else None
    z = verdict.z if verdict else None
    shipped = _entry_only(record)
    return [
        record.case.id,
        _outcome(record),
        f"{eps:.1f}" if eps else "",
        f"{base:.1f}" if base else "",
        (f"({change:+.1%})" if shipped else f"{change:+.1%}") if change is not None else "",
        f"{z:+.1f}" if z is not None and not shipped else "",
        f"{step * 1e3:.1f}" if step else "",
        (f"{mfu:.1%}" if mfu else (f"{bw:.0%} copy" if (bw := info.get("fraction_of_copy_rate"))
                                   else "")) + ("?" if info.get("figures_flagged") else ""),
        f"{compile_s:.1f}" if compile_s is not None else "",
        loss,
    ]


# "history": the median examples/s of the runs the case was judged against (a baseline is a
# reviewed entry of baselines/, which may be some of them).
HEADER = ["case", "result", "ex/s", "history", "change", "z", "step ms", "MFU", "compile s",
          "loss"]


def _entry_only(record: CaseRecord) -> str:
    """The baseline entry a CPU case's whole, unsettled history comes from, if it does: runs of
    another day, and on a shared host kind maybe of another host, which the change column must
    not read as this machine's."""
    gate = record.gate
    return gate.entry_only if gate is not None and record.case.device_kind == "cpu" else ""


def entry_note(records: Sequence[CaseRecord]) -> list[str]:
    """One line where some CPU cases are judged only against a baseline entry's few runs."""
    only = [entry for r in records if (entry := _entry_only(r))]
    if not only:
        return []
    count = len(only)
    return [f"({count} {'case' if count == 1 else 'cases'}: change in parentheses against "
            f"the {', '.join(sorted(set(only)))} only: another day's runs, on CPU hosts of a "
            f"shared kind maybe another host's, where speed varies 2-3x; until "
            f"{GateSettings().settle} runs settle the history it "
            "judges only a gross change (a 2x slowdown, a kernel fallback, XLA off by mistake), "
            "not a few percent; this machine's own runs join the history from now on "
            "(docs/gate.md))"]


def table(records: Sequence[CaseRecord]) -> list[str]:
    rows = [HEADER] + [_row(r) for r in records]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.extend(entry_note(records))
    for record in records:
        if record.failure is not None:
            lines.append(f"{record.case.id}: {record.failure.cause}: {record.failure.message}")
        elif record.gate is not None:  # every verdict with its reason
            lines.append(f"{record.case.id}: {case_verdict.reason(record.gate)}")
            if record.gate.soft_note:
                lines.append(f"{record.case.id}: soft facts differ: {record.gate.soft_note}")
        info = record.extra_info
        lines.extend(f"{record.case.id}: figure flagged: {said}"
                     for said in info.get("figures_flagged", []))
        if "profile" in info:
            lines.append(f"{record.case.id}: profile: tensorboard --logdir {info['profile']}")
        if "regression_profile" in info:
            lines.append(f"{record.case.id}: profile of the confirmed regression: "
                         f"tensorboard --logdir {info['regression_profile']}")
        if info.get("input_bound"):
            lines.append(f"{record.case.id}: input_bound: {info['input_bound_evidence']}")
    return lines
