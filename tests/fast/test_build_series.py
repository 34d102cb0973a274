"""A case's series across TensorFlow builds: its runs on one kind of machine under every build,
in build order, kept in a real SQLite store and read back by one query (the store's schema
from 0009: tests/fast/test_results_store.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers import gate_runs
from tfperf.commands import store_series, tfperf_store
from tfperf.ground.machine import kind_of_key
from tfperf.storage import build_series, database, tables
from tfperf.storage.errors import StorageError
from tfperf.storage.fingerprint import Fingerprint
from tfperf.storage.results_store import ResultsStore, SessionRow
from tfperf.storage.timestamps import utc

KIND = "Linux-py3.11-AMD_EPYC-avx512bf16-2cpu"


def _key(tensorflow: str) -> str:
    return KIND.replace("-AMD", f"-tf{tensorflow}-AMD")


def test_a_machine_kind_is_its_key_without_the_tensorflow() -> None:
    for tensorflow in ("2.21.0", "2.22.0rc0", "2.22.0-rc0", "2.23.0-dev20261026",
                       "2.23.0.dev20261026"):
        assert kind_of_key(_key(tensorflow)) == KIND
    assert kind_of_key(_key("2.21.0") + "-1xNVIDIA_H100-virtual") == KIND + "-1xNVIDIA_H100-virtual"


def test_the_series_key_leaves_out_the_build_and_nothing_else() -> None:
    hard = dict(gate_runs.HARD, tensorflow_git="v2.21.0-0-gabc", cuda=None, cudnn=None)
    same = Fingerprint(hard).series_key
    assert Fingerprint(dict(hard, tensorflow="2.22.0rc0", tensorflow_git="v2.22.0rc0")).series_key \
        == same
    assert Fingerprint(dict(hard, config="other")).series_key != same
    assert Fingerprint(dict(hard, cpu_cores=4)).series_key != same
    assert Fingerprint(hard).key != Fingerprint(dict(hard, tensorflow="2.22.0")).key


def _store_with_builds(tmp_path: Path, builds: list[tuple[str, float]],
                       keras: list[str] | None = None) -> ResultsStore:
    """A SQLite store with one session a build, each running CASE once at its examples/s (its
    loss after the rounds 1000 / examples/s; under `keras[i]` where given), the builds run in
    the order given (day 1, 2, ...)."""
    store = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    for day, (tensorflow, eps) in enumerate(builds, 1):
        hard = dict(gate_runs.HARD, tensorflow=tensorflow, tensorflow_git=f"v{tensorflow}")
        run = gate_runs.run(eps, day, hard=hard, session=f"s{day}").to_json()
        run["figures"] = {"loss_last": 1000.0 / eps}
        if keras:
            run["fingerprint"]["soft"]["keras"] = keras[day - 1]
        session = SessionRow(f"s{day}", "measured", "smoke", _key(tensorflow), "",
                             utc(run["when"]))
        assert store.add_runs(session, [run]) == 1
    return store


def test_a_case_s_runs_under_every_build_come_back_in_build_order(tmp_path: Path) -> None:
    # Run out of order: a nightly after the release candidate, a second run of 2.21.0 last.
    store = _store_with_builds(tmp_path, [
        ("2.22.0rc0", 980.0), ("2.21.0", 1000.0), ("2.22.0-dev20260105", 990.0),
        ("2.22.0", 985.0), ("2.19.0", 1010.0), ("2.21.0", 1004.0)])
    try:
        (series,) = store_series.chosen(store, gate_runs.CASE, KIND)
        assert [b.label for b in series.builds] == [
            "2.19.0", "2.21.0", "2.22.0-dev20260105", "2.22.0rc0", "2.22.0"]
        assert series.runs == 6 and series.builds[1].sessions == ["s2", "s6"]
        assert series.builds[1].median("examples_per_sec") == pytest.approx(1002.0)
        text = store_series.table(series)
        assert text.splitlines()[0].startswith(f"{gate_runs.CASE} on {KIND} (configuration ")
        assert "-1.2%" in text.splitlines()[4]  # the nightly against 2.21.0's median, 1,002
        # The query is served by the index on (case, kind, time).
        with store.engine.connect() as connection:
            plan = connection.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT id FROM runs WHERE case_id = ? AND machine_kind = ? "
                "ORDER BY \"when\"", (gate_runs.CASE, KIND)).all()
        assert "runs_by_case_and_kind" in " ".join(str(row) for row in plan)
    finally:
        store.close()


def test_a_case_or_kind_the_store_lacks_is_one_line_that_says_what_is_there(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store_with_builds(tmp_path, [("2.21.0", 1000.0)])
    try:
        with pytest.raises(StorageError, match=rf"its kinds of machine there: {KIND}\)$"):
            store_series.chosen(store, gate_runs.CASE, "Linux-py3.11-other-2cpu")
        with pytest.raises(StorageError, match=r"no runs of nocase in .*: give a case id"):
            store_series.chosen(store, "nocase", None)
    finally:
        store.close()
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    assert tfperf_store.main(["--store", url, "series", gate_runs.CASE]) == 0
    assert "2.21.0" in capsys.readouterr().out
    assert tfperf_store.main(["--store", url, "series", "nocase"]) == 2
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and said.startswith("tfperf-store: no runs of nocase")


def test_runs_kept_before_0009_join_their_series_on_upgrade(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    engine = database.connect(url)
    database.migrate(engine, to="0008")
    old = {name: sa.Table(name, sa.MetaData(), autoload_with=engine)
           for name in ("sessions", "runs")}
    with engine.begin() as connection:
        for day, tensorflow in ((1, "2.22.0rc0"), (2, "2.21.0")):
            document = gate_runs.run(1000.0, day, hard=dict(gate_runs.HARD,
                                                            tensorflow=tensorflow)).to_json()
            connection.execute(old["sessions"].insert().values(
                id=f"s{day}", kind="measured", tier="smoke", machine_key=_key(tensorflow),
                commit="", started=utc(document["when"]), source="session"))
            connection.execute(old["runs"].insert().values(
                session_id=f"s{day}", case_id=gate_runs.CASE, machine_key=_key(tensorflow),
                when=utc(document["when"]), tensorflow=tensorflow, git_hash="",
                examples_per_sec=1000.0, verdict="ok", document=document))
    engine.dispose()
    store = ResultsStore.open(url)
    try:
        with store.engine.connect() as connection:
            kept = connection.execute(sa.select(tables.runs.c.machine_kind,
                                                tables.runs.c.series_key)).all()
        assert {k for k, _ in kept} == {KIND} and len({s for _, s in kept}) == 1
        (series,) = build_series.of_rows(store.series(gate_runs.CASE, KIND))
        assert [b.label for b in series.builds] == ["2.21.0", "2.22.0rc0"]
    finally:
        store.close()


def test_the_case_page_draws_the_series_with_its_builds_in_order_on_the_x_axis(
        tmp_path: Path) -> None:
    from tfperf.dashboard import build_plots, site, site_data

    store = _store_with_builds(tmp_path, [("2.22.0rc0", 980.0), ("2.21.0", 1000.0),
                                          ("2.22.0-dev20260105", 990.0)])
    try:
        data = site_data.read(store)
        site.build(data, tmp_path / "site", workers=1)
    finally:
        store.close()
    (series,) = build_plots.series_of(gate_runs.CASE, data.runs[gate_runs.CASE])
    assert series.machine_kind == KIND and len(series.builds) == 3
    page = (tmp_path / "site" / "cases" / f"{gate_runs.CASE}.html").read_text()
    assert '<h2 id="builds">By TensorFlow build</h2>' in page
    factors = page.index('"factors"')
    assert page.index('"2.21.0"', factors) < page.index('"2.22.0-dev20260105"', factors) < \
        page.index('"2.22.0rc0"', factors)
    # One build: nothing to draw across builds.
    assert build_plots.builds_plot(gate_runs.CASE, data.runs[gate_runs.CASE][:1]) is None


def test_runs_of_one_tensorflow_under_another_keras_are_builds_of_their_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # keras-nightly beside 2.21.0 on the third night; a run kept before Keras was recorded first.
    store = _store_with_builds(tmp_path, [("2.21.0", 1000.0), ("2.21.0", 1002.0),
                                          ("2.21.0", 800.0), ("2.21.0", 1001.0)],
                               keras=["", "3.13.2", "3.14.0.dev2026120603", "3.13.2"])
    try:
        (series,) = store_series.chosen(store, gate_runs.CASE, KIND)
    finally:
        store.close()
    assert [b.label for b in series.builds] == [
        "2.21.0", "2.21.0 + keras 3.13.2", "2.21.0 + keras 3.14.0.dev2026120603"]
    assert series.builds[1].sessions == ["s2", "s4"]
    # The numerics' figure, the loss after the measured rounds, by build.
    assert series.builds[2].median("loss_last") == pytest.approx(1.25)
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    assert tfperf_store.main(["--store", url, "series", gate_runs.CASE]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("2.21.0 + keras 3.14.0.dev2026120603") and last.endswith("1.25"), last


def test_a_keras_change_is_a_soft_difference_and_none_recorded_before_is_not_one() -> None:
    hard = dict(gate_runs.HARD)
    before, now = Fingerprint(hard, {"keras": None}), Fingerprint(hard, {"keras": "3.13.2"})
    assert now.soft_differences(before) == []  # kept before Keras was recorded
    later = Fingerprint(hard, {"keras": "3.14.0"})
    assert later.soft_differences(now) == ["keras: '3.13.2' -> '3.14.0'"]
    assert later.key == now.key  # the same history: Keras does not split it
