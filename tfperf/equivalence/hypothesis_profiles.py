"""Hypothesis profiles for the XLA equivalence property, given to it alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from tfperf.ground.tiers import Tier

# Hypothesis profiles for the XLA equivalence property, named for the suite so that a
# project's own `ci` or `nightly` profile is left alone. `tfperf-ci`: derandomized and few
# examples, within the CPU self-test budget. `tfperf-nightly`: many examples, with an example
# database that the nightly workflow keeps between runs (so a failure found once is tried first
# next night). Chosen by --hypothesis-profile, else $TFPERF_HYPOTHESIS_PROFILE (ci or nightly),
# else by tier.
HYPOTHESIS_DB = Path(".perf-results") / "hypothesis"
# Examples train real models for seconds each: no deadline, no too-slow health check.
# No explain phase: it re-runs the failing example many times over to annotate it, minutes of
# training that the shrunk example and its reproduce command make unnecessary.
_COMMON = settings(deadline=None, print_blob=True,
                   phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CI, NIGHTLY = "tfperf-ci", "tfperf-nightly"
settings.register_profile(CI, _COMMON, max_examples=3, derandomize=True, database=None)
settings.register_profile(NIGHTLY, _COMMON, max_examples=50,
                          database=DirectoryBasedExampleDatabase(str(HYPOTHESIS_DB)))
PROFILE_ENV = "TFPERF_HYPOTHESIS_PROFILE"


_chosen: list[settings] = []


def choose(config: pytest.Config, tier: Tier) -> None:
    """--hypothesis-profile if given (Hypothesis loads it), else $TFPERF_HYPOTHESIS_PROFILE,
    else the tier's; called at configure, before the suite's test is imported. Only the
    suite's property gets it (see `current`): another project's Hypothesis tests in the same
    session keep their own settings."""
    _chosen.clear()
    if config.getoption("hypothesis_profile", None):
        return
    default = "ci" if tier is Tier.SMOKE else "nightly"
    profile = os.environ.get(PROFILE_ENV, default)
    named = {"ci": CI, "nightly": NIGHTLY, CI: CI, NIGHTLY: NIGHTLY}
    if profile not in named:
        raise pytest.UsageError(f"${PROFILE_ENV}: no profile {profile!r}; valid: ci, nightly")
    _chosen.append(settings.get_profile(named[profile]))


def current() -> settings:
    """The settings of the XLA equivalence property, for its decorator."""
    return _chosen[0] if _chosen else settings()  # a fresh settings() is the loaded profile
