"""Hypothesis profiles for the XLA equivalence property, loaded by a session that runs it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from tfperf.cases.tiers import Tier

# Hypothesis profiles for the XLA equivalence property. `ci`: derandomized and few examples,
# within the CPU self-test budget. `nightly`: many examples, with an example database that the
# nightly workflow keeps between runs (so a failure found once is tried first next night).
# Chosen by --hypothesis-profile, else $TFPERF_HYPOTHESIS_PROFILE, else by tier.
HYPOTHESIS_DB = Path(".perf-results") / "hypothesis"
# Examples train real models for seconds each: no deadline, no too-slow health check.
# No explain phase: it re-runs the failing example many times over to annotate it, minutes of
# training that the shrunk example and its reproduce command make unnecessary.
_COMMON = settings(deadline=None, print_blob=True,
                   phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", _COMMON, max_examples=3, derandomize=True, database=None)
settings.register_profile("nightly", _COMMON, max_examples=50,
                          database=DirectoryBasedExampleDatabase(str(HYPOTHESIS_DB)))
PROFILE_ENV = "TFPERF_HYPOTHESIS_PROFILE"


def load(config: pytest.Config, tier: Tier) -> None:
    """--hypothesis-profile if given, else $TFPERF_HYPOTHESIS_PROFILE, else the tier's."""
    if not config.getoption("hypothesis_profile", None):
        default = "ci" if tier is Tier.SMOKE else "nightly"
        profile = os.environ.get(PROFILE_ENV, default)
        if profile not in ("ci", "nightly"):
            raise pytest.UsageError(f"${PROFILE_ENV}: no profile {profile!r}; valid: ci, nightly")
        settings.load_profile(profile)
