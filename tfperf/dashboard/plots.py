"""The dashboard's interactive plots (Bokeh): a case's gated figures by date on every machine
key, and an A/B session's ratios with their intervals."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby, pairwise
from typing import Any

import numpy as np
from bokeh.layouts import column
from bokeh.models import CDSView, ColumnDataSource, FactorRange, HoverTool, Line, VArea
from bokeh.models.annotations import Legend, LegendItem, Span, Title, Whisker
from bokeh.models.renderers import GlyphRenderer
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from tfperf.dashboard.site_data import ABCase, Failure, Point
from tfperf.gate.statistics import METRICS, GateSettings
from tfperf.ground.vocabulary import (
    FASTER,
    NOT_CONFIRMED,
    REGRESSION,
    SAME,
    SLOWER,
    UNDECIDED,
    UNSTABLE,
    WAIVED,
    ABCaseOutcome,
    RunVerdict,
)

# A verdict that deserves a colour of its own; every other point takes its machine's.
VERDICT_COLOURS: dict[RunVerdict, str] = {REGRESSION: "#c44e52", NOT_CONFIRMED: "#dd8452",
                                          WAIVED: "#937860", FASTER: "#55a868",
                                          UNSTABLE: "#8172b3"}
AB_COLOURS: dict[ABCaseOutcome, str] = {SLOWER: "#c44e52", FASTER: "#55a868", SAME: "#4c72b0",
                                        UNDECIDED: "#8c8c8c"}
TOOLS = "pan,box_zoom,reset,save"


def _ms(moments: Sequence[datetime.datetime]) -> Any:
    """Bokeh's datetime axis counts milliseconds since the epoch."""
    return np.array([m.timestamp() * 1000 for m in moments])


_GATE = GateSettings()
# Each gated figure's band takes the gate's default floor for it; MFU, judged through
# throughput, takes throughput's.
_FLOORS = {metric.name: _GATE.default_floor(metric) for metric in METRICS}


@dataclass(frozen=True)
class Shown:
    """A figure a case page plots: the Point attribute, its axis, its scale."""

    name: str
    label: str
    scale: float = 1.0

    @property
    def floor(self) -> float:
        return _FLOORS.get(self.name, _GATE.floor)


# Every gated figure, and MFU.
SHOWN = (Shown("examples_per_sec", "examples/s"), Shown("compile_cpu_s", "compile time (CPU s)"),
         Shown("peak_memory_bytes", "peak memory (MiB)", 1 / 2**20),
         Shown("scaling_efficiency", "scaling efficiency"), Shown("mfu", "MFU"))


def _bands(values: Sequence[float] | np.ndarray, settings: GateSettings, floor: float | None = None
           ) -> tuple[list[float], list[float]]:
    """The band the gate would not flag, at each run: around the median of the previous
    `history_limit` runs of the same build, `z` robust sigmas or the effect floor, whichever is
    wider (tfperf.gate.statistics; the first run of a build has only itself)."""
    floor = settings.floor if floor is None else floor
    data = np.asarray(values, dtype=float)
    limit = settings.history_limit
    centres, sigmas = np.empty(len(data)), np.empty(len(data))
    first = min(limit, len(data))
    if first:  # the first runs: a shorter history, each a row padded with NaN (one call, not 60)
        windows = np.full((first, max(first - 1, 1)), np.nan)
        windows[0, 0] = data[0]
        for i in range(1, first):
            windows[i, :i] = data[:i]
        centres[:first] = np.nanmedian(windows, axis=1)
        sigmas[:first] = 1.4826 * np.nanmedian(np.abs(windows - centres[:first, None]), axis=1)
    if len(data) > limit:  # the rest at once: each run's previous `limit` runs
        windows = np.lib.stride_tricks.sliding_window_view(data[:-1], limit)
        centres[limit:] = np.median(windows, axis=1)
        sigmas[limit:] = 1.4826 * np.median(np.abs(windows - centres[limit:, None]), axis=1)
    half = np.maximum(settings.z * sigmas, floor * centres)
    return list(centres - half), list(centres + half)


def _build(point: Point) -> tuple[str, str]:
    return point.tensorflow, point.git_hash


def _dots(points: Sequence[Point], shown: Sequence[Shown],
          colour_of: Callable[[Point], str]) -> ColumnDataSource:
    """Every run once, for all the case's figures: each figure's values a column (NaN where a
    run has none: not drawn), and the strings that hovering shows, which are most of a page's
    size and of its build time, serialised once for the page rather than once a figure."""
    return ColumnDataSource({
        "when": _ms([p.when for p in points]),
        **{f"value_{s.name}": np.array([np.nan if (v := p.figure(s.name)) is None
                                        else v * s.scale for p in points]) for s in shown},
        "tensorflow": [f"{p.tensorflow} {p.git_hash[:12]}" for p in points],
        "verdict": [p.verdict or "-" for p in points],
        "reason": [p.reason or "-" for p in points],
        "flagged": [p.flagged or "-" for p in points],
        "marker": ["triangle" if p.flagged else "circle" for p in points],
        "machine": [p.machine_key for p in points],
        "colour": [VERDICT_COLOURS.get(p.verdict, colour_of(p)) for p in points]})


