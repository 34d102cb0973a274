"""The bisection's search and its error budget, without sessions: which step compares what, how
skipped, undecided and out-of-time steps end it, and, by simulating every step's A/B session
through the verdict code itself, that a named culprit is wrong at most 5% of the time when it
slows the case by twice the A/B floor. The real sessions: test_bisect.py."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from tfperf.ab.verdict import Status
from tfperf.bisect import bisection, followed, levels, report, search
from tfperf.bisect import simulated_bisections as simulate
from tfperf.bisect.candidates import Candidate
from tfperf.bisect.levels import Level
from tfperf.bisect.search import Judged, Unusable
from tfperf.ground import vocabulary
from tfperf.options.ab_settings import ABSettings

FLOOR = 0.015


def _exact(speeds: list[float], unusable: frozenset[int] = frozenset(),
           undecided: frozenset[tuple[int, int]] = frozenset(),
           width: float = 0.005) -> search.Judge:
    """A judge that knows the truth: B/A exactly, an interval of +-`width`; the steps of
    `undecided` (candidate, against) stay undecided."""

    def judge(candidate: int, against: int, level: Level) -> search.Result:
        if candidate in unusable:
            return Unusable("does not build")
        ratio = speeds[candidate] / speeds[against]
        low, high = ratio - width, ratio + width
        status: Status = ("undecided" if (candidate, against) in undecided
                          else "slower" if high < 1 - level.floor
                          else "faster" if low > 1 + level.floor else "same")
        return Judged(status, ratio, low, high, 16, 1.0)

    return judge


@pytest.mark.parametrize("culprit", range(1, 16))
def test_every_culprit_of_sixteen_is_found_in_the_planned_steps(culprit: int) -> None:
    speeds = simulate.profile(16, {culprit: 0.10})
    found = search.run(16, _exact(speeds), FLOOR)
    assert found.outcome == search.FOUND and found.culprit == culprit
    assert found.good == culprit - 1
    assert len(found.steps) <= found.planned == 1 + math.ceil(math.log2(15))
    assert found.steps[0].role == search.CONFIRM and found.steps[0].candidate == 15
    assert all(s.against == 0 for s in found.steps[:2])  # each step against the good end
    # The confirmation admits a slowdown of at least 9.5%: the steps' floor is half of it.
    assert found.floor == pytest.approx((1 - (1 / 1.1 + 0.005)) / 2)


def test_a_change_below_the_steps_floor_is_passed_over_and_named() -> None:
    # 16 commits: a 2% change at 4, a 10% one at 11 (the self-test's and the proof's history).
    speeds = simulate.profile(16, {4: 0.02, 11: 0.10})
    found = search.run(16, _exact(speeds), FLOOR)
    assert found.culprit == 11
    below = found.below_floor()
    assert below and all(s.against < 4 <= s.candidate for s in below)


def test_a_change_below_the_floor_that_a_same_interval_holds_is_said_not_excluded() -> None:
    # The 2% commit under intervals of +-2.5%: the step over it says `same` with 1 inside.
    speeds = simulate.profile(16, {4: 0.02, 11: 0.10})
    found = search.run(16, _exact(speeds, width=0.025), FLOOR, floor=0.05)
    assert found.culprit == 11 and found.below_floor() == []
    over_small = [s for s in found.not_excluded() if s.against < 4 <= s.candidate]
    assert [(s.candidate, s.against) for s in over_small] == [(7, 0)]
    doc = report.document(found, [Candidate(f"c{i}", "") for i in range(16)], "case",
                          "commits", "id", "key", FLOOR)
    assert ("- not excluded: c0 to c7 said same, B/A 0.980 ([0.955, 1.005]): a slowdown of up "
            "to 4.5%, below the steps' floor of 5.0%, may lie there, which this bisection does "
            "not look for") in report.conclusion(doc), report.conclusion(doc)
    del doc["not_excluded"]  # a document kept before the list existed still reads
    assert not any(line.startswith("- not excluded") for line in report.conclusion(doc))


def test_skipped_candidates_are_passed_over_and_a_range_of_only_skipped_ones_is_said() -> None:
    speeds = simulate.profile(8, {5: 0.10})
    found = search.run(8, _exact(speeds, frozenset({3})), FLOOR)
    assert found.culprit == 5 and found.skipped == {3: "does not build"}
    assert [s.candidate for s in found.steps] == [7, 3, 4, 5]
    found = search.run(8, _exact(speeds, frozenset({4, 5, 6})), FLOOR)
    assert found.outcome == vocabulary.SKIPPED and (found.good, found.bad) == (3, 7)
    assert set(found.skipped) == {4, 5, 6}


def test_an_undecided_step_asks_the_other_half_and_both_undecided_stop_with_the_range() -> None:
    speeds = simulate.profile(16, {11: 0.10})
    # 7 against 0 undecided: 15 against 7 says slower, so the slowdown lies after 7.
    found = search.run(16, _exact(speeds, undecided=frozenset({(7, 0)})), FLOOR)
    assert found.culprit == 11
    assert [(s.role, s.candidate, s.against) for s in found.steps[1:3]] == [
        (search.BISECT, 7, 0), (search.OTHER_HALF, 15, 7)]
    assert found.below_floor() == [found.steps[1]]  # reported as a change not split
    doc = report.document(found, [Candidate(f"c{i}", "") for i in range(16)], "case",
                          "commits", "id", "key", FLOOR)
    assert any(line.startswith("- not split: c0 to c7 stayed undecided, B/A 1.000")
               for line in report.conclusion(doc)), report.conclusion(doc)
    assert report.table(doc)[5].startswith("3 (other half)  c15")
    # 11 against 7 undecided: 15 against 11 says same, so the slowdown lies at 11 or before.
    found = search.run(16, _exact(speeds, undecided=frozenset({(11, 7)})), FLOOR)
    assert found.culprit == 11 and (search.OTHER_HALF, 15, 11) in [
        (s.role, s.candidate, s.against) for s in found.steps]
    found = search.run(16, _exact(speeds, undecided=frozenset({(7, 0), (15, 7)})), FLOOR)
    assert found.outcome == vocabulary.UNDECIDED and found.culprit is None
    assert (found.good, found.bad) == (0, 15) and len(found.steps) == 3
    assert found.below_floor() == []  # nothing was passed: the range itself is the answer


def test_ends_that_are_not_apart_and_an_end_that_fails_stop_at_the_confirmation() -> None:
    ends = [Candidate(f"c{i}", "") for i in range(8)]
    for speeds, says in ((simulate.profile(8, {}), "nothing to bisect: the bad end c7 is not "
                          "slower than the good end c0 (B/A 1.000 [0.995, 1.005] over "),
                         (simulate.profile(8, {3: -0.2}), "nothing to bisect: the good end c0 "
                          "is not good, it is slower than the bad end c7 (B/A 1.250 ")):
        found = search.run(8, _exact(speeds), FLOOR)
        assert found.outcome == search.NOT_APART and len(found.steps) == 1
        # The one line tfperf-bisect ends with (a real run of the second: test_bisect.py).
        doc = report.document(found, ends, "case", "commits", "id", "key", FLOOR)
        assert bisection.stopped(doc).startswith(says), bisection.stopped(doc)
    found = search.run(8, _exact(simulate.profile(8, {}), undecided=frozenset({(7, 0)})), FLOOR)
    doc = report.document(found, ends, "case", "commits", "id", "key", FLOOR)
    assert bisection.stopped(doc).startswith(
        "nothing to bisect: the bad end c7 against the good end c0 is undecided (B/A 1.000 ")
    assert bisection.stopped(doc).endswith("; give more --pairs")
    found = search.run(8, _exact(simulate.profile(8, {3: 0.1}), frozenset({7})), FLOOR)
    assert found.outcome == search.END_FAILED


def test_no_step_starts_once_the_budget_is_spent() -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 100.0  # each look at the clock: 100 s later
        return now[0]

    found = search.run(16, _exact(simulate.profile(16, {11: 0.1})), FLOOR, budget_s=250,
                       clock=clock)
    assert found.outcome == search.OUT_OF_TIME and found.culprit is None
    assert found.good < 11 <= found.bad and len(found.steps) < found.planned


def test_each_compares_every_candidate_with_the_last_one_measured() -> None:
    speeds = simulate.profile(6, {2: 0.1, 4: -0.1})
    found = search.each(6, _exact(speeds, frozenset({3})), FLOOR)
    assert [(s.candidate, s.against) for s in found.steps] == [(1, 0), (2, 1), (3, 2), (4, 2),
                                                               (5, 4)]
    assert [s.result.verdict if isinstance(s.result, Judged) else "skipped"
            for s in found.steps] == ["same", "slower", "skipped", "faster", "same"]
    assert {s.level.alpha for s in found.steps} == {levels.ERROR / 5}


def test_each_reports_every_change_and_every_step_it_could_not_decide() -> None:
    speeds = simulate.profile(5, {2: 0.1})
    found = search.each(5, _exact(speeds, undecided=frozenset({(4, 3)})), FLOOR)
    doc = report.document(found, [Candidate(f"v{i}", f"v{i}") for i in range(5)], "case",
                          "tensorflow", "id", "key", FLOOR)
    said = report.conclusion(doc)
    assert said[1].startswith("- v1 to v2: **slower**, B/A 0.909")
    assert said[2] == ("- v3 to v4: **undecided**, B/A 1.000 [0.995, 1.005] (its interval "
                       "reaches both within the floor and beyond it)")
    assert not any("no change" in line for line in said)
    found = search.each(3, _exact(simulate.profile(3, {})), FLOOR)
    said = report.conclusion(report.document(found, [Candidate(f"v{i}", f"v{i}") for i in
                                                     range(3)], "case", "tensorflow", "id",
                                             "key", FLOOR))
    assert said[1] == "- no change beyond the floor (1.5%) anywhere"


def test_the_levels_spend_at_most_the_error_however_many_verdicts_skips_force() -> None:
    for count in (2, 3, 9, 16, 17, 100):
        planned = levels.planned_verdicts(count)
        spent = sum(levels.step_alpha(n, planned) for n in range(1, planned + 60))
        assert spent <= levels.ERROR * (1 + 1e-12)
    assert levels.planned_verdicts(16) == 5 and levels.step_alpha(1, 5) == pytest.approx(0.05 / 6)
    assert levels.step_floor(0.88, 0.015) == pytest.approx(0.06)
    assert levels.step_floor(0.98, 0.015) == 0.015


# The A/B grid's conditions (docs/ab.md): per-pair SD and a worker process's own offset.
NOISE = [simulate.Noise(0.015, 0.01), simulate.Noise(0.02, 0.009), simulate.Noise(0.035, 0.006)]


@pytest.mark.parametrize("noise", NOISE, ids=lambda n: f"pair{n.pair_sd}-duet{n.duet_sd}")
def test_a_culprit_of_twice_the_floor_is_named_wrongly_at_most_5_percent(
        noise: simulate.Noise) -> None:
    settings = ABSettings()
    change = simulate.change_of_twice(settings.floor)
    wrong = right = runs = 0
    for culprit in (3, 8, 14):  # early, middle, late among 16
        w, r, _ = simulate.wrong_rate(16, culprit, change, noise, settings, 40, seed=culprit)
        wrong, right, runs = wrong + w, right + r, runs + 40
    low, high = simulate.binomial_interval(wrong, runs)
    assert high < 0.05, (wrong, runs, (low, high))
    assert right > 0  # it does name culprits at this size, not only stop undecided


def test_what_else_differs_between_a_step_s_sides_is_in_the_report() -> None:
    """A step whose sides differ beyond their candidates (a development keras came
    along with one) says so in the bisection's report and keeps it in its document."""
    speeds = simulate.profile(4, {3: 0.10})
    exact = _exact(speeds)
    keras = [{"kind": "package", "name": "keras", "A": "3.15.1", "B": "3.16.0.dev2026102704"}]

    def judge(candidate: int, against: int, level: Level) -> search.Result:
        found = exact(candidate, against, level)
        assert isinstance(found, Judged)
        return replace(found, differences=keras if candidate == 3 else [])

    result = search.run(4, judge, FLOOR)
    doc = report.document(result, [Candidate(f"v{i}", f"v{i}") for i in range(4)], "case",
                          "tensorflow", "id", "key", FLOOR)
    steps = [n for n, s in enumerate(doc["steps"], 1) if s["candidate"] == 3]
    assert steps and all(doc["steps"][n - 1]["differences"] == keras for n in steps)
    said = report.markdown(doc)
    for n in steps:
        assert f"- step {n}: sides differ in: keras 3.15.1 -> 3.16.0.dev2026102704" in said
    assert said.count("- step ") == len(steps)


