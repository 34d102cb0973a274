"""A newcomer's first commands: every entry point's --help exits 0 and lists every option."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from tfperf.ab import tfperf_ab as ab_command
from tfperf.bisect import tfperf_bisect as bisect_command
from tfperf.gate import refresh
from tfperf.gate import tfperf_gate as gate_command
from tfperf.options import perf as options
from tfperf.store_command import tfperf_store as store_command

REPO = Path(__file__).resolve().parents[1]


class _Recorder:
    """Stands in for pytest's parser: keeps the names of the options the harness adds."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def getgroup(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.names.extend(names)


def _perf_options() -> list[str]:
    recorder = _Recorder()
    options.add_options(cast(pytest.Parser, recorder))
    return recorder.names


def _argparse_options(parser: argparse.ArgumentParser) -> list[str]:
    return [name for action in parser._actions for name in action.option_strings
            if action.help != argparse.SUPPRESS]


def _verb(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser:
    (verbs,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    found: argparse.ArgumentParser = verbs.choices[verb]
    return found


def _help(*command: str) -> str:
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("command", "expected"), [
    ((sys.executable, "-m", "pytest", "--help"), _perf_options),
    ((sys.executable, "-m", "tfperf.gate.tfperf_gate", "--help"),
     lambda: _argparse_options(gate_command._parser())),
    ((sys.executable, "-m", "tfperf.gate.refresh", "--help"),
     lambda: _argparse_options(refresh._parser())),
    ((sys.executable, "-m", "tfperf.ab.tfperf_ab", "--help"),
     lambda: _argparse_options(ab_command._parser())),
    ((sys.executable, "-m", "tfperf.store_command.tfperf_store", "--help"),
     lambda: [*_argparse_options(store_command._parser()), "import", "info", "upgrade"]),
    ((sys.executable, "-m", "tfperf.bisect.tfperf_bisect", "--help"),
     lambda: [*_argparse_options(bisect_command._parser()), "releases", "nightlies", "specs",
              "commits", "after-ab", "issue"]),
    *(((sys.executable, "-m", "tfperf.bisect.tfperf_bisect", verb, "--help"),
       lambda verb=verb: _argparse_options(_verb(bisect_command._parser(), verb)))
      for verb in ("releases", "nightlies", "specs", "commits", "after-ab", "issue")),
], ids=["pytest", "tfperf-gate", "tfperf-refresh", "tfperf-ab", "tfperf-store", "tfperf-bisect",
        *(f"tfperf-bisect-{verb}" for verb in ("releases", "nightlies", "specs", "commits",
                                                "after-ab", "issue"))])
def test_help_exits_0_and_lists_every_option(command: tuple[str, ...], expected: Any) -> None:
    text = _help(*command)
    names = expected()
    assert len(names) >= 3, names  # --help and the command's own
    missing = [name for name in names if name not in text]
    assert not missing, f"--help does not list {missing}"


def test_the_options_reference_lists_exactly_the_options_pytest_has() -> None:
    """docs/options.md cannot drift from the code: the same --perf-* names both ways."""
    documented = set(re.findall(r"--perf-[a-z-]+", (REPO / "docs" / "options.md").read_text()))
    assert documented == {name for name in _perf_options() if name.startswith("--perf-")}
