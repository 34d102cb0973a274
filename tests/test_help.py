"""A newcomer's first commands: every entry point's --help exits 0 and lists every option."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from tfperf import gate_command, options, refresh

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


def _help(*command: str) -> str:
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("command", "expected"), [
    ((sys.executable, "-m", "pytest", "--help"), _perf_options),
    ((sys.executable, "-m", "tfperf.gate_command", "--help"),
     lambda: _argparse_options(gate_command._parser())),
    ((sys.executable, "-m", "tfperf.refresh", "--help"),
     lambda: _argparse_options(refresh._parser())),
], ids=["pytest", "tfperf-gate", "tfperf-refresh"])
def test_help_exits_0_and_lists_every_option(command: tuple[str, ...], expected: Any) -> None:
    text = _help(*command)
    names = expected()
    assert len(names) > 5, names
    missing = [name for name in names if name not in text]
    assert not missing, f"--help does not list {missing}"
