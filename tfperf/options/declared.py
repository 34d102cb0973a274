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

    def getgroup(self, *args: Any, **kwargs: Any) -> _Group:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        # No default: an option that was not given stays out of the parsed namespace.
        kwargs.pop("default", None)
        self.parser.add_argument(*names, **kwargs)


def given(pytest_args: Sequence[str]) -> list[str]:
    """The --perf-* options that `pytest_args` set, by their names, in declaration order."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False,
                                     argument_default=argparse.SUPPRESS)
    perf.add_options(cast(pytest.Parser, _Group(parser)))
    found, _ = parser.parse_known_args(list(pytest_args))
    return [action.option_strings[0] for action in parser._actions
            if action.dest in vars(found)]
