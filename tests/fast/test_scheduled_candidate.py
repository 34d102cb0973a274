"""A scheduled night's candidate: a release newer than the pinned TensorFlow, else the
newest nightly, else none, said in one line; never the pinned build against itself. The
command against the real package index: tests/real/test_bisect.py."""

from __future__ import annotations

import pytest

from tfperf.bisect.scheduled import choose, newest_nightly
from tfperf.commands import tfperf_candidate

RELEASES = ["2.20.0", "2.21.0", "2.22.0rc0", "2.22.0rc1"]
# tf-nightly's versions: the major jumped between dates, so the newest is the newest date.
NIGHTLIES = ["2.22.0.dev20261125", "2.22.0.dev20261126", "2.21.0.dev20261101", "not-a-version",
             "3.0.0.dev20261120"]


def test_a_release_newer_than_the_pinned_one_is_the_candidate() -> None:
    chosen = choose("2.21.0", [*RELEASES, "2.21.1", "2.22.0"], NIGHTLIES)
    assert chosen.spec == "tensorflow[and-cuda]==2.22.0"
    assert chosen.line == ("candidate: tensorflow[and-cuda]==2.22.0, the newest release, newer "
                           "than the pinned 2.21.0")


def test_otherwise_the_newest_nightly_by_its_date_and_never_a_release_candidate() -> None:
    chosen = choose("2.21.0", RELEASES, NIGHTLIES)
    assert chosen.spec == "tf-nightly[and-cuda]==2.22.0.dev20261126"
    assert chosen.line == ("candidate: tf-nightly[and-cuda]==2.22.0.dev20261126, the newest "
                           "nightly (2026-11-26); no release is newer than the pinned 2.21.0")
    cpu = choose("2.21.0", RELEASES, NIGHTLIES, "tensorflow-cpu", "tf-nightly-cpu")
    assert cpu.spec == "tf-nightly-cpu==2.22.0.dev20261126"


def test_a_night_that_follows_tf_nightly_takes_the_newest_nightly_whatever_the_releases(
        ) -> None:
    followed = newest_nightly(NIGHTLIES)
    assert (followed.spec, followed.line) == ("tf-nightly[and-cuda]==2.22.0.dev20261126",
                                              "the newest nightly (2026-11-26)")
    assert newest_nightly(["2.21.0", "oops"], "tf-nightly").line == \
        "no nightly: the index has no dated tf-nightly"


def test_no_newer_release_and_no_nightly_is_no_candidate_said_in_one_line() -> None:
    chosen = choose("2.21.0", RELEASES, [])
    assert chosen.spec is None
    assert chosen.line == ("no candidate: no release of tensorflow is newer than the pinned "
                           "2.21.0, and the index has no tf-nightly: no A/B tonight")


@pytest.mark.parametrize(("args", "says"), [
    (["--pinned", "two"], "--pinned: 'two' is not a version (e.g. 2.16.2)"),
    (["--pinned", "2.21.0", "--nightly-package", "tf nightly!"],
     "--nightly-package: 'tf nightly!' is not a package name (e.g. tensorflow-cpu, "
     "tensorflow[and-cuda], tf-nightly)"),
])
def test_bad_input_is_one_line_before_the_index_is_asked(
        args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        tfperf_candidate.main(args)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(says)
