"""The commands share their plumbing: one helper opens the store and always checks its URL; a
command that only reads never creates a store and says there is none; a global option is taken
before or after the subcommand."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers import in_process
from tfperf.commands import (
    tfperf_bisect,
    tfperf_dashboard,
    tfperf_gate,
    tfperf_notify,
    tfperf_refresh,
    tfperf_store,
)
from tfperf.options import ab as ab_options
from tfperf.storage import database, tables
from tfperf.storage.results_store import FailureRow, ResultsStore, SessionRow
from tfperf.storage.timestamps import utc

NONE_THERE = "results store: there is none at sqlite:///"


@pytest.mark.parametrize(("main", "args"), [
    (tfperf_store.main, ["--store", "{url}", "info"]),
    (tfperf_store.main, ["--store", "{url}", "export", "--out", "{tmp}/export"]),
    (tfperf_store.main, ["prune", "--older-than", "180d", "--store", "{url}"]),
    (tfperf_dashboard.main, ["--store", "{url}", "--out", "{tmp}/site"]),
    (tfperf_notify.main, ["webhook", "--store", "{url}", "--dry-run"]),
    (tfperf_refresh.main, ["--store", "{url}", "--sessions", "2"]),  # before it measures
])
def test_a_reader_never_creates_a_store_and_says_there_is_none(
        main: Callable[[Sequence[str]], int], args: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/typo/store.sqlite3"
    done = in_process.run(main, *(a.format(tmp=tmp_path, url=url) for a in args),
                          capsys=capsys)
    assert done.code == 2, done
    (line,) = done.err.strip().splitlines()
    assert NONE_THERE in line and "nothing was created" in line
    assert not (tmp_path / "typo").exists()


def test_the_gate_reads_no_store_that_is_not_there(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    session = tmp_path / "s.json"
    session.write_text('{"format": "tfperf-session/1", "session": "s", "machine_key": "k", '
                       '"runs": []}')
    url = f"sqlite:///{tmp_path}/typo/store.sqlite3"
    done = in_process.run(tfperf_gate.main, str(session), "--store", url,
                          "--baselines", str(tmp_path), capsys=capsys)
    assert done.code == 2 and NONE_THERE in done.err, done
    assert not (tmp_path / "typo").exists()
    # The history folder's own store, never made: the baselines alone are the history.
    alone = in_process.run(tfperf_gate.main, str(session), "--history", str(tmp_path / "h"),
                           "--baselines", str(tmp_path), "--reports", str(tmp_path / "r"),
                           capsys=capsys)
    assert alone.code == 0 and alone.err.strip().endswith(
        "judged against the baseline entries alone"), alone
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize("store_first", [True, False])
def test_the_store_is_named_before_or_after_the_subcommand(
        store_first: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/store.sqlite3"
    ResultsStore.open(url).close()
    args = ["--store", url, "info"] if store_first else ["info", "--store", url]
    done = in_process.run(tfperf_store.main, *args, capsys=capsys)
    assert done.code == 0 and done.out.startswith(f"sqlite:///{tmp_path}/store.sqlite3: "), done
    # Given before the subcommand, the subcommand's absent option does not replace it.
    assert tfperf_store._parser().parse_args(["--store", url, "info"]).store == url


def test_bisect_takes_its_store_before_or_after_the_kind() -> None:
    parser = tfperf_bisect._parser()
    for args in (["--store", "sqlite:///x", "specs", "a", "b"],
                 ["specs", "a", "b", "--store", "sqlite:///x"],
                 ["--store", "sqlite:///x", "after-ab", "f.json"]):
        assert parser.parse_args(args).store == "sqlite:///x"
    assert parser.parse_args(["specs", "a", "b"]).store is None


@pytest.mark.parametrize(("main", "args"), [
    (tfperf_refresh.main, ["--sessions", "2"]),
    (tfperf_bisect.main, ["specs", "a", "b", "--", "-k", "resnet20"]),
    (tfperf_store.main, ["import", "nowhere"]),
])
def test_a_bad_store_url_is_refused_before_any_work(
        main: Callable[[Sequence[str]], int], args: list[str], capsys: pytest.CaptureFixture[str]
        ) -> None:
    done = in_process.run(main, "--store", "mysql://u@h/db", *args, capsys=capsys)
    assert done.code == 2, done
    assert done.err.strip().splitlines()[-1].endswith(
        "results store: mysql://u@h/db is neither SQLite nor PostgreSQL; valid: sqlite:///PATH, "
        "or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE")


def test_side_a_s_old_spellings_still_work_with_one_line_each(tmp_path: Path) -> None:
    given = {"perf_baseline": "current", "perf_baseline_env": ["X=1"],
             "perf_ab_side_a_env": ["Y=2"]}
    parsed = ab_options.parse(given.get, tmp_path, environ={})
    assert parsed.side_a == "current" and parsed.side_a_env == {"X": "1", "Y": "2"}
    assert parsed.deprecated == (
        "--perf-baseline is deprecated: use --perf-ab-side-a (the same meaning; \"baseline\" "
        "names only the gate's reviewed entries)",
        "--perf-baseline-env is deprecated: use --perf-ab-side-a-env (the same meaning; "
        "\"baseline\" names only the gate's reviewed entries)")
    nothing: dict[str, object] = {}
    by_environment = ab_options.parse(nothing.get, tmp_path,
                                      environ={"TFPERF_BASELINE": "current"})
    assert by_environment.side_a == "current" and by_environment.deprecated == (
        "$TFPERF_BASELINE is deprecated: use $TFPERF_AB_SIDE_A (the same meaning)",)
    new = ab_options.parse({"perf_ab_side_a": "current"}.get, tmp_path,
                           environ={"TFPERF_BASELINE": "x"})
    assert new.side_a == "current" and new.deprecated == ()


def test_a_reader_never_moves_a_store_s_schema(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Moving a team's store forward would lock out every runner still on the tfperf before:
    a reader says so in one line and leaves it; `tfperf-store upgrade` moves it."""
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    engine = database.connect(url)
    database.migrate(engine, to="0007")
    engine.dispose()
    done = in_process.run(tfperf_store.main, "--store", url, "info", capsys=capsys)
    assert done.code == 2, done
    assert done.err.strip().endswith(
        f"is at schema revision 0007, older than this tfperf's {database.head()}: "
        "`tfperf-store upgrade` brings it forward (a session does too)")
    engine = database.connect(url)
    with engine.connect() as connection:
        assert database.current(connection) == "0007"
    engine.dispose()
    assert in_process.run(tfperf_store.main, "--store", url, "upgrade", capsys=capsys).code == 0
    assert in_process.run(tfperf_store.main, "--store", url, "info", capsys=capsys).code == 0


