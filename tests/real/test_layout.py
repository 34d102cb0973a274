"""The house shows its plan, and keeps it: the pytest process never imports TensorFlow (the
worker side lives in tfperf/worker/ and nothing else imports it), no module needs scrolling,
the front page is short and its commands select cases, and the harness installs as a pytest
plugin that runs the suite in another repository."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.house import PACKAGE, front_page_selections, host_modules, module_name
from tests.helpers.suites import REPO, TEST_WORKLOADS
from tfperf.cases import catalog
from tfperf.workload import discover


def _heavy_imports(modules: list[str]) -> str:
    """TensorFlow and Keras, if importing the modules in a fresh interpreter loaded them."""
    probe = ("import importlib, sys\n"
             f"for name in {modules!r}:\n"
             "    importlib.import_module(name)\n"
             "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_the_pytest_process_never_imports_tensorflow() -> None:
    """Every host module, the plugin first, imported in a fresh interpreter."""
    # Alembic's migration scripts run inside its migration context only (tfperf.storage.database
    # runs them); their imports are checked by the static test above.
    migrations = PACKAGE / "storage" / "migrations"
    modules = ["tfperf.plugin", *(module_name(p) for p in host_modules()
                                  if p == migrations / "__init__.py" or migrations not in p.parents)]
    assert _heavy_imports(modules) == "[]"


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                          cwd=root, capture_output=True, text=True, timeout=120)


def test_the_layers_hold_and_an_import_back_up_breaks_them(tmp_path: Path) -> None:
    """pyproject.toml's layers are kept by the code, and a copy of it with one import from a
    lower layer back up to a higher one (the cases to the plan) fails, naming that import."""
    assert _lint_imports(REPO).returncode == 0
    shutil.copytree(PACKAGE, tmp_path / "tfperf", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    with (tmp_path / "tfperf" / "cases" / "matrix.py").open("a") as module:
        module.write("from tfperf.plan import budget  # noqa\n")
    done = _lint_imports(tmp_path)
    assert done.returncode != 0
    assert "tfperf.cases.matrix -> tfperf.plan.budget" in done.stdout, done.stdout



@pytest.fixture(scope="module")
def front_page_collections() -> dict[str, dict[str, object]]:
    """Every front page selection collected, all in one fresh process (tests/helpers/
    collect_many.py): each selection's exit code and output, by its arguments."""
    selections = front_page_selections()
    done = subprocess.run([sys.executable, "-m", "tests.helpers.collect_many",
                           json.dumps(selections)], cwd=REPO, capture_output=True, text=True,
                          timeout=600, check=True)
    return {" ".join(run["args"]): run for run in json.loads(done.stdout)}


@pytest.mark.parametrize("args", front_page_selections(), ids=" ".join)
def test_every_front_page_selection_selects_cases(
        args: list[str], front_page_collections: dict[str, dict[str, object]]) -> None:
    done = front_page_collections[" ".join(args)]
    out = str(done["out"])
    assert done["code"] == 0, out
    collected = re.search(r"(\d+)(?:/\d+)? tests? collected", out)
    assert collected and int(collected.group(1)) > 0, out


def _project(path: Path) -> Path:
    """Another team's repository: a folder of workloads, no conftest.py, no pytest.ini."""
    folder = path / "my_workloads"
    folder.mkdir()
    for name in ("_tiny.py", "tinycnn.py"):
        shutil.copy(TEST_WORKLOADS / name, folder)
    return path


def test_the_installed_plugin_runs_the_suite_in_another_repository(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert not list(project.rglob("conftest.py"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "tfperf.suite",
         "--perf-workloads=my_workloads", "-k",
         "tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic",
         "--perf-rounds=2", "--perf-warmup-rounds=1", "--perf-steps-per-round=5", "-p",
         "no:cacheprovider"], cwd=project, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 no_baseline" in done.stdout, done.stdout
    assert "tfperf: smoke tier on" in done.stdout
    assert list((project / ".perf-results" / "history").rglob("*.json"))


def test_the_installed_plugin_stays_out_of_other_test_sessions(tmp_path: Path) -> None:
    (tmp_path / "test_other.py").write_text("def test_other():\n    assert True\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    # Listed among the plugins, and nothing more: no summary of its own, no results folder.
    assert "1 passed" in done.stdout and "tfperf:" not in done.stdout, done.stdout
    assert not (tmp_path / ".perf-results").exists()


def test_the_fast_lane_imports_no_tensorflow() -> None:
    """Every fast and statistics test module, imported in a fresh interpreter: the whole run
    imports TensorFlow for the real lane, so the pure lanes' own guard cannot see it there."""
    modules = [module_name(p) for lane in ("fast", "statistics")
               for p in sorted((REPO / "tests" / lane).glob("test_*.py"))]
    assert len(modules) >= 21 and _heavy_imports(modules) == "[]"


def test_the_package_installs_without_its_dev_extras_and_collects_a_case(tmp_path: Path) -> None:
    """Every runtime import is declared. A fresh environment gets tfperf and its pinned
    runtime dependencies only: no dev extras and no TensorFlow, which the pytest process never
    imports. There `pytest --help` lists the perf options and the suite collects a case. (Its
    workload catalog, which a process with TensorFlow reads, is the one this process read,
    kept under the fresh environment's own key as a worker there would keep it.)"""
    uv = Path(sys.executable).parent / "uv"
    clean = tmp_path / "clean"
    python = clean / "bin" / "python"
    # The machine's settings (its index, its certificates, uv's cache), a home of its own.
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME":
           os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))}
    for command in ([str(uv), "venv", "--quiet", "--python", sys.executable, str(clean)],
                    [str(uv), "pip", "install", "--quiet", "--python", str(python), "-c",
                     str(REPO / "constraints" / "cpu.txt"), str(REPO)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    installed = subprocess.run([str(uv), "pip", "freeze", "--python", str(python)],
                               capture_output=True, text=True, timeout=120, env=env).stdout
    assert "sqlalchemy==" in installed.lower() and "keras==" in installed
    assert not re.search(r"^(tensorflow|ruff|mypy|pytest-xdist|playwright)", installed, re.M)
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pytest.ini", "conftest.py"):
        shutil.copy(REPO / name, project / name)
    shutil.copytree(REPO / "perf", project / "perf", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "workloads", project / "workloads",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    read = [catalog.info_json(i) for i in discover(project / "workloads").values()]
    keep = ("import json, sys; from pathlib import Path; from tfperf.cases import catalog_cache; "
            "catalog_cache.keep(Path(sys.argv[1]), json.loads(sys.stdin.read()))")
    subprocess.run([str(python), "-c", keep, str(project / "workloads")], input=json.dumps(read),
                   text=True, timeout=120, env=env, check=True, cwd=tmp_path)
    help_text = subprocess.run([str(python), "-m", "pytest", "--help"], cwd=project, env=env,
                               capture_output=True, text=True, timeout=300)
    assert help_text.returncode == 0 and "--perf-tier" in help_text.stdout, help_text.stderr
    case = "resnet20-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"
    collected = subprocess.run([str(python), "-m", "pytest", "perf/", "--collect-only", "-q",
                                "-p", "no:cacheprovider", "-k", case], cwd=project, env=env,
                               capture_output=True, text=True, timeout=300)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert f"test_training[{case}]" in collected.stdout and "1/" in collected.stdout, \
        collected.stdout
