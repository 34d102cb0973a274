"""A change point answered: the builds on either side named as the package index names them,
the candidates between them, and the finding its figure is; what cannot be bisected is one
line. The bisection itself: test_bisect.py; the change points: tests/real/test_change_points.py."""

from __future__ import annotations

import datetime

import pytest

from tfperf.bisect import changes
from tfperf.bisect.bisection import Range, Request
from tfperf.changes.detect import BY_NAME, ChangePoint
from tfperf.storage.build_series import BuildPoint, Series
from tfperf.storage.results_store import BisectRow

WHEN = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
BASE = Request(Range("specs"), ("-k", "case"), None, 0.015, None, (32, 2432), 384,  # type: ignore[arg-type]
               False, None, None, None, None)


def _point(figure: str, before: tuple[str, str], after: tuple[str, str],
           change: float = 0.84) -> ChangePoint:
    a, b = (BuildPoint(tf, "", keras, WHEN) for tf, keras in (before, after))
    return ChangePoint(BY_NAME[figure], Series("case", "kind", "key", (a, b)), a, b, change,
                       1e-9)


def test_two_nightlies_are_bisected_over_the_nightlies_of_the_days_between() -> None:
    point = _point("peak_memory_bytes", ("2.22.0-dev20260529", ""), ("2.22.0-dev20260616", ""))
    asked = changes.request(point, BASE, "tensorflow-cpu")
    assert asked.range == Range("nightlies", "tf-nightly", "2026-05-29..2026-06-16",
                                good="tf-nightly==2.22.0.dev20260529",
                                bad="tf-nightly==2.22.0.dev20260616")
    assert (asked.followed, asked.floor, asked.pytest_args) == ("memory", 0.10, ("-k", "case"))
    # A GPU runner's release package names the nightly with the same extras.
    assert changes.request(point, BASE, "tensorflow[and-cuda]").range.good == \
        "tf-nightly[and-cuda]==2.22.0.dev20260529"
    # Its report keeps the change point, for the dashboard's mark on the series' plot.
    assert asked.change_point is not None and (asked.change_point["figure"],
                                               asked.change_point["after"]) == (
        "peak_memory_bytes", "2.22.0-dev20260616")


def test_releases_are_bisected_over_the_releases_between_and_a_mix_is_the_two_ends() -> None:
    speed = _point("examples_per_sec", ("2.21.0", ""), ("2.22.0rc0", ""), change=-0.02)
    assert changes.request(speed, BASE, "tensorflow-cpu").range == Range(
        "releases", "tensorflow-cpu", "2.21.0..2.22.0rc0")
    assert changes.request(speed, BASE, "tensorflow-cpu").followed == "slower"
    mixed = _point("compile_cpu_s", ("2.21.0", ""), ("2.22.0-dev20260509", ""))
    assert changes.request(mixed, BASE, "tensorflow").range == Range(
        "specs", specs=("tensorflow==2.21.0", "tf-nightly==2.22.0.dev20260509"))


def test_one_tensorflow_under_two_kerases_bisects_keras_beside_it() -> None:
    point = _point("loss_last", ("2.21.0", "3.15.0.dev2026060105"),
                   ("2.21.0", "3.16.0.dev2026070105"))
    asked = changes.request(point, BASE, "tensorflow-cpu")
    assert asked.range == Range("nightlies", "keras-nightly", "2026-06-01..2026-07-01",
                                good="keras-nightly==3.15.0.dev2026060105",
                                bad="keras-nightly==3.16.0.dev2026070105",
                                beside="tensorflow-cpu==2.21.0")
    assert (asked.followed, asked.floor) == ("numerics", 0.0)


def test_builds_no_index_names_are_one_line() -> None:
    same = _point("examples_per_sec", ("2.21.0", ""), ("2.21.0", ""), change=-0.05)
    with pytest.raises(changes.NotBisectable, match="differ in their commit alone"):
        changes.request(same, BASE, "tensorflow-cpu")
    unknown = _point("examples_per_sec", ("", ""), ("2.21.0", ""), change=-0.05)
    with pytest.raises(changes.NotBisectable, match="has no TensorFlow version to install"):
        changes.request(unknown, BASE, "tensorflow-cpu")
    assert not _point("examples_per_sec", ("2.21.0", ""), ("2.22.0", ""), change=0.05).worse


