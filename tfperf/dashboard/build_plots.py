"""A case's series across TensorFlow builds on its page (Bokeh): each gated figure against the
builds it ran, in build order on the x axis (tfperf.storage.build_series), one colour per kind
of machine and configuration, each run a dot and each build's median joined by a line; a change
point that `tfperf-bisect changes` answered is marked at the first build after it, with what its
A/B said (tfperf.dashboard.change_marks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bokeh.layouts import column
from bokeh.models import ColumnDataSource, FactorRange
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from tfperf.dashboard.change_marks import CONFIRMED_COLOUR, NOT_CONFIRMED_COLOUR, Mark
from tfperf.dashboard.plots import SHOWN, Shown
from tfperf.dashboard.site_data import Point
from tfperf.storage import build_series
from tfperf.storage.build_series import Series

# The date plots' figures (their labels and scales) that a series holds, and its numerics: a
# build that trains to other numbers moves the loss after the same steps.
FIGURES = (*(s for s in SHOWN if s.name in build_series.FIGURES),
           Shown("loss_last", "loss after the measured rounds"))


def series_of(case_id: str, points: Sequence[Point]) -> list[Series]:
    """The case's series that span more than one build: those the plot draws."""
    rows = [{"case_id": case_id, "machine_kind": p.machine_kind, "series_key": p.series_key,
             "session_id": p.session, "when": p.when, "tensorflow": p.tensorflow,
             "git_hash": p.git_hash, "keras": p.keras or "",
             **{s.name: p.figure(s.name) for s in FIGURES}}
            for p in points]
    return [s for s in build_series.of_rows(rows) if len(s.builds) > 1]


def builds_plot(case_id: str, points: Sequence[Point], marks: Sequence[Mark] = ()
                ) -> Any | None:
    """One plot per figure the series have, the builds on a shared x axis, with the change
    points' marks; None where no series of the case spans two builds."""
    found = series_of(case_id, points)
    if not found:
        return None
    # One axis for all series: every build's label, in build order across them.
    order = sorted({b.label: b for s in found for b in s.builds}.values(),
                   key=build_series.BuildPoint.order)
    axis = FactorRange(factors=[b.label for b in order])
    plots = []
    for shown in FIGURES:
        name, label, scale = shown.name, shown.label, shown.scale
        if not any(b.values.get(name) for s in found for b in s.builds):
            continue
        plot = figure(x_range=axis, height=260, sizing_mode="stretch_width",
                      tools="pan,box_zoom,reset,save", title=f"{case_id}: {label} by build",
                      x_axis_label="TensorFlow build", y_axis_label=label)
        plot.xaxis.major_label_orientation = 0.8
        for index, series in enumerate(found):
            colour = Category10_10[index % len(Category10_10)]
            legend = f"{series.machine_kind} ({series.series_key[:8]})"
            runs = [(b.label, v * scale) for b in series.builds for v in b.values.get(name, [])]
            medians = [(b.label, (b.median(name) or 0.0) * scale) for b in series.builds
                       if b.values.get(name)]
            plot.scatter(x=[x for x, _ in runs], y=[y for _, y in runs], size=6, alpha=0.5,
                         color=colour, legend_label=legend)
            plot.line(source=ColumnDataSource({"x": [x for x, _ in medians],
                                               "y": [y for _, y in medians]}),
                      x="x", y="y", color=colour, line_width=2, legend_label=legend)
        _mark(plot, name, scale, found, [m for m in marks if m.figure == name])
        plot.legend.label_text_font_size = "7pt"
        plot.legend.location = "bottom_left"
        plots.append(plot)
    return column(*plots, sizing_mode="stretch_width")


def _mark(plot: Any, name: str, scale: float, found: Sequence[Series],
          marks: Sequence[Mark]) -> None:
    """Each change point at its first build after the change, at that build's median in the
    series of its machine kind, labelled with what its A/B said."""
    for mark in marks:
        level = next((b.median(name) for s in found for b in s.builds
                      if b.label == mark.after and s.machine_kind == mark.machine_kind
                      and s.series_key == mark.series_key and b.median(name) is not None),
                     None)
        if level is None:  # the build is no longer in the series (pruned, another kind)
            continue
        colour = CONFIRMED_COLOUR if mark.confirmed else NOT_CONFIRMED_COLOUR
        plot.scatter(x=[mark.after], y=[level * scale], marker="inverted_triangle", size=16,
                     color=colour, legend_label="change point, confirmed" if mark.confirmed
                     else "change point, not confirmed")
        plot.text(x=[mark.after], y=[level * scale], text=[mark.said], text_color=colour,
                  text_font_size="8pt", x_offset=8, y_offset=-10)
