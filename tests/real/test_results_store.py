"""The results store on real databases: SQLite files and a PostgreSQL server the tests start
(tests/helpers/postgres_server.py). Writers are real processes; nothing here is a mock."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers import gate_runs, old_times, store_history
from tests.helpers.postgres_server import Server, _free_port
from tfperf.gate import case_verdict
from tfperf.gate.case_verdict import Sources
from tfperf.gate.rules import GateRules
from tfperf.gate.statistics import GateSettings
from tfperf.storage import database, exports, formats, session_files
from tfperf.storage.errors import StoreUnavailable
from tfperf.storage.fingerprint import Fingerprint
from tfperf.storage.results_store import ResultsStore, SessionRow
from tfperf.storage.session_files import History, Run
from tfperf.storage.stored_runs import StoredRuns
from tfperf.storage.timestamps import utc

REPO = Path(__file__).resolve().parents[2]
KEY = "Linux-py3.11-tf2.21.0-Test_CPU-2cpu"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return database.default_url(tmp_path / "results")
    server: Server = request.getfixturevalue("postgres")
    return server.new_database(f"store_{uuid.uuid4().hex[:12]}")


def _writer(url: str, session: str, cases: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.helpers.store_writer", url, session,
                             str(cases), *extra], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_eight_sessions_write_to_one_store_at_once_and_nothing_is_lost_or_doubled(
        store_url: str) -> None:
    writers = [_writer(store_url, f"session-{i}", 25) for i in range(8)]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0 and out.strip() == "done", err
    store = ResultsStore.open(store_url)
    try:
        assert store.counts() == {"sessions": 8, "runs": 200, "failures": 8, "ab_cases": 0,
                                  "bisects": 0, "notifications": 0}
        runs = store.runs()
        assert sorted((r["session"], r["case_id"]) for r in runs) == sorted(
            (f"session-{i}", f"case-{c:03d}") for i in range(8) for c in range(25))
        assert {f.cause for f in store.failures()} == {"crash"}
    finally:
        store.close()


def test_a_writer_killed_mid_write_leaves_the_store_as_it_was(store_url: str) -> None:
    first = _writer(store_url, "kept", 5)
    assert first.communicate(timeout=120)[0].strip() == "done"
    held = _writer(store_url, "killed", 50, "--hold")
    try:
        assert held.stdout is not None
        assert held.stdout.readline().strip() == "inside"  # its transaction open, rows written
        held.send_signal(signal.SIGKILL)
        held.wait(timeout=30)
    finally:
        held.kill()
        held.communicate()
    store = ResultsStore.open(store_url)
    try:
        assert store.counts() == {"sessions": 1, "runs": 5, "failures": 1, "ab_cases": 0,
                                  "bisects": 0, "notifications": 0}
        if store_url.startswith("sqlite"):
            with store.engine.connect() as connection:
                assert connection.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    finally:
        store.close()
    after = _writer(store_url, "after", 3)  # nothing was left locked
    assert after.communicate(timeout=120)[0].strip() == "done"


def test_a_store_at_a_newer_schema_is_refused_and_left_untouched(store_url: str) -> None:
    ResultsStore.open(store_url).close()
    engine = database.connect(store_url)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(StoreUnavailable, match=r"is at schema revision 9999, newer than this "
                                               r"tfperf's 0009: upgrade tfperf"):
        ResultsStore.open(store_url)
    with engine.connect() as connection:
        assert database.current(connection) == "9999"
    engine.dispose()


def test_a_store_of_an_older_schema_is_migrated_forward_keeping_every_row(store_url: str
                                                                           ) -> None:
    engine = database.connect(store_url)
    database.migrate(engine, to="0001")
    engine.dispose()
    writer = _writer(store_url, "before", 4, "--no-upgrade")
    assert writer.communicate(timeout=120)[0].strip() == "done"
    store = ResultsStore.open(store_url)  # brought to the newest schema here
    try:
        with store.engine.connect() as connection:
            assert database.current(connection) == database.head() == "0009"
            indexes = {i["name"] for i in sa.inspect(connection).get_indexes("runs")}
        assert "runs_by_case_and_machine" in indexes and "runs_by_case" not in indexes
        assert store.counts() == {"sessions": 1, "runs": 4, "failures": 1, "ab_cases": 0,
                                  "bisects": 0, "notifications": 0}
    finally:
        store.close()


def test_a_session_whose_store_cannot_be_used_stops_before_any_case(
        pytester: pytest.Pytester, tmp_path: Path) -> None:
    shutil.copy(REPO / "pytest.ini", pytester.path / "pytest.ini")
    shutil.copy(REPO / "conftest.py", pytester.path / "conftest.py")
    shutil.copytree(REPO / "tests" / "workloads", pytester.path / "workloads")
    shutil.copytree(REPO / "perf", pytester.path / "perf")
    select = ["perf", "-p", "no:cacheprovider", "-k", "tinycnn", "--perf-tier=smoke"]
    port = _free_port()
    unreachable = pytester.runpytest_subprocess(
        *select, f"--perf-store=postgresql://nobody@127.0.0.1:{port}/results")
    assert unreachable.ret == pytest.ExitCode.USAGE_ERROR
    unreachable.stderr.fnmatch_lines([f"ERROR: results store postgresql://nobody@127.0.0.1:{port}"
                                      "/results cannot be reached: *"])
    newer = database.default_url(tmp_path)
    ResultsStore.open(newer).close()
    engine = database.connect(newer)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE alembic_version SET version_num = 'f00d'"))
    engine.dispose()
    refused = pytester.runpytest_subprocess(*select, f"--perf-store={newer}")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["ERROR: results store sqlite:///* is at schema revision f00d, "
                                  "newer than this tfperf's 0009: upgrade tfperf to use it"])
    for result in (unreachable, refused):
        assert "passed" not in result.stdout.str() and not list(
            (pytester.path / ".perf-results").rglob("tinycnn-*.log"))  # no worker started


# A kept history: nights of two cases, one of them slower on the last night.
CASES = ("tinycnn-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host",
         "resnet20-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host")
HARD = {"cpu_model": "Test CPU", "cpu_cores": 2, "tensorflow": "2.21.0",
        "tensorflow_git": "v2.21.0-rc0-1-gabc", "config": "c"}


def _nights(folder: Path, nights: int, slower_last: float) -> list[Path]:
    rng = random.Random(7)
    for night in range(1, nights + 1):
        session = f"202611{night:02d}T030000000000Z-{night}"
        runs = []
        for case in CASES:
            rate = 1000.0 * (slower_last if night == nights and case == CASES[0] else 1.0)
            rounds = tuple(rate * rng.gauss(1, 0.01) for _ in range(5))
            runs.append(Run(case, Fingerprint(HARD, {"host": "runner-1"}),
                            f"2026-11-{night:02d}T03:00:00+00:00", session, sorted(rounds)[2],
                            rounds, peak_memory_bytes=1e8 * rng.gauss(1, 0.001), wall_s=30.0))
        History(folder).keep(session, "nightly", KEY, runs)
    return History(folder).sessions()


def _ab_file(folder: Path) -> Path:
    rng = random.Random(3)
    pairs = [{"duet": 1 + i % 4, "order": "AB" if i % 2 else "BA", "a_rate": 100.0,
              "b_rate": 100.0 * rng.gauss(0.93, 0.01), "at_s": float(i)} for i in range(24)]
    data = {"format": formats.AB_FORMAT, "session": "ab-session-1", "machine_key": KEY,
            "tier": "smoke", "when": "2026-11-20T04:00:00+00:00",
            "settings": {"floor": 0.02, "alpha": 0.05, "min_pairs": 8, "max_pairs": 40,
                         "duets": 4},
            "sides": {"A": {"tensorflow": "2.20.0"}, "B": {"tensorflow": "2.21.0"}},
            "cases": [{"case_id": CASES[1], "sides": {}, "pairs": pairs, "order_effect": {},
                       "failure": None, "wall_s": 60.0},
                      {"case_id": CASES[0], "sides": {}, "pairs": [], "order_effect": {},
                       "failure": {"cause": "crash", "message": "side B: worker killed"},
                       "wall_s": None}]}
    path = folder / "ab" / "ab-session-1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    return path


def _store_command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_store", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_importing_a_kept_history_keeps_every_run_once(store_url: str, tmp_path: Path) -> None:
    kept = tmp_path / ".perf-results" / "history"
    files = _nights(kept, 6, 1.0)
    _ab_file(tmp_path / ".perf-results")
    # A perf-history checkout: the same session files again, and pytest-benchmark's JSON.
    checkout = tmp_path / "perf-history" / "results"
    checkout.mkdir(parents=True)
    for path in files:
        shutil.copy(path, checkout)
    (checkout / "nightly.json").write_text(json.dumps({"benchmarks": []}))
    imported = _store_command("--store", store_url, "import", str(tmp_path / ".perf-results"),
                              str(tmp_path / "perf-history"), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert "imported 13 kept files" in imported.stdout
    assert "passed over 1 JSON files of other formats" in imported.stdout
    store = ResultsStore.open(store_url)
    try:
        expected = {(r.session, r.case_id): r.to_json() for p in files
                    for r in session_files.read_session(p)}
        stored = {(d["session"], d["case_id"]): d for d in store.runs()}
        assert stored == expected  # every run, whole, once
        ab = store.ab_cases("ab-session-1")
        assert [(c.case_id, c.verdict) for c in ab] == [(CASES[1], "slower"),
                                                        (CASES[0], "FAILED (crash)")]
        assert ab[0].ratio is not None and ab[0].high is not None and ab[0].high < 0.98
        assert [(f.case_id, f.cause) for f in store.failures()] == [(CASES[0], "crash")]
        counts = store.counts()
    finally:
        store.close()
    again = _store_command("--store", store_url, "import", str(tmp_path), cwd=tmp_path)
    assert again.returncode == 0 and ": 0 rows added" in again.stdout, again.stdout
    (tmp_path / "perf-history" / "results" / "broken.json").write_text("{")
    broken = _store_command("--store", store_url, "import", str(tmp_path), cwd=tmp_path)
    assert broken.returncode == 2
    assert broken.stderr.strip().endswith("broken.json is not readable JSON: Expecting "
                                          "property name enclosed in double quotes: line 1 "
                                          "column 2 (char 1)")
    store = ResultsStore.open(store_url)
    assert store.counts() == counts
    store.close()


def test_the_gate_judges_the_same_from_the_store_as_from_the_kept_files(tmp_path: Path) -> None:
    """A replay: the last of twelve nights, 8% slower in one case, judged against the files'
    history (as before the store) and the store's (after an import): the same verdicts."""
    files = _nights(tmp_path / "history", 12, 0.92)
    tonight = session_files.read_session(files[-1])
    session = tonight[0].session
    url = database.default_url(tmp_path / "store")
    imported = _store_command("--store", url, "import", str(tmp_path / "history"), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    settings, rules = GateSettings(), GateRules({})
    from_files = Sources(None, History(tmp_path / "history").runs(exclude=files[-1]))
    store = ResultsStore.open(url)
    from_store = Sources(None, stored=StoredRuns(store, KEY, session))
    try:
        judged = [[case_verdict.assess(run, sources, rules, settings) for run in tonight]
                  for sources in (from_files, from_store)]
    finally:
        store.close()
    assert judged[0] == judged[1]
    assert [g.status for g in judged[1]] == ["flagged", "ok"]
    assert len(judged[1][0].history) == 11
    gate = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_gate", str(files[-1]),
                           "--store", url, "--baselines", str(tmp_path / "baselines"),
                           "--reports", str(tmp_path / "reports")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert gate.stdout.count("**regression**") == 1 and "| 11 |" in gate.stdout


def test_the_dashboard_builds_from_a_store_as_a_role_that_may_only_read(
        postgres: Server, tmp_path: Path) -> None:
    """docs/store.md's read-only role: once the runners' role has created the schema, the
    dashboard opens the store, finds it at head and reads it without writing anything."""
    url = postgres.new_database(f"store_{uuid.uuid4().hex[:12]}")
    writer = _writer(url, "session-1", 3)
    out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0 and out.strip() == "done", err
    reader = f"reader_{uuid.uuid4().hex[:8]}"
    engine = database.connect(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"CREATE ROLE {reader} LOGIN")
        connection.exec_driver_sql(f"GRANT CONNECT ON DATABASE {url.rsplit('/', 1)[1]} TO "
                                   f"{reader}")
        connection.exec_driver_sql(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}")
    engine.dispose()
    as_reader = url.replace("postgresql://tfperf@", f"postgresql://{reader}@")
    built = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_dashboard", "--store",
                            as_reader, "--out", str(tmp_path / "site")], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "index.html").exists()
    # The role may not write: the grants are what keep the dashboard read-only.
    engine = database.connect(as_reader)
    try:
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"), \
                engine.begin() as connection:
            connection.exec_driver_sql("DELETE FROM runs")
    finally:
        engine.dispose()