def test_a_change_point_a_kept_bisection_answered_is_not_bisected_again() -> None:
    # A night that follows tf-nightly asks every night: the same change point, answered once.
    point = _point("peak_memory_bytes", ("2.22.0-dev20260529", ""), ("2.22.0-dev20260616", ""))
    kept = BisectRow("bis1", WHEN, "key", "case", "tensorflow", "found", "x", "y",
                     {"change_point": point.document(), "steps": []})
    by_hand = BisectRow("bis2", WHEN, "key", "case", "tensorflow", "found", "x", "y", {})
    before = changes.answered([kept, by_hand])
    assert before == {("peak_memory_bytes", "kind", "2.22.0-dev20260529", "2.22.0-dev20260616"):
                      "bis1"}
    asked: list[str] = []
    status, said = changes.answer([point], BASE, "tensorflow-cpu", None,  # type: ignore[arg-type]
                                  asked.append, before)
    assert (status, asked) == (0, [])  # nothing run, nothing bisected
    assert said == [f"answered before: {point.describe()}: bisection bis1"]


def test_a_change_point_s_range_reaches_three_builds_beyond_it_over_builds_of_its_kind(
        ) -> None:
    # A nightly series whose detector placed the change between 06-04 and 06-05: the
    # bisection searches 06-01 to 06-08 (Otava places a caught step within 3 builds of it),
    # and never across the release before the nightlies.
    builds = [BuildPoint("2.21.0", "", "", WHEN)] + [
        BuildPoint(f"2.22.0-dev202606{day:02d}", "", "", WHEN) for day in range(1, 10)]
    series = Series("case", "kind", "key", tuple(builds))
    point = ChangePoint(BY_NAME["examples_per_sec"], series, builds[4], builds[5], -0.03, 1e-6)
    assert changes.request(point, BASE, "tensorflow-cpu", margin=3).range.span == \
        "2026-06-01..2026-06-08"
    assert changes.request(point, BASE, "tensorflow-cpu").range.span == "2026-06-04..2026-06-05"
    early = ChangePoint(BY_NAME["examples_per_sec"], series, builds[1], builds[2], -0.03, 1e-6)
    assert changes.request(early, BASE, "tensorflow-cpu", margin=3).range.good == \
        "tf-nightly==2.22.0.dev20260601"  # not 2.21.0: a release and a nightly cannot be halved


def test_a_point_the_detector_moved_by_a_build_is_still_answered_and_a_failed_answer_is_not(
        ) -> None:
    builds = [BuildPoint(f"2.22.0-dev202606{day:02d}", "", "", WHEN) for day in range(1, 10)]
    series = Series("case", "kind", "key", tuple(builds))
    yesterday = ChangePoint(BY_NAME["examples_per_sec"], series, builds[3], builds[4], -0.03,
                            1e-6)
    today = ChangePoint(BY_NAME["examples_per_sec"], series, builds[4], builds[5], -0.03, 1e-6)
    kept = BisectRow("bis1", WHEN, "key", "case", "tensorflow", "found", "x", "y",
                     {"change_point": yesterday.document(), "steps": []})
    failed = BisectRow("bis2", WHEN, "key", "case", "tensorflow", "end failed", None, None,
                       {"change_point": today.document(), "steps": []})
    assert list(changes.answered([failed]).values()) == []  # it measured nothing: ask again
    status, said = changes.answer([today], BASE, "tensorflow-cpu", None,  # type: ignore[arg-type]
                                  lambda line: None, changes.answered([kept, failed]), margin=3)
    assert (status, said) == (0, [f"answered before: {today.describe()}: bisection bis1"])


def test_a_keras_step_widens_over_kerases_beside_its_tensorflow_only() -> None:
    kerases = [("2.21.0", f"3.16.0.dev202606{day:02d}01") for day in range(1, 6)]
    builds = [BuildPoint("not a version", "", "", WHEN),
              BuildPoint("2.20.0", "", "3.16.0.dev2026053101", WHEN),
              *(BuildPoint(tf, "", keras, WHEN) for tf, keras in kerases)]
    series = Series("case", "kind", "key", tuple(builds))
    point = ChangePoint(BY_NAME["loss_last"], series, builds[2], builds[3], 0.05, 1e-6)
    asked = changes.request(point, BASE, "tensorflow-cpu", margin=3)
    assert (asked.range.package, asked.range.span) == ("keras-nightly", "2026-06-01..2026-06-05")