def test_a_cost_that_grew_is_bisected_as_a_slowdown_is_and_reported_as_the_cost() -> None:
    # Peak memory 1.5x from candidate 9 on: each step's cost verdict against a 10% floor.
    memory = [1.0 if c < 9 else 1.5 for c in range(16)]

    def judge(candidate: int, against: int, level: Level) -> search.Result:
        ratio = memory[candidate] / memory[against]
        low, high = ratio - 0.01, ratio + 0.01
        status: vocabulary.StepVerdict = ("higher" if low > 1 + level.floor else "lower"
                                          if high < 1 - level.floor else "same")
        return Judged(status, ratio, low, high, 64, 1.0)

    found = search.run(16, judge, 0.10, followed="memory")
    assert (found.outcome, found.culprit, found.floor) == (search.FOUND, 9, 0.10)
    assert found.steps[0].result == Judged("higher", 1.5, 1.49, 1.51, 64, 1.0)
    doc = report.document(found, [Candidate(f"c{i}", "") for i in range(16)], "case",
                          "commits", "id", "key", 0.10)
    said = report.conclusion(doc)
    assert doc["followed"] == "memory" and "- culprit: `c9`" in said
    assert any(line.startswith("- error: ") and "when it raises its peak device memory by at "
               "least twice the steps' floor (20.0%)" in line for line in said), said
    assert "| 1 (confirm) | c15 | c0 | 1.500 | [1.490, 1.510] at 99.17% | higher (floor 10.0%) |" \
        in report.markdown(doc)
    # Ends whose memory does not differ: nothing to bisect, in the finding's words.
    flat = search.run(16, lambda c, a, level: Judged("same", 1.0, 0.99, 1.01, 64, 1.0), 0.10,
                      followed="memory")
    kept = report.document(flat, [Candidate(f"c{i}", "") for i in range(16)], "case",
                           "commits", "id", "key", 0.10)
    assert bisection.stopped(kept).startswith(
        "nothing to bisect: the bad end c15 is not larger in peak device memory than the good "
        "end c0 (B/A 1.000 [0.990, 1.010]")


