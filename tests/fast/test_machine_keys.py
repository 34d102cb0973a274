"""The machine key names the CPU's instruction-set level, so that hosts whose TensorFlow runs
other kernels never share a history; what was kept under an old key stays apart unless
baselines/machine_keys.toml names its hosts' level, and is then read as the new key's."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import gate_runs
from tests.helpers.suites import REPO
from tfperf.gate.case_verdict import Sources, comparable
from tfperf.ground.machine import Machine, isa_level
from tfperf.storage import database, machine_keys
from tfperf.storage.baselines import BaselineEntries
from tfperf.storage.errors import StorageError
from tfperf.storage.results_store import ResultsStore, SessionRow
from tfperf.storage.stored_runs import Keeper, StoredRuns
from tfperf.storage.timestamps import utc

# /proc/cpuinfo flags (abridged) of the hosts this project has run on, and of others.
AVX2_EPYC = {"sse4_2", "avx", "fma", "avx2", "sha_ni", "vaes"}
AVX512_EPYC = AVX2_EPYC | {"avx512f", "avx512bw", "avx512_vnni", "avx512_bf16"}
SAPPHIRE_RAPIDS = AVX512_EPYC | {"amx_tile", "amx_bf16", "amx_int8"}
CASCADE_LAKE = AVX2_EPYC | {"avx512f", "avx512_vnni"}
SKYLAKE = AVX2_EPYC | {"avx512f"}
OLD_KEY = "Linux-py3.11-tf2.21.0-AMD_EPYC-2cpu"


@pytest.mark.parametrize(("flags", "level"), [
    (AVX2_EPYC, "avx2"), (AVX512_EPYC, "avx512bf16"), (SAPPHIRE_RAPIDS, "amx"),
    (CASCADE_LAKE, "avx512vnni"), (SKYLAKE, "avx512"), ({"sse4_2", "avx"}, "avx"),
    (set(), "sse")])
def test_the_level_is_the_highest_one_the_kernels_dispatch_on(flags: set[str], level: str) -> None:
    assert isa_level(flags) == level


def test_hosts_that_run_other_kernels_get_other_keys_and_identical_hosts_one() -> None:
    epyc = Machine("Linux", "3.11", "2.21.0", "AMD EPYC", 2, cpu_isa=isa_level(AVX2_EPYC))
    wider = replace(epyc, cpu_isa=isa_level(AVX512_EPYC))
    assert epyc.key() == "Linux-py3.11-tf2.21.0-AMD_EPYC-avx2-2cpu"
    assert wider.key() == "Linux-py3.11-tf2.21.0-AMD_EPYC-avx512bf16-2cpu"
    assert replace(epyc, host="another", runner="r2").key() == epyc.key()
    assert not epyc.cpu_avx512 and wider.cpu_avx512  # what the bf16 cases skip on


def test_old_and_new_keys_are_told_apart_and_an_old_one_takes_a_level() -> None:
    assert machine_keys.level_of(OLD_KEY) is None
    new = machine_keys.with_level(OLD_KEY, "avx2")
    assert new == "Linux-py3.11-tf2.21.0-AMD_EPYC-avx2-2cpu"
    assert machine_keys.level_of(new) == "avx2"
    gpu = machine_keys.with_level(f"{OLD_KEY}-8xNVIDIA_H100", "amx")
    assert gpu == "Linux-py3.11-tf2.21.0-AMD_EPYC-amx-2cpu-8xNVIDIA_H100"
    assert machine_keys.level_of(gpu) == "amx"


@pytest.mark.parametrize(("text", "says"), [
    ("[legacy]\n'Linux-AMD_EPYC-2cpu' = 'avx3'\n", "'avx3' is not a level; valid: sse, avx, avx2"),
    ("[legacy]\n'Linux-AMD_EPYC-avx2-2cpu' = 'avx2'\n", "is not an old machine key"),
    ("[legacy]\n'Linux-AMD_EPYC' = 'avx2'\n", "is not an old machine key"),
    ("[keys]\n", "only a [legacy] table of old key = level is valid"),
    ("[legacy\n", "is not readable TOML"),
])
def test_a_bad_mapping_is_one_line_naming_the_file(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / machine_keys.FILE_NAME).write_text(text)
    with pytest.raises(StorageError, match=f"{machine_keys.FILE_NAME}.*{_escaped(says)}"):
        machine_keys.LegacyKeys.load(tmp_path)


def _escaped(text: str) -> str:
    return text.replace("[", r"\[").replace("]", r"\]")


def _entry(folder: Path, key: str, runs: list[dict[str, object]]) -> None:
    entries = folder / key / "entries"
    entries.mkdir(parents=True)
    (entries / "0001.json").write_text(json.dumps({
        "format": "tfperf-baseline/1", "version": 1, "who": "me", "when": "2026-11-20",
        "reason": "first", "kind": "refresh",
        "cases": {gate_runs.CASE: {"history_since": "", "runs": runs}}}))


def test_an_old_key_mapped_to_this_level_serves_its_entry_and_stored_runs(tmp_path: Path) -> None:
    baselines = tmp_path / "baselines"
    old_runs = [gate_runs.run(600.0 + day, day) for day in range(1, 4)]  # no cpu_isa: old
    _entry(baselines, OLD_KEY, [r.to_json() for r in old_runs])
    store = ResultsStore.open(database.default_url(tmp_path / "history"))
    try:
        row = SessionRow("s9", "measured", "smoke", OLD_KEY, "", utc("2026-11-09"))
        Keeper(store, row).runs([gate_runs.run(610.0, 9)])
        new_key = machine_keys.with_level(OLD_KEY, "avx2")
        tonight = gate_runs.run(605.0, 20, hard={**gate_runs.HARD, "cpu_isa": "avx2"},
                                session="tonight")
        # Unmapped: the old key's hosts may have been either kind; nothing is read as this key's.
        apart = Sources.load(baselines, new_key, StoredRuns(store, new_key, "tonight"))
        assert apart.entry is None and comparable(tonight, apart, 30)[0] == []
        (baselines / machine_keys.FILE_NAME).write_text(f'[legacy]\n"{OLD_KEY}" = "avx2"\n')
        mapped = Sources.load(baselines, new_key, StoredRuns(store, new_key, "tonight"))
        history, _, _ = comparable(tonight, mapped, 30)
        assert [r.session for r in history] == ["s1", "s2", "s3", "s9"]
        assert {r.fingerprint.hard["cpu_isa"] for r in history} == {"avx2"}
        # A host of the other level reads none of it.
        other = machine_keys.with_level(OLD_KEY, "avx512bf16")
        assert Sources.load(baselines, other, StoredRuns(store, other)).entry is None
        # A session kept under the old key is judged as it was: against the old key's runs.
        old = Sources.load(baselines, OLD_KEY, StoredRuns(store, OLD_KEY, "s9"))
        assert len(comparable(gate_runs.run(610.0, 9), old, 30)[0]) == 3
    finally:
        store.close()


def test_the_shipped_baselines_are_read_by_the_key_of_their_hosts_level(tmp_path: Path) -> None:
    shutil.copytree(REPO / "baselines", tmp_path / "baselines")
    legacy = machine_keys.LegacyKeys.load(tmp_path / "baselines")
    (old,) = legacy.levels
    new = machine_keys.with_level(old, "amx")
    assert legacy.serving(new) == (old,) and legacy.serving(machine_keys.with_level(old, "avx2")) \
        == ()
    shipped = BaselineEntries(tmp_path / "baselines" / old / "entries").active()
    store = ResultsStore.open(database.default_url(tmp_path / "history"))
    try:
        entry = Sources.load(tmp_path / "baselines", new, StoredRuns(store, new)).entry
    finally:
        store.close()
    assert shipped is not None and entry is not None and entry.version == shipped.version
    runs = [r for case in entry.cases.values() for r in case.runs]
    assert runs and {r.fingerprint.hard["cpu_isa"] for r in runs} == {"amx"}
