"""The suite's tests: every case of the matrix, and the XLA equivalence property. This
repository's perf/ runs them; another repository runs them with `pytest --pyargs tfperf.suite`."""
