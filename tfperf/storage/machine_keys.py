"""Machine keys written before the key named the CPU's instruction-set level, and how what was
kept under them is read now.

An old key's CPU part was its model name and cores (`AMD_EPYC-2cpu`), which
named an AVX2-only and an AVX-512 host alike, 3x apart. The key now carries the level
(`AMD_EPYC-avx2-2cpu`), and a CPU case's fingerprint the field `cpu_isa`. What was kept under
an old key keeps its meaning: it stays apart from every new key (its hosts may have differed),
unless baselines/machine_keys.toml says which level its hosts had:

    [legacy]   # an old key = the level of every host that measured under it
    "Linux-py3.11-tf2.21.0-Intel_R_Xeon_R_Processor-2cpu" = "amx"

Then the new key of that level reads the old key's baseline entries (while it has none of its
own) and stored runs as its own, each CPU run given the level it was measured at. A session
file kept under an old key is judged as it was: against the old key's history, unchanged.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from tfperf.ground.machine import ISA_LEVELS
from tfperf.storage.baselines import BaselineEntries, Entry
from tfperf.storage.errors import StorageError
from tfperf.storage.fingerprint import Fingerprint
from tfperf.storage.session_files import Run

FILE_NAME = "machine_keys.toml"
_CORES = re.compile(r"-(\d+)cpu(?=-|$)")


def level_of(key: str) -> str | None:
    """The instruction-set level a key names; None for a key written before keys named one."""
    match = _CORES.search(key)
    if match is None:
        return None
    before = key[:match.start()].rsplit("-", 1)
    return before[1] if len(before) == 2 and before[1] in ISA_LEVELS else None


def with_level(legacy: str, level: str) -> str:
    """The key an old key becomes for hosts of `level`: the level before the cores."""
    match = _CORES.search(legacy)
    if match is None:
        raise StorageError(f"{legacy!r} is not a machine key with a CPU part (MODEL-Ncpu)")
    return f"{legacy[:match.start()]}-{level}{legacy[match.start():]}"


def with_isa(run: Run, level: str) -> Run:
    """An old CPU run read as measured at `level`; a GPU run, or one that names its level,
    as it is."""
    hard = run.fingerprint.hard
    if "cpu_isa" in hard or hard.get("cpu_model") is None:
        return run
    return replace(run, fingerprint=Fingerprint({**hard, "cpu_isa": level},
                                                run.fingerprint.soft))


def with_isa_entry(entry: Entry, level: str) -> Entry:
    """An old key's baseline entry read as measured at `level`."""
    return replace(entry, cases={case: replace(b, runs=tuple(with_isa(r, level) for r in b.runs))
                                 for case, b in entry.cases.items()})


@dataclass(frozen=True)
class LegacyKeys:
    levels: dict[str, str]  # old key -> the level its hosts had

    @classmethod
    def load(cls, baselines: Path) -> LegacyKeys:
        """baselines/machine_keys.toml, checked whole: a bad line stops the run naming it."""
        path = baselines / FILE_NAME
        if not path.is_file():
            return cls({})
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise StorageError(f"{path} is not readable TOML: {error}") from None
        unknown = set(data) - {"legacy"}
        if unknown or not isinstance(data.get("legacy", {}), dict):
            raise StorageError(f"{path}: only a [legacy] table of old key = level is valid")
        levels = {}
        for key, level in data.get("legacy", {}).items():
            if level not in ISA_LEVELS:
                raise StorageError(f"{path}: {key} = {level!r} is not a level; valid: "
                                   f"{', '.join(ISA_LEVELS)}")
            if level_of(key) is not None or _CORES.search(key) is None:
                raise StorageError(f"{path}: {key!r} is not an old machine key (one whose CPU "
                                   "part is MODEL-Ncpu, with no level)")
            levels[key] = level
        return cls(levels)

    def active_entry(self, baselines: Path, key: str) -> Entry | None:
        """The key's active baseline entry; with none of its own, the newest of the old keys
        it reads, each run of it given the key's level."""
        entry = BaselineEntries(baselines / key / "entries").active()
        level = level_of(key)
        if entry is not None or level is None:
            return entry
        olds = [found for old in self.serving(key)
                if (found := BaselineEntries(baselines / old / "entries").active()) is not None]
        return with_isa_entry(max(olds, key=lambda e: e.when), level) if olds else None

    def serving(self, key: str) -> tuple[str, ...]:
        """The old keys whose kept runs and entries `key` reads as its own."""
        return tuple(old for old, level in sorted(self.levels.items())
                     if with_level(old, level) == key)
