"""A workload's version: raised when a change makes its earlier runs incomparable (its
objective, its data), it starts the case's history afresh through the fingerprint; version 1,
every workload's before versions existed, leaves fingerprints as they were. The shipped
workloads that changed their objective or data say so. Their losses falling from the first
steps, for real: tests/real/test_workloads.py."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers.suites import REPO
from tfperf.cases import catalog, catalog_cache
from tfperf.ground.tiers import Tier
from tfperf.storage import fingerprint
from tfperf.workload import WorkloadInfo

AXES = {"workload": "fused_elementwise", "device_kind": "cpu", "xla": "off"}
MEASURING = {"size": "tiny", "batch_size": 8, "steps_per_round": 10, "rounds": 8,
             "warmup_rounds": 2}


def test_version_1_keeps_the_fingerprint_and_a_later_one_changes_it() -> None:
    before = fingerprint.config_hash({**AXES, **MEASURING})  # as runs were kept before
    assert fingerprint.config_hash(fingerprint.case_config(AXES, MEASURING, 1)) == before
    second = fingerprint.config_hash(fingerprint.case_config(AXES, MEASURING, 2))
    third = fingerprint.config_hash(fingerprint.case_config(AXES, MEASURING, 3))
    assert len({before, second, third}) == 3


def test_the_version_survives_the_kept_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "workloads"
    folder.mkdir()
    (folder / "stack.py").write_text("VERSION = 2\n")
    info = WorkloadInfo("stack", folder / "stack.py", ("NHWC",), ("fp32",), False, Tier.SMOKE,
                        {"tiny": 8}, False, False)
    catalog_cache.keep(folder, [catalog.info_json(replace(info, version=2))])
    # What a session reads back when no worker reads the folder again (catalog.read builds
    # each WorkloadInfo from these keys; in the whole run, where TensorFlow is imported, it
    # would read the folder itself instead).
    (kept,) = catalog_cache.load(folder) or [{}]
    assert kept.get("version") == 2


def _declared_version(name: str) -> int:
    """The `version` a shipped workload's class declares (1 when it declares none)."""
    tree = ast.parse((REPO / "workloads" / f"{name}.py").read_text())
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and any(isinstance(t, ast.Name) and t.id == "version" for t in node.targets)):
            version = node.value.value
            assert isinstance(version, int), version
            return version
    return 1


@pytest.mark.parametrize("name", ["fused_elementwise", "transformer"])
def test_the_workloads_whose_objective_or_data_changed_have_a_new_version(name: str) -> None:
    assert _declared_version(name) == 2
