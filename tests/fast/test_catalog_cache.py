"""The workload catalog kept by what it was read from (tfperf.cases.catalog_cache). Through a
real session that reads a folder in a worker: test_selection_and_options.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tfperf.cases import catalog_cache

READ = [{"name": "stack", "path": "/elsewhere/workloads/stack.py", "tier": "smoke",
         "data_formats": ["NHWC"], "precisions": ["fp32"], "towers": False,
         "batch_sizes": {"tiny": 32}, "smoke_matrix": False, "preprocessing": False}]


@pytest.fixture
def workloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "one" / "workloads"
    folder.mkdir(parents=True)
    (folder / "stack.py").write_text("BLOCKS = 4\n")
    (folder / "_helpers.py").write_text("WIDTH = 16\n")
    return folder


def test_what_was_read_is_found_by_the_same_files_wherever_they_are(workloads: Path) -> None:
    assert catalog_cache.load(workloads) is None
    catalog_cache.keep(workloads, READ)
    (found,) = catalog_cache.load(workloads) or []
    assert found["path"] == str(workloads.resolve() / "stack.py")
    assert {k: v for k, v in found.items() if k != "path"} == {
        k: v for k, v in READ[0].items() if k != "path"}
    # The same files in another project: the same catalog, with that folder's paths.
    other = workloads.parents[1] / "two" / "workloads"
    shutil.copytree(workloads, other)
    (found,) = catalog_cache.load(other) or []
    assert found["path"] == str(other.resolve() / "stack.py")


@pytest.mark.parametrize("change", ["module", "helper", "new module"])
def test_a_changed_file_is_read_again(workloads: Path, change: str) -> None:
    catalog_cache.keep(workloads, READ)
    if change == "module":
        (workloads / "stack.py").write_text("BLOCKS = 5\n")
    elif change == "helper":
        (workloads / "_helpers.py").write_text("WIDTH = 32\n")
    else:
        (workloads / "resnet.py").write_text("DEPTH = 20\n")
    assert catalog_cache.load(workloads) is None


def test_a_file_that_cannot_be_read_is_as_if_nothing_were_kept(workloads: Path) -> None:
    catalog_cache.keep(workloads, READ)
    (kept,) = catalog_cache.folder().glob("*.json")
    kept.write_text('{"format": "tfperf-catalog-1", "workl')
    assert catalog_cache.load(workloads) is None
    kept.write_text('{"format": "some-other-1", "workloads": []}')
    assert catalog_cache.load(workloads) is None