def test_the_dashboard_says_in_one_line_that_a_row_is_none_of_its_vocabulary_s(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store = ResultsStore.open(url)
    session = SessionRow("s1", "measured", "smoke", "k", "", utc("2026-12-01T00:00"))
    store.add_failures(session, [FailureRow("c1", session.started, "crash", "", "m", "", "")])
    with store.engine.begin() as connection:
        connection.execute(sa.update(tables.failures).values(cause="segfault"))
    store.close()
    done = in_process.run(tfperf_dashboard.main, "--store", url, "--out", str(tmp_path / "site"),
                          capsys=capsys)
    assert done.code == 2, done
    (line,) = done.err.strip().splitlines()
    assert line.startswith("tfperf-dashboard: ") and "'segfault' is not a valid" in line


def test_bisect_checks_the_environment_s_store_before_any_step(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TFPERF_STORE_URL", "mysql://u@h/db")
    done = in_process.run(tfperf_bisect.main, "specs", "a", "b", "--", "-k", "resnet20",
                          capsys=capsys)
    assert done.code == 2 and "is neither SQLite nor PostgreSQL" in done.err, done


def test_side_a_given_in_both_spellings_at_odds_is_one_line(tmp_path: Path) -> None:
    given = {"perf_baseline": "tensorflow-cpu==2.20.0", "perf_ab_side_a": "current"}
    with pytest.raises(ValueError) as refused:
        ab_options.parse(given.get, tmp_path, environ={})
    assert str(refused.value) == ("--perf-baseline 'tensorflow-cpu==2.20.0' and "
                                  "--perf-ab-side-a 'current': give one (the first is the "
                                  "second's old spelling)")
    same = {"perf_baseline": "current", "perf_ab_side_a": "current"}
    assert ab_options.parse(same.get, tmp_path, environ={}).side_a == "current"
