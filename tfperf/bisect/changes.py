"""A change point answered: each worse change point of a case's series (tfperf.changes.detect)
becomes a bisection of the builds between its two sides, following the finding its figure is
(speed, peak memory, compile time, numerics). Its confirmation is the A/B of the two builds: a
change point the A/B does not confirm ends there and is said to be not confirmed, never a
regression; one it confirms is placed at its culprit, with its report kept in the store.

The builds are named as the package index names them: a nightly's TensorFlow (2.22.0-dev20260509)
is `tf-nightly==2.22.0.dev20260509`, and the nightlies of the days between two nightlies are
the candidates between them; a release is `PACKAGE==VERSION`. Where two builds differ only in
their Keras, Keras is what is bisected, beside that TensorFlow.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from packaging.requirements import Requirement
from packaging.version import Version

from tfperf.bisect import bisection
from tfperf.bisect.bisection import Range, Request
from tfperf.bisect.followed import floor_of
from tfperf.changes.detect import ChangePoint
from tfperf.ground.project import Project
from tfperf.ground.vocabulary import END_FAILED, OUT_OF_TIME, Followed
from tfperf.options.ab_settings import ABSettings
from tfperf.storage.build_series import BuildPoint, version_of
from tfperf.storage.results_store import BisectRow

FINDING_OF: dict[str, Followed] = {"examples_per_sec": "slower", "peak_memory_bytes": "memory",
                                   "compile_cpu_s": "compile", "loss_last": "numerics"}
_NIGHTLY = re.compile(r"\.dev(\d{8})\d*$")


class NotBisectable(ValueError):
    """A change point whose builds cannot be named on the package index: one line."""


def _nightly(release_package: str) -> str:
    """The nightly of a release package, with its extras: tensorflow[and-cuda]'s is
    tf-nightly[and-cuda] (a GPU runner's), tensorflow-cpu's tf-nightly."""
    extras = sorted(Requirement(release_package).extras)
    return "tf-nightly" + (f"[{','.join(extras)}]" if extras else "")


def _spec(package: str, version: str) -> str:
    return f"{package}=={Version(version)}"


def _date(version: str) -> str | None:
    found = _NIGHTLY.search(str(Version(version)))
    return datetime.datetime.strptime(found.group(1), "%Y%m%d").date().isoformat() \
        if found else None


def ends(point: ChangePoint, margin: int) -> tuple[BuildPoint, BuildPoint]:
    """The builds the bisection searches between: `margin` builds of the series beyond the
    change point on either side, over builds of the same kind (nightlies, or releases, and
    with a Keras of their own or not), so that a step the detector placed a few builds off is
    still inside. Otava places a caught step within 3 builds of it
    (benchmarks/results/change_points.md); the A/B then places it exactly."""
    builds = list(point.series.builds)
    if point.before not in builds or point.after not in builds:
        return point.before, point.after

    keras_only = point.before.tensorflow == point.after.tensorflow

    def alike(build: BuildPoint, like: BuildPoint) -> bool:
        """Of the point's kind: a nightly or a release as it is, a Keras of its own or not, and
        beside the same TensorFlow where only Keras changed."""
        if version_of(build.tensorflow) is None or version_of(like.tensorflow) is None:
            return False
        return (_date(build.tensorflow) is None) == (_date(like.tensorflow) is None) and \
            bool(build.keras) == bool(like.keras) and \
            (not keras_only or build.tensorflow == like.tensorflow)

    low, high = builds.index(point.before), builds.index(point.after)
    for _ in range(margin):
        if low > 0 and alike(builds[low - 1], point.before):
            low -= 1
        if high < len(builds) - 1 and alike(builds[high + 1], point.after):
            high += 1
    return builds[low], builds[high]


def candidates(point: ChangePoint, tensorflow_package: str, margin: int = 0) -> Range:
    """The builds between the change point's two sides (widened by `margin` builds of the
    series on either side: ends()), as a bisection's range."""
    before, after = ends(point, margin)
    for build in (before, after):
        if not build.tensorflow:
            raise NotBisectable(f"the build {build.label} has no TensorFlow version to install")
    if before.tensorflow != after.tensorflow:
        return _range(_nightly(tensorflow_package), tensorflow_package, before.tensorflow,
                      after.tensorflow)
    if not (before.keras and after.keras):
        raise NotBisectable(f"{before.label} and {after.label} differ in their commit alone: "
                            "no package index names them; bisect their commits")
    tensorflow = _spec(_nightly(tensorflow_package) if _date(before.tensorflow)
                       else tensorflow_package,
                       before.tensorflow)
    return _range("keras-nightly", "keras", before.keras, after.keras, beside=tensorflow)