def _colours(points: Sequence[Point], failures: Sequence[Failure]) -> dict[str, str]:
    machines = sorted({p.machine_key for p in points} | {f.machine_key for f in failures})
    return {key: Category10_10[i % 10] for i, key in enumerate(machines)}


def _lines(points: Sequence[Point], shown: Sequence[Shown]) -> dict[str, ColumnDataSource]:
    """Each machine's runs once for all the case's figures: its times, and each figure's value
    and band as columns (NaN where a run has none: a gap). One source a machine rather than
    one a machine and figure: each is three Bokeh models and a copy of the times."""
    sources = {}
    for key in sorted({p.machine_key for p in points}):
        mine = [p for p in points if p.machine_key == key]
        columns: dict[str, Any] = {"when": _ms([p.when for p in mine])}
        for s in shown:
            value, low, high = (np.full(len(mine), np.nan) for _ in range(3))
            figures = [p.figure(s.name) for p in mine]
            have = [i for i, v in enumerate(figures) if v is not None]
            value[have] = np.array([figures[i] for i in have], dtype=float) * s.scale
            # Each build's runs that have the figure: its band, as if the others were not there.
            for _, stretch in groupby(have, key=lambda i: _build(mine[i])):
                at = list(stretch)
                low[at], high[at] = _bands(value[at], _GATE, s.floor)
            columns |= {f"value_{s.name}": value, f"low_{s.name}": low, f"high_{s.name}": high}
        sources[key] = ColumnDataSource(columns)
    return sources


def case_trends(case_id: str, points: Sequence[Point], failures: Sequence[Failure]) -> Any:
    """Every figure the case has, one plot under the other (one Bokeh root: one document)."""
    shown = [s for s in SHOWN if any(p.figure(s.name) is not None for p in points)] or \
        SHOWN[:1]
    colour_of = _colours(points, failures)
    dots = _dots(points, shown, lambda p: colour_of[p.machine_key])
    lines = _lines(points, shown)
    trends = [case_trend(case_id, points, failures if s == SHOWN[0] else (), s, dots, lines,
                         colour_of) for s in shown]
    # One time axis for all: panning or zooming one moves the others, and the date ticker (a
    # dozen models) and its formatter are serialised once.
    first = trends[0]
    for trend in trends[1:]:
        trend.x_range = first.x_range
        trend.xaxis[0].ticker = trend.xgrid[0].ticker = first.xaxis[0].ticker
        trend.xaxis[0].formatter = first.xaxis[0].formatter
    # Every renderer draws all its source's rows: one view (and its filter) a source, not two
    # models a renderer (a third of a page's models). BokehJS sizes a view by its source: a
    # view shared by sources of other lengths breaks the page ("Size mismatch").
    views: dict[str, Any] = {}
    for trend in trends:
        for renderer in trend.renderers:
            renderer.view = views.setdefault(renderer.data_source.id, CDSView())
    return column(*trends, sizing_mode="stretch_width")


