"""A failure's cause is one of a closed set: read from outside the process, an unknown one is
`error`, never a new cause."""

from __future__ import annotations

from tfperf.ground.failures import CAUSES, CaseFailure, cause_of


def test_a_cause_read_from_outside_is_one_of_the_causes() -> None:
    assert [cause_of(cause) for cause in CAUSES] == list(CAUSES)
    assert cause_of("segfault") == "error"
    assert str(CaseFailure(cause_of("timeout"), "took too long", "last line")).splitlines() == [
        "timeout: took too long", "--- last lines of the worker's log ---", "last line"]
