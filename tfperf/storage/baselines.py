"""The shared baselines: versioned entries under baselines/<machine key>/entries/NNNN.json.

An entry is written by the refresh command and never changed afterwards. It holds, per case,
the runs of the fresh sessions it measured, the time from which later nightly runs count
(a marked distribution change moves it), and the spread kept across such a change. The newest
entry is the active one; a rollback writes a new entry with an earlier one's content.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tfperf.storage import schemas
from tfperf.storage.errors import StorageError
from tfperf.storage.files import locked, read_json, write_new
from tfperf.storage.session_files import Run

ENTRY_FORMAT = "tfperf-baseline/1"
_NAME = re.compile(r"^(\d{4})\.json$")


@dataclass(frozen=True)
class CaseBaseline:
    runs: tuple[Run, ...]
    history_since: str  # ISO time: nightly runs before it are not this case's history
    kept_spread: float | None = None  # relative spread carried over a marked change

    def to_json(self) -> dict[str, Any]:
        return {"runs": [r.to_json() for r in self.runs], "history_since": self.history_since,
                "kept_spread": self.kept_spread}


@dataclass(frozen=True)
class Entry:
    version: int
    who: str
    when: str
    commit: str
    reason: str
    kind: Literal["refresh", "rollback"]
    cases: Mapping[str, CaseBaseline]
    marked: tuple[str, ...] = ()  # cases whose history restarted with this entry
    rollback_of: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"format": ENTRY_FORMAT, "version": self.version, "who": self.who,
                "when": self.when, "commit": self.commit, "reason": self.reason,
                "kind": self.kind, "marked": list(self.marked), "rollback_of": self.rollback_of,
                "cases": {case: b.to_json() for case, b in sorted(self.cases.items())}}


def _entry(path: Path, version: int) -> Entry:
    data = read_json(path)
    where = str(path)
    schemas.validate(data, schemas.ENTRY, path, "baseline entry")
    if data["version"] != version:
        raise StorageError(f"{where} says version {data['version']}, its name {version}")
    cases = {}
    for case_id, item in data["cases"].items():
        spread = item.get("kept_spread")
        cases[case_id] = CaseBaseline(
            tuple(Run.from_json(r, where) for r in item["runs"]), item["history_since"],
            float(spread) if isinstance(spread, int | float) else None)
    return Entry(version, data["who"], data["when"], str(data.get("commit", "")),
                 data["reason"], data["kind"], cases, tuple(data.get("marked", [])),
                 data.get("rollback_of"))


class BaselineEntries:
    def __init__(self, folder: Path) -> None:
        self.folder = folder  # baselines/<machine key>/entries

    def entries(self) -> list[Entry]:
        """Every entry, oldest first; a broken one stops with its name, never skipped."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in sorted(self.folder.iterdir()):
            match = _NAME.match(path.name)
            if match:
                found.append(_entry(path, int(match.group(1))))
        return found

    def active(self) -> Entry | None:
        entries = self.entries()
        return entries[-1] if entries else None

    def entry(self, version: int) -> Entry:
        path = self.folder / f"{version:04d}.json"
        if not path.is_file():
            valid = ", ".join(str(e.version) for e in self.entries()) or "none"
            raise StorageError(f"no baseline entry {version} in {self.folder}; entries: {valid}")
        return _entry(path, version)

    def append(self, make: Callable[[Entry | None, int], Entry]) -> Entry:
        """Write the entry that `make(active, next_version)` builds, under the store's lock:
        concurrent refreshes each build on the other's result instead of racing."""
        with locked(self.folder):
            active = self.active()
            version = (active.version if active else 0) + 1
            entry = make(active, version)
            if entry.version != version:
                raise StorageError(f"entry {entry.version} built where {version} was next")
            write_new(self.folder / f"{version:04d}.json", entry.to_json())
            return entry
