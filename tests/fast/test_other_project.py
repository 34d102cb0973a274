"""The harness in another team's repository: its layout named in pyproject.toml
([tool.tfperf]: tests, baselines, results), read alike by the plugin, tfperf-refresh, the gate
and tfperf-ab; one baseline folder that pytest-benchmark and every command agree on; the
suite's Hypothesis profiles named for it; and the pytest-benchmark internals the plugin leans
on, checked so that a new pytest-benchmark that moves them fails here, not silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.errors import InvalidArgument

from tfperf.ground import project


def test_the_layout_defaults_to_this_repository_s() -> None:
    layout = project.load(Path(__file__).resolve().parents[2])
    assert (layout.tests.name, layout.baselines.name, layout.results.name) == \
        ("perf", "baselines", ".perf-results")


def test_the_suite_s_hypothesis_profiles_leave_a_project_s_own_names_alone() -> None:
    from tfperf.equivalence import hypothesis_profiles

    assert settings.get_profile(hypothesis_profiles.CI).max_examples == 3
    assert settings.get_profile(hypothesis_profiles.NIGHTLY).max_examples == 50
    # Hypothesis has a `ci` profile of its own (loaded on CI machines); ours leaves it as it is.
    assert settings.get_profile("ci").max_examples != 3
    with pytest.raises(InvalidArgument):
        settings.get_profile("nightly")
