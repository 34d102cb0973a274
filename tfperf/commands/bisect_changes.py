"""`tfperf-bisect changes CASE [CASE ...] -- PYTEST_ARGS`: each worse change point of each
case's series across builds (tfperf-store changes) confirmed by an A/B of the builds on either
side and placed by bisection (tfperf.bisect.changes); what the A/B does not confirm is said so,
and a change point a kept bisection answered already is not bisected again (a night that
follows tf-nightly asks every night)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from tfperf.bisect import bisection
from tfperf.bisect import changes as answers
from tfperf.changes import detect
from tfperf.changes.otava_env import OtavaUnavailable
from tfperf.commands import arguments, store_changes, store_series
from tfperf.ground.project import Project
from tfperf.storage.errors import StorageError


def add(kinds: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]  # type: ignore[type-arg]
        ) -> None:
    changes = kinds.add_parser("changes", parents=parents,
                               help="confirm and place each worse change point of a case's "
                                    "series across builds (tfperf-store changes)")
    changes.add_argument("case", nargs="+", help="a case id, as the reports name it; more "
                         "for more cases, each bisected in turn")
    changes.add_argument("--machine", metavar="KIND", help="one kind of machine (default: all)")
    changes.add_argument("--figure", action="append", default=[], metavar="NAME",
                         help=f"a figure, again for more (default: {', '.join(detect.BY_NAME)})")
    changes.add_argument("--margin", type=arguments.typed("--margin", _margin), default=3,
                         metavar="BUILDS",
                         help="builds of the series either side of a change point that the "
                              "bisection searches too (default: %(default)s, where Otava "
                              "places a caught step on nightly series; 0 on a sparse one)")
    changes.add_argument("--package", default="tensorflow-cpu",
                         help="the package a release is installed from (default: "
                              "%(default)s; tensorflow on a GPU runner)")


def _margin(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 30:
        raise ValueError(f"{value} is not 0-30")
    return value


def run(args: argparse.Namespace, parser: argparse.ArgumentParser, layout: Project,
        base: bisection.Request) -> int:
    try:
        figures = store_changes.figures(args.figure)
    except ValueError as error:
        parser.error(str(error))
    if len(args.case) > 1 and "-k" in base.pytest_args:
        parser.error("-k after -- selects one case: name one case, or several without -k")
    worst = 0
    for case in dict.fromkeys(args.case):
        store = arguments.open_store(args, layout.history, parser, create=False)
        try:
            series = store_series.chosen(store, case, args.machine)
            before = answers.answered(store.bisects(case))
            points = detect.detect(series, figures, layout.results / "cache")
        except (StorageError, OtavaUnavailable) as error:
            parser.exit(2, f"{parser.prog}: {error}\n")
        finally:
            store.close()
        print(f"{case}: {len(points)} change points, {sum(p.worse for p in points)} worse",
              flush=True)
        asked = base if "-k" in base.pytest_args else replace(  # the steps follow this case
            base, pytest_args=("-k", case, *base.pytest_args))
        status, said = answers.answer(points, asked, args.package, layout,
                                      lambda line: print(line, flush=True), before,
                                      args.margin)
        for line in said:
            print(line)
        worst = max(worst, status)
    return worst
