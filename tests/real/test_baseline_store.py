"""The versioned baseline store: concurrent writers take turns, nothing is ever overwritten,
broken entries stop with their name."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tfperf.storage.baselines import BaselineEntries

# Each writer process appends entries that record which writer and which of its writes they
# are, and carry the cases of the entry they were built on plus one of their own: a lost
# update (two writers building on the same entry) would drop a case.
WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tfperf.storage.baselines import BaselineEntries, CaseBaseline, Entry

    folder, writer, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    store = BaselineEntries(folder)
    for i in range(count):
        def make(current, version):
            cases = dict(current.cases) if current else {}
            cases[f"{writer}-{i}"] = CaseBaseline((), "2026-11-22")
            return Entry(version, writer, "2026-11-22", "", f"write {i}", "refresh", cases)
        store.append(make)
""")


def test_concurrent_refreshes_take_turns_and_lose_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "entries"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(folder), f"w{n}", "15"])
               for n in range(4)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    entries = BaselineEntries(folder).entries()
    assert [e.version for e in entries] == list(range(1, 61))
    # The last entry holds every writer's every case: no write was built on a stale entry.
    assert sorted(entries[-1].cases) == sorted(f"w{n}-{i}" for n in range(4) for i in range(15))
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


RUN = ('{"case_id": "c", "fingerprint": {"hard": {}}, "when": "2026-11-22", "session": "s", '
       '"examples_per_sec": 10, "round_examples_per_sec": [10, 11]}')


def test_a_session_file_cannot_point_outside_baselines(tmp_path: Path) -> None:
    """The machine key of a session file names a folder under baselines/: a path is refused."""
    session = {"format": "tfperf-session/1", "session": "s", "machine_key": "../../etc",
               "runs": [json.loads(RUN)]}
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session))
    done = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_gate", str(path),
                           f"--baselines={tmp_path / 'baselines'}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith(f"tfperf-gate: {path} is not a valid tfperf session file: "
                                  "at machine_key: '../../etc' does not match")
