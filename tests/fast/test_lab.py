"""benchmarks/lab/: the session driver every study runs its sessions through, and the reader
and writer of the files the studies keep (pure: the driver's process is a stand-in here)."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import benchmark_scripts

records = benchmark_scripts.lab("records")
sessions = benchmark_scripts.lab("sessions")
STUDIES = sorted(benchmark_scripts.BENCHMARKS.glob("*.py"))


def test_appended_lines_are_read_back_in_order_from_gzip_and_plain_files(tmp_path: Path) -> None:
    for name in ("kept.jsonl.gz", "kept.jsonl"):
        path = tmp_path / "study" / name
        records.append(path, {"n": 1})  # makes the folder
        records.append(path, {"n": 2}, {"n": 3})
        assert [row["n"] for row in records.rows([path])] == [1, 2, 3]
    # One gzip member per append, as the committed files were written.
    assert gzip.decompress((tmp_path / "study" / "kept.jsonl.gz").read_bytes()) == \
        b'{"n": 1}\n{"n": 2}\n{"n": 3}\n'


def test_the_committed_raw_data_reads_as_json_lines_with_a_machine_key() -> None:
    files = sorted(records.DATA.glob("*/*.jsonl.gz"))
    assert files, records.DATA
    for path in files:
        first = next(records.rows([path]))
        assert first["machine_key"] in path.name, path


def test_a_kept_session_file_reads_whether_compressed_or_not(tmp_path: Path) -> None:
    data = {"format": "tfperf-ab/1", "cases": []}
    (tmp_path / "s.json").write_text(json.dumps(data))
    (tmp_path / "s.json.gz").write_bytes(gzip.compress(json.dumps(data).encode()))
    assert records.session(tmp_path / "s.json") == records.session(tmp_path / "s.json.gz") == data


class FakePytest:
    """subprocess.run as a session would leave things: the files it writes, its output."""

    def __init__(self, writes: list[Path], code: int = 0, late: bool = False) -> None:
        self.writes, self.code, self.late = writes, code, late
        self.calls: list[dict[str, Any]] = []

    def __call__(self, command: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        self.calls.append({"command": command, **options})
        options["stdout"].write(b"1 passed in 1.00s\n")
        for path in self.writes:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"session": path.stem}))
        if self.late:
            raise subprocess.TimeoutExpired(command, options["timeout"])
        return subprocess.CompletedProcess(command, self.code)


def test_a_session_returns_its_code_seconds_output_and_only_the_files_it_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ab, history = tmp_path / ".perf-results" / "ab", tmp_path / "history"
    old = ab / "20260101T000000Z.json"
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    fake = FakePytest([ab / "20260102T000000Z.json", ab / "20260102T000001Z.json",
                       history / "results" / "night.json"], code=1)
    monkeypatch.setattr(sessions.subprocess, "run", fake)
    done = sessions.run(["perf/", "-k", "resnet20"], cwd=tmp_path, history=history,
                        env={"MARK": "1"}, timeout=60)
    assert fake.calls[0]["command"] == [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "perf/", "-k",
        "resnet20", f"--perf-history={history}"]
    assert fake.calls[0]["cwd"] == tmp_path and fake.calls[0]["timeout"] == 60
    assert fake.calls[0]["env"]["MARK"] == "1" and "PATH" in fake.calls[0]["env"]
    assert done.code == 1 and done.seconds >= 0 and done.stdout == "1 passed in 1.00s\n"
    assert [p.name for p in done.ab_files] == ["20260102T000000Z.json", "20260102T000001Z.json"]
    assert done.ab() == {"session": "20260102T000001Z"}  # the last one it wrote
    assert done.history_files == [history / "results" / "night.json"]


def test_a_session_without_files_has_none_and_one_out_of_time_is_marked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakePytest([], late=True)
    monkeypatch.setattr(sessions.subprocess, "run", fake)
    arm = tmp_path / ".venv" / "bin" / "python"  # another checkout's environment
    done = sessions.run(["perf/"], cwd=tmp_path, python=arm, timeout=1)
    assert fake.calls[0]["command"][:3] == [str(arm), "-m", "pytest"]
    assert fake.calls[0]["env"] is None  # this process's environment, as it is
    assert done.code == sessions.TIMED_OUT and done.ab() is None and done.history_files == []
    assert done.stdout == "1 passed in 1.00s\n"  # what it said before it was stopped


def test_a_measured_session_has_no_gate_a_history_of_its_own_and_its_benchmarks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(command: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        out = Path(next(a for a in command if a.startswith("--benchmark-json=")).split("=")[1])
        out.write_text(json.dumps({"benchmarks": [{"extra_info": {"case_id": "one"}}]}))
        assert "--perf-gate=off" in command
        assert any(a.startswith("--perf-history=") and a.endswith("history") for a in command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(sessions.subprocess, "run", fake)
    assert sessions.measure(["perf/test_training.py"], cwd=tmp_path).benchmarks == \
        [{"case_id": "one"}]
    monkeypatch.setattr(sessions.subprocess, "run",
                        lambda command, **options: subprocess.CompletedProcess(command, 4))
    assert sessions.measure(["perf/test_training.py"], cwd=tmp_path).benchmarks is None


@pytest.mark.parametrize("study", STUDIES, ids=lambda p: p.stem)
def test_every_study_runs_its_pytest_sessions_through_the_lab(study: Path) -> None:
    text = study.read_text()
    assert '"-m", "pytest"' not in text, f"{study.name}: run sessions with lab.sessions"
    assert "gzip.open" not in text, f"{study.name}: read and write kept files with lab.records"



@pytest.mark.parametrize("study", STUDIES, ids=lambda p: p.stem)
def test_every_study_is_listed_with_its_question_command_and_result_page(study: Path) -> None:
    readme = benchmark_scripts.BENCHMARKS / "README.md"
    listed = [line for line in readme.read_text().splitlines()
              if line.startswith(f"| [`{study.name}`]({study.name}) |")]
    assert len(listed) == 1, f"{readme} lists {study.name} once"
    question, command, page = listed[0].split(" | ")[1:4]
    assert question.endswith("?"), question
    assert command.startswith(f"`python benchmarks/{study.name}"), command
    linked = re.fullmatch(r"\[results/(\w+)\.md\]\(results/(\w+)\.md\) \|", page)
    assert page == "— |" or (linked and linked[1] == linked[2] and
                             (readme.parent / "results" / f"{linked[1]}.md").is_file()), page