def test_an_export_loads_into_postgresql_and_the_store_goes_on_from_there(
        postgres: Server, tmp_path: Path) -> None:
    """The round trip across databases: SQLite's rows exported as JSON lines load into
    PostgreSQL with their ids, the export of that is the same, and a session's next row takes
    a new id (the id sequences were moved past the loaded rows)."""
    source = ResultsStore.open(database.default_url(tmp_path / "sqlite"))
    store_history.generate(source, store_history.Shape(days=5, cases=3, runners=2,
                                                       ab_sessions=1))
    exports.export(source.engine, tmp_path / "one", "jsonl")
    target = ResultsStore.open(postgres.new_database(f"store_{uuid.uuid4().hex[:12]}"))
    try:
        exports.load(target.engine, exports.read(tmp_path / "one")[1])
        assert target.counts() == source.counts()
        exports.export(target.engine, tmp_path / "two", "jsonl")
        for table in exports.TABLES:
            name = f"{table.name}.jsonl"
            assert (tmp_path / "one" / name).read_text() == (tmp_path / "two" / name).read_text()
        session = SessionRow("after-load", "measured", "nightly", "k", "", utc("2026-02-01"))
        document = {**gate_runs.run(900.0, 5).to_json(), "case_id": "after-load-case"}
        assert target.add_runs(session, [document]) == 1
    finally:
        target.close()
        source.close()


def test_a_postgresql_store_at_0003_keeps_every_row_and_its_times_become_instants(
        postgres: Server) -> None:
    """As tests/fast/test_results_store.py on SQLite: the columns become TIMESTAMP
    WITH TIME ZONE, each row's text the same instant, compared by the server."""
    url = postgres.new_database(f"store_{uuid.uuid4().hex[:12]}")
    old_times.fill_at_0003(url)
    store = ResultsStore.open(url)
    try:
        assert store.counts() == {"sessions": 5, "runs": 5, "failures": 5, "ab_cases": 5,
                                  "bisects": 5, "notifications": 0}
        with store.engine.connect() as connection:
            types = {c["name"]: c["type"] for c in sa.inspect(connection).get_columns("runs")}
            indexes = {i["name"] for i in sa.inspect(connection).get_indexes("runs")}
        assert isinstance(types["when"], sa.DateTime) and types["when"].timezone
        assert {"runs_by_case_and_machine", "runs_by_machine"} <= indexes
        old_times.check_instants(store.engine)
    finally:
        store.close()
