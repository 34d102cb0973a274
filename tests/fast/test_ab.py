"""The A/B comparison end to end, with real sessions of real workers: an A/A session says
`same`, a slowdown injected into side B says `slower` and fails the session, the standalone
command judges the kept session again, a side that crashes is named, bad specs and options stop
the session with one line. The verdict's statistics: test_ab_verdict.py."""

from __future__ import annotations

import math

from tfperf.ab import duet_pool, session_report


def test_duets_alternate_start_order_and_files_kept_with_two_still_read() -> None:
    assert [duet_pool.start_order(number) for number in (1, 2, 3, 4)] == \
        [("A", "B"), ("B", "A"), ("A", "B"), ("B", "A")]
    effect = session_report.start_order_effect({"order_effect": {"a_first_ratio": 1.0,
                                                         "b_first_ratio": 1.02}})
    assert effect is not None and math.isclose(effect, 1.02)
    # Before --perf-ab-duets, a session file named its two duets by number.
    old = {"order_effect": {"duet1_ratio": 0.99, "duet2_ratio": 1.01},
           "settings": {"floor": 0.015, "alpha": 0.05, "min_pairs": 16, "max_pairs": 128}}
    effect = session_report.start_order_effect(old)
    assert effect is not None and math.isclose(effect, 1.01 / 0.99)
    assert session_report.settings_of(old).duets == 2
    assert session_report.settings_of(old).look_rule == "bonferroni"  # as it was run
    # As `duets` and older rules ran: alpha spent evenly, looks at each doubling.
    kept = session_report.settings_of(old)
    assert (kept.spending_power, kept.looks()) == (1.0, [16, 32, 64, 128])
    assert session_report.start_order_effect({"order_effect": {"a_first_ratio": 1.0}}) is None