def _range(nightly: str, released: str, low: str, high: str, beside: str | None = None
           ) -> Range:
    """The nightlies of the days between two nightlies, the releases between two releases, or
    else the two builds alone."""
    first, last = _date(low), _date(high)
    ends = [_spec(nightly if _date(v) else released, v) for v in (low, high)]
    if first and last:
        return Range("nightlies", nightly, f"{first}..{last}", good=ends[0], bad=ends[1],
                     beside=beside)
    if not (first or last):
        return Range("releases", released, f"{Version(low)}..{Version(high)}", beside=beside)
    if beside is not None:
        raise NotBisectable(f"{low} and {high} are a release and a nightly of {released}: "
                            "bisect them with tfperf-bisect specs")
    return Range("specs", specs=tuple(ends))


def request(point: ChangePoint, base: Request, tensorflow_package: str, margin: int = 0
            ) -> Request:
    """The bisection that answers the change point, with `base`'s pytest arguments and
    settings, following its figure's finding at that finding's default floor."""
    finding = FINDING_OF[point.figure.name]
    floor = base.floor if finding == base.followed else floor_of(finding, ABSettings())
    return replace(base, range=candidates(point, tensorflow_package, margin), followed=finding,
                   floor=floor, change_point=point.document())


def key(point: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """What names a change point across nights (ChangePoint.document()): its figure, machine
    kind and the builds on either side, so that one answered is not bisected again."""
    return (str(point["figure"]), str(point.get("machine_kind", "")), str(point["before"]),
            str(point["after"]))


def answered(bisects: Iterable[BisectRow]) -> dict[tuple[str, str, str, str], str]:
    """The change points kept bisections answered, each with the bisection's id. One whose
    bisection could not measure an end or ran out of time answered nothing: it is asked again."""
    return {key(b.document["change_point"]): b.id for b in bisects
            if b.document.get("change_point") and b.outcome not in (END_FAILED, OUT_OF_TIME)}


def _answered_by(point: ChangePoint, before: Mapping[tuple[str, str, str, str], str],
                 margin: int) -> str | None:
    """The bisection that answered this change point: one of the same figure and machine kind
    whose point lies within `margin` builds of it in today's series (the detector moves its
    estimate by a build or so as builds come; the bisection searched that far)."""
    labels = [b.label for b in point.series.builds]
    if point.before.label not in labels:
        return None
    here = labels.index(point.before.label)  # the same point kept is at distance 0
    for (figure, kind, earlier, _), bisect_id in before.items():
        if (figure, kind) == (point.figure.name, point.series.machine_kind) and \
                earlier in labels and abs(labels.index(earlier) - here) <= margin:
            return bisect_id
    return None


def answer(points: Sequence[ChangePoint], base: Request, tensorflow_package: str,
           layout: Project, say: Callable[[str], None],
           before: Mapping[tuple[str, str, str, str], str] | None = None, margin: int = 0
           ) -> tuple[int, list[str]]:
    """Bisect each worse change point (a better one is not a finding) that no bisection
    answered `before`; the exit status (0: every one answered, 1: one not bisectable) and a
    line each: placed at its culprit, or not confirmed by its A/B (never a regression), or
    answered before, or why it cannot be bisected."""
    said, status = [], 0
    for point in (p for p in points if p.worse):
        earlier = _answered_by(point, before or {}, margin)
        if earlier is not None:
            said.append(f"answered before: {point.describe()}: bisection {earlier}")
            continue
        say(f"change point: {point.describe()}")
        try:
            asked = request(point, base, tensorflow_package, margin)
            _, doc = bisection.answered(asked, layout, say)
        except bisection.Stopped as stop:
            said.append(f"not confirmed: {point.describe()}: {stop}")
            continue
        except (NotBisectable, bisection.BadRequest) as error:
            said.append(f"not bisected: {point.describe()}: {error}")
            status = 1
            continue
        labels = [str(c["label"]) for c in doc["candidates"]]
        confirm = doc["steps"][0]
        placed = (f"culprit {labels[doc['culprit']]}, last good {labels[doc['good']]}"
                  if doc["culprit"] is not None else f"{doc['outcome']} between "
                  f"{labels[doc['good']]} and {labels[doc['bad']]}")
        said.append(f"confirmed: {point.describe()}: {confirm['verdict']}, B/A "
                    f"{confirm['ratio']:.3f} [{confirm['low']:.3f}, {confirm['high']:.3f}]; "
                    f"{placed} (bisection {doc['id']})")
    return status, said
