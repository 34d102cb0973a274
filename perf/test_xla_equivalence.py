"""XLA and non-XLA training agree: the hypothesis property of tfperf.suite, run here."""

from tfperf.suite.test_xla_equivalence import test_xla_training_matches_non_xla

__all__ = ["test_xla_training_matches_non_xla"]
