"""XLA and non-XLA training agree: a hypothesis property over workloads and configurations.

Each example trains the drawn workload twice from identical initial weights on identical
batches, once with XLA off and once with the drawn mode (auto-clustering or jit_compile), and
compares the loss at every step, the gradients of the first step and the weights after the
last, within the precision's measured tolerance (tfperf/numerics/tolerances.py). The XLA arm must show
XLA executions in its profiler trace. Profiles: `tfperf-ci` (few, derandomized) and `tfperf-nightly`
(many, with a persistent example database): --hypothesis-profile or
$TFPERF_HYPOTHESIS_PROFILE.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tfperf.equivalence import hypothesis_profiles
from tfperf.equivalence.check import EquivalenceCheck


# The profile the session chose (tfperf.plugin, at configure: before this module is imported).
@settings(hypothesis_profiles.current())
@given(data=st.data())
def test_xla_training_matches_non_xla(data: st.DataObject, xla_equivalence: EquivalenceCheck
                                      ) -> None:
    xla_equivalence.check(data.draw(xla_equivalence.examples(), label="example"))