def case_trend(case_id: str, points: Sequence[Point], failures: Sequence[Failure],
               shown: Shown, dots: ColumnDataSource, lines: dict[str, ColumnDataSource],
               colour_of: dict[str, str]) -> Any:
    """One figure by date, one line per machine key with the gate's band (per TensorFlow build),
    the build's changes marked on the axis, each verdict coloured, runs whose figures a sanity
    check flagged as triangles, the reason on hover, failures as crosses below.
    Renderers and sources are shared across machines and figures where they can be: a page's
    build time grows with its number of Bokeh models, and a fleet's dashboard has hundreds of
    pages. `dots`, `lines` and `colour_of` are the whole case's (case_trends): a machine keeps
    its colour in every figure, whichever figures its runs lack."""
    points = [p for p in points if p.figure(shown.name) is not None]

    def value(point: Point) -> float:
        return (point.figure(shown.name) or 0.0) * shown.scale

    plot = figure(x_axis_type="datetime", height=300, sizing_mode="stretch_width", tools=TOOLS,
                  title=Title(text=f"{case_id}: {shown.label}", text_font_size="9pt"),
                  x_axis_label="date (UTC)", y_axis_label=shown.label)
    lowest = min((value(p) for p in points), default=1.0)
    highest = max((value(p) for p in points), default=1.0)
    changes: dict[str, list[Any]] = {"when": [], "text": [], "colour": []}
    legend = Legend(location="bottom_left", label_text_font_size="7pt", click_policy="hide")
    plot.add_layout(legend)
    items: list[Any] = []
    for key, colour in colour_of.items():
        mine = [p for p in points if p.machine_key == key]  # those with this figure
        if not mine:
            continue
        # Made as models, not through figure's glyph methods: nothing selects, hovers or mutes
        # these (the legend hides them), so they need none of the glyph copies those make. A
        # page's build time and size grow with its models, 579 here before.
        drawn: list[Any] = [GlyphRenderer(data_source=lines[key], nonselection_glyph=None, muted_glyph=None,
                               glyph=glyph) for glyph in (
            VArea(x="when", y1=f"low_{shown.name}", y2=f"high_{shown.name}", fill_color=colour,
                  fill_alpha=0.12),
            Line(x="when", y=f"value_{shown.name}", line_color=colour))]
        plot.renderers += drawn
        items.append(LegendItem(label=key, renderers=drawn))
        for before, after in pairwise(mine):
            if _build(before) != _build(after):
                changes["when"].append(after.when)
                changes["text"].append(f"TF {after.tensorflow} {after.git_hash[:10]}")
                changes["colour"].append(colour)
    legend.items = items  # the failures' crosses add theirs after
    # Numbers as arrays (Bokeh sends them as one binary buffer); strings only where hovering
    # needs them.
    y = f"value_{shown.name}"
    drawn_dots = plot.scatter(x="when", y=y, color="colour", size=7, marker="marker", source=dots)
    drawn_dots.nonselection_glyph = drawn_dots.muted_glyph = None  # nothing selects or mutes them
    plot.add_tools(HoverTool(renderers=[drawn_dots], tooltips=[
        ("when", "@when{%F %H:%M}"), (shown.label, f"@{{{y}}}{{0.000}}"), ("machine", "@machine"),
        ("TensorFlow", "@tensorflow"), ("verdict", "@verdict"), ("why", "@reason"),
        ("flagged", "@flagged")], formatters={"@when": "datetime"}))
    if changes["when"]:
        count = len(changes["when"])
        marks = ColumnDataSource({**changes, "when": _ms(changes["when"]),
                                  "bottom": [lowest * 0.95] * count,
                                  "top": [highest * 1.02] * count})
        marked: list[Any] = [
            plot.segment(x0="when", x1="when", y0="bottom", y1="top", source=marks,
                         line_color="colour", line_dash="dashed"),
            plot.text(x="when", y="bottom", text="text", source=marks, text_color="colour",
                      text_font_size="7pt", angle=1.5708, x_offset=-4)]
        for mark in marked:
            mark.nonselection_glyph = mark.muted_glyph = None
    if failures:
        crosses = plot.scatter(
            x="when", y="y", marker="x", size=11, color="#c44e52", line_width=2,
            legend_label="failed", source=ColumnDataSource({
                "when": [f.when for f in failures], "y": [lowest * 0.9] * len(failures),
                "cause": [f.cause for f in failures],
                "message": [f.message[:200] for f in failures],
                "machine": [f.machine_key for f in failures]}))
        plot.add_tools(HoverTool(renderers=[crosses], tooltips=[
            ("when", "@when{%F %H:%M}"), ("failed", "@cause"), ("machine", "@machine"),
            ("", "@message")], formatters={"@when": "datetime"}))
    return plot


def ab_session(title: str, cases: Sequence[ABCase]) -> Any:
    """Each case's B/A with its interval, coloured by verdict, against 1 (no change)."""
    judged = [c for c in cases if c.ratio is not None]
    names = [c.case_id for c in judged] or ["(no case has pairs)"]
    plot = figure(y_range=FactorRange(factors=list(reversed(names))),
                  height=90 + 26 * len(names), sizing_mode="stretch_width", tools=TOOLS,
                  title=Title(text=title, text_font_size="9pt"), x_axis_label="B/A")
    source = ColumnDataSource({
        "case": [c.case_id for c in judged], "ratio": [c.ratio for c in judged],
        "low": [c.low if c.low is not None else c.ratio for c in judged],
        "high": [c.high if c.high is not None else c.ratio for c in judged],
        "verdict": [c.verdict for c in judged], "pairs": [c.pairs for c in judged],
        "colour": [AB_COLOURS.get(c.verdict, "#c44e52") for c in judged]})
    plot.add_layout(Whisker(source=source, base="case", lower="low", upper="high",
                            dimension="width", line_color="#555555"))
    dots = plot.scatter(x="ratio", y="case", source=source, color="colour", size=9)
    plot.add_layout(Span(location=1.0, dimension="height", line_color="#333333",
                         line_dash="dotted"))
    plot.add_tools(HoverTool(renderers=[dots], tooltips=[
        ("case", "@case"), ("B/A", "@ratio{0.000}"), ("interval", "[@low{0.000}, @high{0.000}]"),
        ("verdict", "@verdict"), ("pairs", "@pairs")]))
    return plot