def test_a_build_that_fails_as_configured_is_bisected_to_the_first_that_does() -> None:
    def judge(candidate: int, against: int, level: Level) -> search.Result:
        if candidate >= 5:
            return Judged("fails", 1.0, 1.0, 1.0, 0, 2.0,
                          note="XLA compiled 3 clusters in an xla_off case")
        return Judged("runs", 0.94, 0.90, 0.98, 8, 2.0)  # its speed moved: not the question

    found = search.run(8, judge, 0.0, followed="configuration")
    assert (found.outcome, found.culprit, found.good) == (search.FOUND, 5, 4)
    assert found.below_floor() == found.not_excluded() == []
    doc = report.document(found, [Candidate(f"c{i}", "") for i in range(8)], "case",
                          "tensorflow", "id", "key", 0.0)
    assert doc["steps"][0]["note"] == "XLA compiled 3 clusters in an xla_off case"
    text = report.markdown(doc)
    assert "| 1 (confirm) | c7 | c0 |  |  | fails | 0 |" in text, text
    assert "- error: none from sampling: whether a candidate fails as configured is a fact" in text
    report.plot(doc, __import__("pathlib").Path("/dev/null"))  # a step without pairs draws


def test_each_finding_s_steps_set_its_own_options_and_leave_the_rest_to_the_user() -> None:
    level, pairs, settings = Level(0.2, 0.01, 96), (32, 2432), ABSettings()
    assert followed.step_args("slower", level, pairs, settings) == (
        ["--perf-ab-numerics=off"], ["--perf-ab-confidence=99", "--perf-ab-pairs=96:2432",
                                     "--perf-ab-floor=20"])
    assert followed.step_args("compile", level, pairs, settings)[1][-1] == \
        "--perf-ab-cost-floors=20:10"
    assert followed.step_args("memory", level, pairs, settings)[1][-1] == \
        "--perf-ab-cost-floors=25:20"
    assert followed.step_args("numerics", level, pairs, settings) == (
        ["--perf-ab-numerics=on"], ["--perf-ab-confidence=99", "--perf-ab-pairs=96:2432"])
    assert followed.step_args("configuration", level, pairs, settings) == (
        ["--perf-ab-numerics=off"], ["--perf-ab-pairs=32:32"])
    assert [followed.floor_of(f, settings) for f in vocabulary.FOLLOWED] == [
        0.015, 0.25, 0.25, 0.10, 0.10, 0.0, 0.0]
    with pytest.raises(ValueError) as refused:
        followed.finding("speed")
    assert str(refused.value) == ("--finding: no finding 'speed'; valid: slower, compile, "
                                  "first-step, memory, host-memory, numerics, configuration")
