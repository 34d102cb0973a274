"""The commands share their plumbing: one helper opens the store and always checks its URL; a
command that only reads never creates a store and says there is none; a global option is taken
before or after the subcommand."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

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
from tfperf.storage.results_store import ResultsStore

NONE_THERE = "results store: there is none at sqlite:///"


@pytest.mark.parametrize(("main", "args"), [
    (tfperf_store.main, ["--store", "{url}", "info"]),
    (tfperf_store.main, ["--store", "{url}", "export", "--out", "{tmp}/export"]),
    (tfperf_store.main, ["prune", "--older-than", "180d", "--store", "{url}"]),
    (tfperf_dashboard.main, ["--store", "{url}", "--out", "{tmp}/site"]),
    (tfperf_notify.main, ["webhook", "--store", "{url}", "--dry-run"]),
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


@pytest.mark.parametrize("store_first", [True, False])
def test_the_store_is_named_before_or_after_the_subcommand(
        store_first: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/store.sqlite3"
    ResultsStore.open(url).close()
    args = ["--store", url, "info"] if store_first else ["info", "--store", url]
    done = in_process.run(tfperf_store.main, *args, capsys=capsys)
    assert done.code == 0 and done.out.startswith(f"sqlite:///{tmp_path}/store.sqlite3: "), done
    # Given on neither side, the default is the project's; given before, a subcommand's
    # absent option does not replace it.
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
