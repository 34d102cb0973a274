"""A newcomer's first commands: every entry point's --help exits 0 and lists every option.

The console scripts' `main` runs in this process, as the installed script calls it (each run as
a Python of its own took 1-1.6 s, thirteen of them); that each script names that `main` is read
from the installed package's entry points. pytest's --help runs as a process of its own, so
that the plugin loads as a user's pytest loads it."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from types import ModuleType

import pytest

from tests.helpers import in_process
from tests.helpers.house import perf_options
from tests.helpers.suites import REPO
from tfperf.commands import tfperf_ab as ab_command
from tfperf.commands import tfperf_bisect as bisect_command
from tfperf.commands import tfperf_candidate as candidate_command
from tfperf.commands import tfperf_gate as gate_command
from tfperf.commands import tfperf_refresh as refresh
from tfperf.commands import tfperf_store as store_command

BISECT_VERBS = ("releases", "nightlies", "specs", "commits", "after-ab", "issue")


def _argparse_options(parser: argparse.ArgumentParser) -> list[str]:
    return [name for action in parser._actions for name in action.option_strings
            if action.help != argparse.SUPPRESS]


def _verb(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser:
    (verbs,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    found: argparse.ArgumentParser = verbs.choices[verb]
    return found


COMMANDS: list[tuple[str, ModuleType, tuple[str, ...], Callable[[], list[str]]]] = [
    ("tfperf-gate", gate_command, (), lambda: _argparse_options(gate_command._parser())),
    ("tfperf-refresh", refresh, (), lambda: _argparse_options(refresh._parser())),
    ("tfperf-ab", ab_command, (), lambda: _argparse_options(ab_command._parser())),
    ("tfperf-store", store_command, (),
     lambda: [*_argparse_options(store_command._parser()), "import", "info", "upgrade", "export",
              "load", "prune", "series"]),
    ("tfperf-bisect", bisect_command, (),
     lambda: [*_argparse_options(bisect_command._parser()), *BISECT_VERBS]),
    ("tfperf-candidate", candidate_command, (),
     lambda: _argparse_options(candidate_command._parser())),
    *((f"tfperf-bisect-{verb}", bisect_command, (verb,),
       lambda verb=verb: _argparse_options(_verb(bisect_command._parser(), verb)))
      for verb in BISECT_VERBS),
]


def _listed(text: str, names: list[str]) -> None:
    assert len(names) >= 3, names  # --help and the command's own
    missing = [name for name in names if name not in text]
    assert not missing, f"--help does not list {missing}"


@pytest.mark.parametrize(("module", "args", "expected"), [c[1:] for c in COMMANDS],
                         ids=[c[0] for c in COMMANDS])
def test_help_exits_0_and_lists_every_option(
        module: ModuleType, args: tuple[str, ...], expected: Callable[[], list[str]],
        capsys: pytest.CaptureFixture[str]) -> None:
    done = in_process.run(module.main, *args, "--help", capsys=capsys)
    assert done.code == 0, done.err
    _listed(done.out, expected())


def test_each_console_script_runs_its_command_s_main() -> None:
    scripts = {e.name: e.value for e in entry_points(group="console_scripts")
               if e.name.startswith("tfperf-")}
    for name, module, _, _ in COMMANDS:
        if not name.startswith("tfperf-bisect-"):
            assert scripts[name] == f"{module.__name__}:main", (name, scripts)


def test_pytest_help_lists_every_perf_option() -> None:
    done = subprocess.run((sys.executable, "-m", "pytest", "--help"), cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    _listed(done.stdout, perf_options())
