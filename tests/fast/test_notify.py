"""tfperf-notify: the store's findings (streaks of regressions and failures, slower A/B cases,
culprits), posted to a real HTTP server on 127.0.0.1 (tests/helpers/webhook_receiver.py) once
each, in Slack's form or a generic one; what was sent is remembered in the store (or a ledger
file), and a post the receiver refused is tried again. Every store is a real SQLite file."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.webhook_receiver import receiver
from tfperf.commands import tfperf_notify
from tfperf.ground.vocabulary import ABCaseOutcome, Cause, RunVerdict
from tfperf.notify import messages
from tfperf.storage import findings, notifications
from tfperf.storage.results_store import ABCaseRow, BisectRow, FailureRow, ResultsStore, SessionRow

NIGHT = datetime.datetime(2026, 11, 1, 2, 17, tzinfo=datetime.UTC)
M1, M2 = "Linux-py3.11-tf2.21.0-1xNVIDIA_H100-r1", "Linux-py3.11-tf2.21.0-1xNVIDIA_A100-r2"


def _session(night: int, machine: str = M1, kind: str = "measured") -> SessionRow:
    return SessionRow(f"n{night}-{machine[-2:]}-{kind}", kind, "nightly",  # type: ignore[arg-type]
                      machine, "0" * 40, NIGHT + datetime.timedelta(days=night))


def _run(store: ResultsStore, night: int, case: str, verdict: RunVerdict = "ok", machine: str = M1,
         reason: str = "") -> None:
    session = _session(night, machine)
    store.add_runs(session, [{"case_id": case, "when": session.started.isoformat(),
                              "examples_per_sec": 1000.0 if verdict == "ok" else 870.0,
                              "verdict": verdict, "reason": reason}])
    if verdict == "regression":  # the gate keeps a confirmed regression as a failure too
        _fail(store, night, case, "regression", machine)


def _fail(store: ResultsStore, night: int, case: str, cause: Cause, machine: str = M1) -> None:
    session = _session(night, machine)
    store.add_failures(session, [FailureRow(case, session.started, cause, "call",
                                            f"E   {cause} <here> & there", "logs/x.log", "tail")])


def _history(store: ResultsStore) -> None:
    """c1 regresses on nights 2-3, runs clean on 4, regresses again on 5; c2 crashes on nights
    3-4 on one machine and on 4 on another; an A/B calls c1 slower; a bisection names a
    culprit (its step, also slower, is not a finding of its own); another names none."""
    for night in range(1, 6):
        _run(store, night, "c1", "regression" if night in (2, 3, 5) else "ok",
             reason="examples/s -13.0% beyond its threshold -4.1% (p 0.001), confirmed")
        if night in (3, 4):
            _fail(store, night, "c2", "crash")
        else:
            _run(store, night, "c2")
    _fail(store, 4, "c2", "crash", M2)
    compared: list[tuple[str, ABCaseOutcome]] = [
        ("ab-candidate", "slower"), ("bis1-step-2.22.0", "slower"), ("ab-other", "same")]
    for session, verdict in compared:
        row = replace_id(_session(5, kind="ab"), session)
        store.add_ab_cases(row, [ABCaseRow("c1", row.started, verdict, 0.91, 0.89, 0.93, 64,
                                           {})])
    for id_, culprit in (("bis1", "tensorflow==2.22.0"), ("bis2", None)):
        store.add_bisect(BisectRow(id_, NIGHT + datetime.timedelta(days=6), M1, "c1",
                                   "tensorflow", "found" if culprit else "undecided", culprit,
                                   "tensorflow==2.21.0" if culprit else None, {}))


def replace_id(row: SessionRow, id_: str) -> SessionRow:
    return SessionRow(id_, row.kind, row.tier, row.machine_key, row.commit, row.started)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = ResultsStore.open(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    yield opened
    opened.close()


def test_a_streak_is_one_finding_from_the_session_that_began_it(store: ResultsStore) -> None:
    _history(store)
    found = findings.read(store.engine)
    assert [(f.kind, f.case_id, f.machine_key, f.key.rsplit(":", 1)[1], f.sessions)
            for f in found] == [
        ("regression", "c1", M1, "n2-r1-measured", 2),
        ("failure", "c2", M1, "n3-r1-measured", 2),
        ("failure", "c2", M2, "n4-r2-measured", 1),
        ("ab-slower", "c1", M1, "ab-candidate", 1),  # the same night: by key
        ("regression", "c1", M1, "n5-r1-measured", 1),
        ("culprit", "c1", M1, "bis1", 1)]
    first = found[0]
    day = datetime.timedelta(days=1)
    assert (first.last, first.ended, first.before, first.factor) == (NIGHT + 3 * day,
                                                                     NIGHT + 4 * day, 1000.0, 0.87)
    assert found[4].ended is None and found[4].before == 1000.0  # open: nothing ran clean since
    assert found[1].ended == NIGHT + 5 * day and found[1].factor is None
    assert found[2].ended is None and found[5].origin == "bis1"
    assert first.summary == f"c1 regressed on {M1}"
    assert first.detail == ("870.0 examples/s: examples/s -13.0% beyond its threshold -4.1% "
                            "(p 0.001), confirmed (2 sessions in a row)")
    assert found[1].detail == "crash in call: E   crash <here> & there (2 sessions in a row)"
    assert found[3].detail == "B/A 0.910 [0.890, 0.930] over 64 pairs (A/B session ab-candidate)"
    assert found[5].summary == f"c1 slower since tensorflow==2.22.0 on {M1}"
    later = findings.read(store.engine, since=NIGHT + datetime.timedelta(days=4))
    assert [f.key.rsplit(":", 1)[1] for f in later] == ["n4-r2-measured", "ab-candidate",
                                                        "n5-r1-measured", "bis1"]
    assert [f.kind for f in findings.read(store.engine, kinds=("culprit",))] == ["culprit"]


def _notify(store: ResultsStore, url: str, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str, str]:
    monkeypatch.setenv(tfperf_notify.URL_ENV, url)
    code = tfperf_notify.main(["webhook", "--store", str(store.engine.url), "--since", "3650d",
                               *more])
    out, err = capsys.readouterr()
    return code, out, err


def test_each_finding_reaches_a_webhook_once_and_a_refused_post_is_tried_again(
        store: ResultsStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _history(store)
    with receiver() as hook:
        code, out, err = _notify(store, hook.url, monkeypatch, capsys, "--dry-run")
        assert code == 0 and json.loads(out)["text"].startswith("tfperf: 6 new findings")
        assert "a dry run: 6 findings not sent" in err and hook.posts == []
        hook.statuses = [500]
        code, out, err = _notify(store, hook.url, monkeypatch, capsys, "--format", "json")
        assert code == 2 and err.count("\n") == 1
        assert "the webhook at 127.0.0.1 answered HTTP 500: invalid_payload" in err
        assert "T0KEN" not in out + err
        assert notifications.every(store.engine) == []  # refused: nothing remembered
        code, out, _ = _notify(store, hook.url, monkeypatch, capsys, "--format", "json",
                               "--link", "https://ci.example/run/7")
        assert code == 0 and "tfperf: 6 new findings (2 regressions, 2 failures, 1 ab-slower, "\
            "1 culprit): sent (HTTP 200)" in out
        assert len(hook.posts) == 2
        assert hook.posts[0][1]["findings"] == hook.posts[1][1]["findings"]
        path, sent = hook.posts[1]
        assert path == "/services/T0KEN-s3cr3t" and sent["link"] == "https://ci.example/run/7"
        assert [f["key"] for f in sent["findings"]] == [f.key for f in
                                                        findings.read(store.engine)]
        assert _notify(store, hook.url, monkeypatch, capsys)[1].startswith(
            "tfperf-notify: nothing new")
        assert len(hook.posts) == 2
        _fail(store, 6, "c3", "timeout")  # a new night's failure: only it goes
        assert _notify(store, hook.url, monkeypatch, capsys, "--format", "json")[0] == 0
        assert [f["case_id"] for f in hook.posts[2][1]["findings"]] == ["c3"]
        kept = notifications.every(store.engine)
        assert len(kept) == 7 and {k.destination for k in kept} == {
            notifications.destination(hook.url)}
    with receiver("another-channel") as slack:  # another webhook has been sent nothing
        code, out, _ = _notify(store, slack.url, monkeypatch, capsys)
        assert code == 0 and len(slack.posts) == 1
        blocks = slack.posts[0][1]["blocks"]
        assert slack.posts[0][1]["text"].startswith("tfperf: 7 new findings")
        assert blocks[0]["type"] == "header" and len(blocks) == 8
        assert "crash &lt;here&gt; &amp; there" in blocks[2]["text"]["text"]


def test_a_store_rebuilt_each_night_remembers_what_was_sent_through_its_ledger(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    ledger = tmp_path / "history" / "notified.jsonl"
    with receiver() as hook:
        for night in (1, 2):
            rebuilt = ResultsStore.open(f"sqlite:///{tmp_path / f'night{night}.sqlite3'}")
            _history(rebuilt)
            if night == 2:
                _fail(rebuilt, 6, "c3", "timeout")
            code, _, _ = _notify(rebuilt, hook.url, monkeypatch, capsys, "--ledger", str(ledger))
            rebuilt.close()
            assert code == 0
        assert [len(p["blocks"]) for _, p in hook.posts] == [7, 2]
    assert len(ledger.read_text().splitlines()) == 7
    ledger.write_text("not json\n")
    rebuilt = ResultsStore.open(f"sqlite:///{tmp_path / 'night3.sqlite3'}")
    code, _, err = _notify(rebuilt, "https://hooks.example/x", monkeypatch, capsys, "--ledger",
                           str(ledger))
    rebuilt.close()
    assert code == 2 and f"{ledger} is not a tfperf-notify ledger" in err


def test_bad_input_is_one_line_that_never_shows_the_webhook_s_url(
        store: ResultsStore, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for url, said in (("", "no webhook: set $TFPERF_WEBHOOK_URL to its URL (it is never an "
                           "argument)"),
                      ("ftp://hooks.example/T0KEN", "$TFPERF_WEBHOOK_URL: the webhook URL is not "
                                                   "an https or http URL with a host")):
        monkeypatch.setenv(tfperf_notify.URL_ENV, url)
        with pytest.raises(SystemExit) as exited:
            tfperf_notify.main(["webhook", "--store", str(store.engine.url)])
        err = capsys.readouterr().err
        assert exited.value.code == 2 and said in err and "T0KEN" not in err
    with pytest.raises(SystemExit):
        tfperf_notify.main(["webhook", "--since", "7"])
    assert "argument --since: '7' is not a number of days like 180d" in capsys.readouterr().err
    monkeypatch.setenv(tfperf_notify.URL_ENV, "http://127.0.0.1:9/T0KEN")  # nothing listens
    _fail(store, 1, "c1", "crash")
    code = tfperf_notify.main(["webhook", "--store", str(store.engine.url), "--since", "3650d"])
    err = capsys.readouterr().err
    assert code == 2 and "the webhook at 127.0.0.1 was not reached" in err and "T0KEN" not in err


def test_a_slack_message_keeps_within_slack_s_limits() -> None:
    many = [findings.Finding(f"failure:m:c{i}:s", "failure", f"c{i}", "m", NIGHT, f"c{i} <b>",
                             "x" * 5000) for i in range(60)]
    sent = messages.slack(many, "https://ci.example/run/1")
    assert len(sent["blocks"]) <= 50
    assert sent["blocks"][-2]["elements"][0]["text"] == "and 20 more: the dashboard lists every one"
    assert sent["blocks"][-1]["elements"][0]["text"] == "<https://ci.example/run/1|the run>"
    assert all(len(b["text"]["text"]) <= 3000 for b in sent["blocks"][1:41])
    assert sent["blocks"][1]["text"]["text"].startswith("*c0 &lt;b&gt;*\n")
    assert json.loads(json.dumps(messages.generic(many, None)))["findings"][0]["began"] == \
        NIGHT.isoformat()
