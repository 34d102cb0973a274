"""A failed case reads as the product's answer: its message, then where to look next."""

from __future__ import annotations

from tfperf.ground.answers import GUIDE, answered, shown
from tfperf.ground.failures import CAUSES, CaseFailure


def test_every_cause_says_where_to_look_next() -> None:
    assert set(GUIDE) == set(CAUSES)


def test_an_answer_is_the_message_then_the_runners_files_then_the_guide() -> None:
    failure = CaseFailure("slower", "side B is slower: B/A 0.95 [0.94, 0.96]")
    assert shown(failure, ["the A/B session file: ab/s.json"]).splitlines() == [
        "slower: side B is slower: B/A 0.95 [0.94, 0.96]", "", "where to look next:",
        "  the A/B session file: ab/s.json", f"  {GUIDE['slower']}"]


def test_a_crash_names_its_log_once() -> None:
    crash = CaseFailure("crash", "worker killed by SIGSEGV while compiling", "Fatal Python error",
                        "compiling", "logs/case.log")
    text = shown(crash, [])
    assert "Fatal Python error" in text and text.count("logs/case.log") == 1
    named = CaseFailure("crash", "worker killed by SIGSEGV (log: logs/case.log)", "", "",
                        "logs/case.log")
    assert shown(named, []).count("logs/case.log") == 1


def test_only_a_case_s_classified_failure_is_an_answer_the_rest_keep_their_traceback() -> None:
    failure = CaseFailure("regression", "throughput -40%")
    assert answered(failure, in_a_case=True) is failure
    assert answered(failure, in_a_case=False) is None  # the XLA check's arm, a setup
    assert answered(KeyError("resnet20"), in_a_case=True) is None  # the harness's own error
    assert answered(None, in_a_case=True) is None
