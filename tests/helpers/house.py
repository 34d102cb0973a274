"""The harness's files as the layout tests read them: its modules and the front page's commands."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, cast

import pytest

from tests.helpers.suites import REPO
from tfperf.options import perf as options

PACKAGE = REPO / "tfperf"
WORKER_SIDE = PACKAGE / "worker"
# Run by path in an environment of its own, which installs what they import, never imported by
# the harness: Otava's detector (tfperf/changes/otava_env.py installs apache-otava there).
OWN_ENVIRONMENT = frozenset({PACKAGE / "changes" / "in_otava.py"})


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def host_modules() -> list[Path]:
    """Every module of the pytest side: the whole package but tfperf/worker/ and the modules
    that run in an environment of their own."""
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if WORKER_SIDE not in p.parents and p not in OWN_ENVIRONMENT)


def front_page_selections() -> list[list[str]]:
    """The pytest arguments of every `./run perf` command the front page shows."""
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(c)[2:] for c in commands if c.startswith("./run perf ")]


class _Recorder:
    """Stands in for pytest's parser: keeps the names of the options the harness adds."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def getgroup(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.names.extend(names)


def perf_options() -> list[str]:
    """Every option name the harness adds to pytest."""
    recorder = _Recorder()
    options.add_options(cast(pytest.Parser, recorder))
    return recorder.names
