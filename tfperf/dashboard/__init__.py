"""tfperf-dashboard: a static site built from the results store, which opens offline."""
