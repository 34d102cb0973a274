"""A console script run in the test's own process: its exit status and what it printed.

The commands that judge kept files (tfperf-ab, tfperf-gate, tfperf-refresh's listing and
rollback, tfperf-bisect's refusals) import no TensorFlow and start no process, so a test that
only reads their answer need not start a Python for each (2-4 s apiece on two busy cores)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str


def run(main: Callable[[Sequence[str]], int], *args: str,
        capsys: pytest.CaptureFixture[str]) -> Done:
    capsys.readouterr()  # what the test printed before is not the command's
    try:
        code = main(list(args))
    except SystemExit as stopped:  # argparse's refusals
        code = stopped.code if isinstance(stopped.code, int) else 1
    said = capsys.readouterr()
    return Done(code, said.out, said.err)
