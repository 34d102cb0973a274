"""The store's export, load and prune on SQLite: an export loads into an empty store
as it was (export, load, export gives the same files, JSON lines and CSV); a kept file is never
overwritten and a store with rows is never loaded into; pruning keeps what the gate and open
findings read and deletes the rest of what is old, and only with --write."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers import in_process, store_history
from tfperf.commands import tfperf_store
from tfperf.storage import exports, notifications, pruning, tables
from tfperf.storage.errors import StorageError
from tfperf.storage.results_store import BisectRow, ResultsStore
from tfperf.storage.timestamps import utc

SHAPE = store_history.Shape(days=12, cases=4, runners=2, ab_sessions=2, slow_case=1,
                            failed_case=2)


def _store(path: Path) -> ResultsStore:
    return ResultsStore.open(f"sqlite:///{path}")


@pytest.fixture
def filled(tmp_path: Path) -> ResultsStore:
    store = _store(tmp_path / "filled.sqlite3")
    store_history.generate(store, SHAPE)
    store.add_bisect(BisectRow("bisect-1", utc("2025-12-01T00:00:00+00:00"), "k", "case", "commits",
                               "found", "abc", "def", {"steps": [{"role": "confirm", "verdict": "slower"}]}))
    notifications.remember(store.engine, [notifications.Sent(
        "culprit:k:case:bisect-1", notifications.destination("https://hooks.example/T"),
        "culprit", utc("2025-12-01T00:05:00+00:00"))])
    return store


@pytest.mark.parametrize("form", exports.FORMATS)
def test_an_export_loads_into_an_empty_store_as_it_was(filled: ResultsStore, tmp_path: Path,
                                                       form: exports.Format) -> None:
    counts = exports.export(filled.engine, tmp_path / "one", form)
    assert counts == filled.counts()
    copy = _store(tmp_path / "copy.sqlite3")
    read_form, found = exports.read(tmp_path / "one")
    assert read_form == form and exports.load(copy.engine, found) == counts
    run = found["runs"][0]  # CSV's text read back as the columns' types
    assert isinstance(run["id"], int) and isinstance(run["examples_per_sec"], float)
    assert run["scaling_efficiency"] is None and isinstance(run["document"], dict)
    assert copy.counts() == filled.counts()
    assert copy.runs() == filled.runs() and copy.bisects() == filled.bisects()
    assert notifications.every(copy.engine) == notifications.every(filled.engine) != []
    exports.export(copy.engine, tmp_path / "two", form)
    for table in exports.TABLES:
        name = f"{table.name}.{form}"
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    if form == "csv":  # what a spreadsheet or pandas reads: a header, a row per row
        with (tmp_path / "one" / "runs.csv").open(newline="") as lines:
            rows = list(csv.DictReader(lines))
        assert len(rows) == counts["runs"] and json.loads(rows[0]["document"])["case_id"]
    # Nothing is overwritten, and a store with rows is not loaded into.
    with pytest.raises(StorageError, match="exists: export into a folder of its own"):
        exports.export(filled.engine, tmp_path / "one", form)
    with pytest.raises(StorageError, match="an export loads into an empty store"):
        exports.load(copy.engine, found)
    # An export made before the notifier (0006) has no notifications: it loads without them.
    (tmp_path / "one" / f"notifications.{form}").unlink()
    read_form, older = exports.read(tmp_path / "one")
    assert older["notifications"] == [] and older["runs"] == found["runs"]
    # ... and one made before 0007 has no sessions' differences: they load as none.
    _without(tmp_path / "one" / f"sessions.{form}", form, {"differences"})
    _, older = exports.read(tmp_path / "one")
    assert len(older["sessions"]) == counts["sessions"]
    assert all(row["differences"] is None for row in older["sessions"])
    # ... and one made before 0009 has no runs' series: made from each run's key and document.
    _without(tmp_path / "one" / f"runs.{form}", form, {"machine_kind", "series_key"})
    _, older = exports.read(tmp_path / "one")
    series = [(row["machine_kind"], row["series_key"]) for row in found["runs"]]
    assert [(row["machine_kind"], row["series_key"]) for row in older["runs"]] == series
    assert all(kind and key for kind, key in series)


def _without(path: Path, form: exports.Format, columns: set[str]) -> None:
    """An exported table's file as an older tfperf wrote it, without `columns`."""
    with path.open(newline="") as lines:
        rows = [json.loads(line) for line in lines] if form == "jsonl" else \
            list(csv.DictReader(lines))
    with path.open("w", newline="") as lines:
        kept = [{k: v for k, v in row.items() if k not in columns} for row in rows]
        if form == "jsonl":
            lines.writelines(json.dumps(row) + "\n" for row in kept)
        else:
            writer = csv.DictWriter(lines, fieldnames=list(kept[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(kept)


def test_a_folder_that_is_not_an_export_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="holds no export"):
        exports.read(tmp_path)
    for table in exports.TABLES:
        (tmp_path / f"{table.name}.jsonl").write_text('{"id": 1}\n')
    with pytest.raises(StorageError, match=r"sessions\.jsonl is not a sessions export: its "
                       r"columns"):
        exports.read(tmp_path)


def _add(connection: sa.Connection, session: str, day: int, runs: list[tuple[str, str]],
         failures: tuple[str, ...] = ()) -> None:
    when = f"2026-01-{day:02d}T03:00:00+00:00"
    connection.execute(tables.sessions.insert().values(
        id=session, kind="measured", tier="nightly", machine_key="k", commit="", started=when,
        source="session"))
    for case, verdict in runs:
        connection.execute(tables.runs.insert().values(
            session_id=session, case_id=case, machine_key="k", when=when, tensorflow="2.21.0",
            git_hash="g", examples_per_sec=100.0, verdict=verdict, document={"case_id": case}))
    for case in failures:
        connection.execute(tables.failures.insert().values(
            session_id=session, case_id=case, machine_key="k", when=when, cause="crash",
            phase="measuring", message="m", log_path="l", log_tail="t"))


def test_pruning_keeps_the_gate_s_history_and_open_findings_and_deletes_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path / "store.sqlite3")
    with store.engine.begin() as connection:
        # Case x: ok, ok, then regressions to its newest run (an open finding), and a crash on
        # day 6 that its run of day 20 resolved. Case y: a crash resolved the next day. Case z:
        # one run, then a crash and nothing since (an open finding).
        for day, verdict in enumerate(["ok", "ok", "regression", "regression", "regression"], 1):
            _add(connection, f"s{day}", day,
                 [("x", verdict), ("y", "ok"), *([("z", "ok")] if day == 1 else [])],
                 failures={1: ("y",), 2: ("z",)}.get(day, ()))
        _add(connection, "s6", 6, [], failures=("x",))
        _add(connection, "s20", 20, [("x", "regression"), ("y", "ok")])  # after the date
        connection.execute(tables.sessions.insert(), [
            {"id": sid, "kind": "ab", "tier": "smoke", "machine_key": "k", "commit": "",
             "started": "2026-01-02T00:00:00+00:00", "source": "session"}
            for sid in ("bisect-1-step01", "ab-old")])
        connection.execute(tables.ab_cases.insert(), [
            {"session_id": sid, "case_id": "x", "when": "2026-01-02T00:00:00+00:00",
             "verdict": "slower", "ratio": 0.9, "low": 0.8, "high": 0.95, "pairs": 16,
             "document": {}} for sid in ("bisect-1-step01", "ab-old")])
    store.add_bisect(BisectRow("bisect-1", utc("2026-01-02T01:00:00+00:00"), "k", "x", "commits",
                               "found", "abc", "def", {}))
    before = store.counts()
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    dry = in_process.run(tfperf_store.main, "--store", url, "prune", "--before", "2026-01-10",
                         "--keep-runs", "1", capsys=capsys)
    assert dry.code == 0 and "would delete 7 runs, 2 failures, 1 ab_cases, 2 sessions" in dry.out
    assert store.counts() == before  # a dry run deletes nothing
    done = in_process.run(tfperf_store.main, "--store", url, "prune", "--before", "2026-01-10",
                          "--keep-runs", "1", "--write", capsys=capsys)
    assert done.code == 0 and "deleted 7 runs, 2 failures, 1 ab_cases, 2 sessions" in done.out
    with store.engine.connect() as connection:
        runs = sorted(connection.execute(sa.select(tables.runs.c.case_id, tables.runs.c.when,
                                                   tables.runs.c.verdict)))
        failed = list(connection.execute(sa.select(tables.failures.c.case_id)).scalars())
        ab = list(connection.execute(sa.select(tables.ab_cases.c.session_id)).scalars())
    # x's regressions since its last ok stay, whatever --keep-runs; y and z keep their newest
    # run (the gate's history); z's crash is newer than its newest run and stays; the crashes
    # of x and y were resolved by later runs, and go with the sessions left empty.
    assert [(c, w.date().isoformat(), v) for c, w, v in runs] == [
        ("x", "2026-01-03", "regression"), ("x", "2026-01-04", "regression"),
        ("x", "2026-01-05", "regression"), ("x", "2026-01-20", "regression"),
        ("y", "2026-01-20", "ok"), ("z", "2026-01-01", "ok")]
    assert failed == ["z"] and ab == ["bisect-1-step01"]
    assert {s.id for s in store.sessions()} == {"s1", "s2", "s3", "s4", "s5", "s20",
                                                "bisect-1-step01"}
    bad = in_process.run(tfperf_store.main, "--store", url, "prune", "--older-than", "soon",
                         capsys=capsys)
    assert bad.code == 2 and "'soon' is not a number of days like 180d" in bad.err
    assert pruning.plan(store.engine, "2026-01-10", 1).counts() == {
        "runs": 0, "failures": 0, "ab_cases": 0, "sessions": 0}
