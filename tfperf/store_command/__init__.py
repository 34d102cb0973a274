"""tfperf-store: the results store's command (import kept files, show its state, migrate)."""
