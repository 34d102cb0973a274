"""Measure a case: run its worker under pytest-benchmark, turn what it said into figures."""
