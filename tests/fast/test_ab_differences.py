"""Every difference between an A/B session's sides: packages at other versions or on
one side only, the variables a side adds, the workloads folder; in the terminal, the report,
and for a file kept before packages were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tfperf.ab import differences, session_report
from tfperf.commands import store_import
from tfperf.ground.vocabulary import SideName
from tfperf.processes import packages
from tfperf.storage import formats
from tfperf.storage.results_store import ResultsStore


def _side(packages_: dict[str, str] | None, env: dict[str, str] | None = None,
          workloads: str = "workloads") -> dict[str, Any]:
    side: dict[str, Any] = {"role": "x", "spec": "s", "tensorflow": "2.21.0", "env": env or {},
                            "workloads": workloads}
    if packages_ is not None:
        side["packages"] = packages_
    return side


def test_each_package_variable_and_folder_that_differs_is_listed() -> None:
    a = _side({"tensorflow-cpu": "2.21.0", "keras": "3.15.1", "numpy": "2.4.6", "tfperf": "1",
               "pytest": "9.0.1"}, {"TF_XLA_FLAGS": "--tf_xla_auto_jit=2"}, "main/workloads")
    b = _side({"tensorflow-cpu": "2.22.0rc0", "keras": "3.16.0.dev2026102704",
               "numpy": "2.4.6", "ml-dtypes": "0.6.0"}, {}, "workloads")
    found = differences.between({"A": a, "B": b})
    assert found == [
        {"kind": "package", "name": "keras", "A": "3.15.1", "B": "3.16.0.dev2026102704"},
        {"kind": "package", "name": "ml-dtypes", "A": "-", "B": "0.6.0"},
        {"kind": "package", "name": "pytest", "A": "9.0.1", "B": "-"},
        {"kind": "package", "name": "tensorflow-cpu", "A": "2.21.0", "B": "2.22.0rc0"},
        {"kind": "env", "name": "TF_XLA_FLAGS", "A": "--tf_xla_auto_jit=2", "B": "-"},
        {"kind": "workloads", "name": "folder", "A": "main/workloads", "B": "workloads"}]
    assert differences.lines(found) == [
        "sides differ in: keras 3.15.1 -> 3.16.0.dev2026102704, tensorflow-cpu 2.21.0 -> "
        "2.22.0rc0, env TF_XLA_FLAGS --tf_xla_auto_jit=2 -> -, workloads folder "
        "main/workloads -> workloads",
        "only side A has 1 package: pytest", "only side B has 1 package: ml-dtypes"]
    table = differences.markdown(found)
    assert table[0] == "What differs between the sides (6):"
    assert "| package | `keras` | 3.15.1 | 3.16.0.dev2026102704 |" in table
    many = {f"p{i:02d}": "1" for i in range(20)}
    said = differences.lines(differences.between({"A": _side(many), "B": _side({})}))
    assert said == ["only side A has 20 packages: " + ", ".join(f"p{i:02d}" for i in range(12))
                    + " and 8 more"]


def test_identical_sides_say_so_and_a_file_kept_before_packages_compares_the_rest() -> None:
    same = _side({"numpy": "2.4.6"})
    assert differences.between({"A": same, "B": same}) == []
    assert differences.lines([]) == ["sides differ in nothing but their specs"]
    old = {"sides": {"A": _side(None, {"X": "1"}), "B": _side(None)}}
    assert session_report.differences_of(old) == [
        {"kind": "env", "name": "X", "A": "1", "B": "-"}]


def test_an_environment_s_packages_are_named_as_pep_503_says() -> None:
    here = packages.installed()  # what tfperf.worker.environment_probe reads in another
    assert here["numpy"] and packages.normalise("Ml_Dtypes") == "ml-dtypes"


def test_an_imported_session_keeps_its_differences_in_the_store(tmp_path: Path) -> None:
    sides: dict[SideName, dict[str, Any]] = {"A": _side({"keras": "3.15.1"}),
                                             "B": _side({"keras": "3.16.0"})}
    kept = tmp_path / "ab" / "20261128T010000Z-1.json"
    kept.parent.mkdir()
    kept.write_text(json.dumps({
        "format": formats.AB_FORMAT, "session": "20261128T010000Z-1", "machine_key": "k",
        "tier": "smoke", "when": "2026-11-28T01:00:00+00:00",
        "settings": {"floor": 0.015, "alpha": 0.05, "min_pairs": 16, "max_pairs": 16},
        "sides": sides, "differences": differences.between(sides), "cases": []}))
    store = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        for found in store_import.read([kept.parent]).kept:
            store_import.write(store, found)
        (session,) = store.sessions()
    finally:
        store.close()
    assert session.differences == [{"kind": "package", "name": "keras", "A": "3.15.1",
                                    "B": "3.16.0"}]
