"""A newcomer's first commands: every entry point's --help exits 0 and lists every option."""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

import pytest

from tests.helpers.house import perf_options
from tests.helpers.suites import REPO
from tfperf.commands import tfperf_ab as ab_command
from tfperf.commands import tfperf_bisect as bisect_command
from tfperf.commands import tfperf_candidate as candidate_command
from tfperf.commands import tfperf_gate as gate_command
from tfperf.commands import tfperf_refresh as refresh
from tfperf.commands import tfperf_store as store_command


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
    ((sys.executable, "-m", "pytest", "--help"), perf_options),
    ((sys.executable, "-m", "tfperf.commands.tfperf_gate", "--help"),
     lambda: _argparse_options(gate_command._parser())),
    ((sys.executable, "-m", "tfperf.commands.tfperf_refresh", "--help"),
     lambda: _argparse_options(refresh._parser())),
    ((sys.executable, "-m", "tfperf.commands.tfperf_ab", "--help"),
     lambda: _argparse_options(ab_command._parser())),
    ((sys.executable, "-m", "tfperf.commands.tfperf_store", "--help"),
     lambda: [*_argparse_options(store_command._parser()), "import", "info", "upgrade",
              "export", "load", "prune"]),
    ((sys.executable, "-m", "tfperf.commands.tfperf_bisect", "--help"),
     lambda: [*_argparse_options(bisect_command._parser()), "releases", "nightlies", "specs",
              "commits", "after-ab", "issue"]),
    ((sys.executable, "-m", "tfperf.commands.tfperf_candidate", "--help"),
     lambda: _argparse_options(candidate_command._parser())),
    *(((sys.executable, "-m", "tfperf.commands.tfperf_bisect", verb, "--help"),
       lambda verb=verb: _argparse_options(_verb(bisect_command._parser(), verb)))
      for verb in ("releases", "nightlies", "specs", "commits", "after-ab", "issue")),
], ids=["pytest", "tfperf-gate", "tfperf-refresh", "tfperf-ab", "tfperf-store", "tfperf-bisect",
        "tfperf-candidate", *(f"tfperf-bisect-{verb}" for verb in (
            "releases", "nightlies", "specs", "commits", "after-ab", "issue"))])
def test_help_exits_0_and_lists_every_option(command: tuple[str, ...], expected: Any) -> None:
    text = _help(*command)
    names = expected()
    assert len(names) >= 3, names  # --help and the command's own
    missing = [name for name in names if name not in text]
    assert not missing, f"--help does not list {missing}"
