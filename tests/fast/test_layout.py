"""The house shows its plan, and keeps it: the pytest process never imports TensorFlow (the
worker side lives in tfperf/worker/ and nothing else imports it), no module needs scrolling,
the front page is short and its commands select cases, and the harness installs as a pytest
plugin that runs the suite in another repository."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.helpers.house import (
    OWN_ENVIRONMENT,
    PACKAGE,
    front_page_selections,
    host_modules,
    module_name,
)
from tests.helpers.suites import REPO

MAX_LINES = 300
FRONT_PAGE_BYTES = 12_000



def _imports(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_host_modules_import_nothing_from_the_worker_side() -> None:
    crossing = {
        module_name(path): sorted(m for m in _imports(path)
                              if m.split(".")[0] in ("tensorflow", "keras")
                              or m == "tfperf.worker" or m.startswith("tfperf.worker."))
        for path in host_modules()}
    assert not {name: found for name, found in crossing.items() if found}


def test_no_module_needs_scrolling() -> None:
    long = {module_name(p): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long


def test_no_two_modules_share_a_name() -> None:
    """A module's name says what it does, once: no two report.py or case.py to tell apart."""
    names = [p.name for p in PACKAGE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_the_front_page_is_short() -> None:
    assert len((REPO / "README.md").read_bytes()) < FRONT_PAGE_BYTES



def test_the_front_page_shows_selections() -> None:
    assert len(front_page_selections()) >= 3


def test_the_fast_lane_starts_no_process() -> None:
    with pytest.raises(RuntimeError, match="the fast lane starts no process"):
        subprocess.run(["true"], check=False)


def test_the_fast_lane_imports_no_tensorflow_while_it_runs() -> None:
    if "tensorflow" in sys.modules:
        pytest.skip("the whole run: the real lane imported TensorFlow before this lane ran")
    with pytest.raises(ImportError, match="the fast lane imports no tensorflow"):
        importlib.import_module("tensorflow")


def test_no_module_imports_itself_round_a_circle() -> None:
    """No import chain leads back to where it started, type-checking imports included (the
    duet and its pool once imported each other)."""
    graph = grimp.build_graph("tfperf", cache_dir=None)
    circles = [(module, imported) for module in sorted(graph.modules)
               for imported in sorted(graph.find_modules_directly_imported_by(module))
               if graph.find_shortest_chain(importer=imported, imported=module)]
    assert circles == []


def test_every_package_the_harness_imports_is_one_it_declares() -> None:
    """A package the harness imports arrives because pyproject.toml asks for it, not because
    another package happens to (rich came with keras and import-linter, undeclared, once).
    The worker's TensorFlow and Keras come with the `cpu` or `cuda` extra, which every install
    names."""
    import importlib.metadata
    import re
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    def name(requirement: str) -> str:
        return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    declared = {name(r) for r in project["dependencies"]}
    declared |= {name(r) for extra in ("cpu", "cuda")
                 for r in project["optional-dependencies"][extra]}
    declared |= {"keras"}  # TensorFlow's own dependency, the one the worker's models use
    distributions = importlib.metadata.packages_distributions()
    undeclared: dict[str, str] = {}
    for path in set(PACKAGE.rglob("*.py")) - OWN_ENVIRONMENT:
        for module in _imports(path):
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or top == "tfperf":
                continue
            names = {d.lower().replace("_", "-") for d in distributions.get(top, [top])}
            if not names & declared and not any(n.startswith("tensorflow") for n in names):
                undeclared.setdefault(top, str(path.relative_to(REPO)))
    assert undeclared == {}, undeclared
