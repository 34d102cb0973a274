"""The --perf-* options read outside pytest, with the declarations pytest itself uses: a command
that runs sessions of the suite (tfperf-bisect) finds which options a user's pytest arguments
set, in whichever spelling (`--perf-ab-floor=5` or `--perf-ab-floor 5`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, cast

import pytest

from tfperf.options import perf


class _Group:
    """Stands in for pytest's parser and its option group: each option goes to argparse."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser
        self.names: dict[str, str] = {}  # each option's dest, to the name it is known by

    def getgroup(self, *args: Any, **kwargs: Any) -> _Group:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        # No default: an option that was not given stays out of the parsed namespace.
        kwargs.pop("default", None)
        self.names[self.parser.add_argument(*names, **kwargs).dest] = names[0]


def given(pytest_args: Sequence[str]) -> list[str]:
    """The --perf-* options that `pytest_args` set, by their names, in declaration order. One
    that pytest could not read either (a value missing) raises ValueError with one line."""
    # As pytest's own parser: no abbreviations. An error is raised, not printed with a usage.
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False,
                                     argument_default=argparse.SUPPRESS, exit_on_error=False)
    group = _Group(parser)
    perf.add_options(cast(pytest.Parser, group))
    try:
        found, _ = parser.parse_known_args(list(pytest_args))
    except argparse.ArgumentError as error:
        raise ValueError(str(error)) from None
    return [name for dest, name in group.names.items() if dest in vars(found)]
