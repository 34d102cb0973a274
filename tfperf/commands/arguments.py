"""The arguments several commands take, declared once: the results store, the project's folders,
and typed values (a percentage, pairs, a duration) parsed by the same functions as the --perf-*
options, so that a bad value gets the same one line wherever it is given."""

from __future__ import annotations

import argparse
import datetime
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tfperf.ground import project
from tfperf.ground.project import Project, ProjectError
from tfperf.options import values
from tfperf.options.plan import parse_budget
from tfperf.storage import database
from tfperf.storage.errors import StoreUnavailable
from tfperf.storage.results_store import ResultsStore

T = TypeVar("T")

# Where each folder a command reads is, in the project's layout.
FOLDERS = {"tests": "tests", "baselines": "baselines", "history": "results/history",
           "reports": "results/reports"}


def typed(option: str, parse: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse type from a value parser that raises ValueError naming `option`: argparse
    prints its line, after its own `argument OPTION:`."""
    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix(f"{option}: ")) from None
    return convert


def percent(option: str, below: float = 1.0) -> Callable[[str], float]:
    """A percentage (`5` or `5%`) above 0 and below `below` (a fraction), as a fraction."""
    return typed(option, lambda text: values.percent_below(option, text, below))


def positive_float(option: str) -> Callable[[str], float]:
    return typed(option, lambda text: values.positive_float(option, text))


def positive_int(option: str) -> Callable[[str], int]:
    return typed(option, lambda text: values.positive_int(option, text))


def pairs(option: str, least: int) -> Callable[[str], tuple[int, int]]:
    """MIN:MAX pairs, least <= MIN <= MAX."""
    return typed(option, lambda text: values.min_max(option, text, least))


def duration(option: str) -> Callable[[str], float]:
    """Seconds from 4h, 90m or 3600s."""
    def seconds(text: str) -> float:
        try:
            found = parse_budget(text)
        except ValueError:
            found = None
        if found is None:
            raise ValueError(f"{option}: {text!r} is not a duration like 4h, 90m or 3600s")
        return found
    return typed(option, seconds)


def days_ago(option: str) -> Callable[[str], str]:
    """A number of days like 180d, as the ISO time that many days before now (UTC)."""
    def moment(text: str) -> str:
        if not text.endswith("d") or not text[:-1].isdigit() or int(text[:-1]) < 1:
            raise ValueError(f"{option}: {text!r} is not a number of days like 180d")
        now = datetime.datetime.now(datetime.UTC)
        return (now - datetime.timedelta(days=int(text[:-1]))).isoformat()
    return typed(option, moment)


def add_store(parser: argparse.ArgumentParser, holds: str) -> None:
    parser.add_argument("--store", metavar="URL",
                        help=f"the results store: {holds} ({database.VALID}; default: "
                             f"${database.URL_ENV}, else {database.FILE_NAME} in the history "
                             "folder)")


def before_or_after(add: Callable[[argparse.ArgumentParser], None]
                    ) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """Options a command takes before its subcommand or after it, as a user may write either:
    the parent for the command's own parser (with the defaults), and the parent for each
    subcommand's, without defaults, so that a subcommand's default never replaces a value
    given before it (argparse copies a subcommand's whole namespace over the command's)."""
    before = argparse.ArgumentParser(add_help=False)
    after = argparse.ArgumentParser(add_help=False)
    add(before)
    add(after)
    for action in after._actions:  # not set_defaults: it would store SUPPRESS as a value
        action.default = argparse.SUPPRESS
    return before, after


def store_url(args: argparse.Namespace, history: Path, parser: argparse.ArgumentParser) -> str:
    """The store's URL (--store, else $TFPERF_STORE_URL, else the history folder's SQLite
    file), checked before any work: a URL that names no store exits with one line."""
    url = database.chosen_url(args.store, history)
    try:
        database.check_url(url)
    except StoreUnavailable as error:
        parser.exit(2, f"{parser.prog}: {error}\n")
    return url


def open_store(args: argparse.Namespace, history: Path, parser: argparse.ArgumentParser,
               create: bool) -> ResultsStore:
    """The store the arguments name, opened; one line and exit 2 where it cannot be. A command
    that only reads passes create=False: it says there is no store rather than make one."""
    url = store_url(args, history, parser)
    try:
        return ResultsStore.open(url, create)
    except StoreUnavailable as error:
        parser.exit(2, f"{parser.prog}: {error}\n")


def add_folders(parser: argparse.ArgumentParser, **what: str) -> None:
    """`--NAME DIR` for each folder a command reads (`what`: NAME=what it holds), by default
    the project's."""
    for name, holds in what.items():
        parser.add_argument(f"--{name}", type=Path,
                            help=f"{holds} (default: the project's {FOLDERS[name]}; "
                                 f"{project.LAYOUT})")


def fill_folders(args: argparse.Namespace, parser: argparse.ArgumentParser, *names: str
                 ) -> tuple[Project, set[str]]:
    """Each named folder not given on the command line taken from the project's layout; the
    layout, and the names that were given. A layout that cannot be read exits with one line."""
    try:
        layout = project.find()
    except ProjectError as error:
        parser.error(str(error))
    given = {name for name in names if getattr(args, name) is not None}
    for name in set(names) - given:
        setattr(args, name, getattr(layout, name))
    return layout, given
