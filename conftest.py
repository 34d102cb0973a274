"""Loads the harness; everything else lives in the `tfperf` package."""

pytest_plugins = ("tfperf.plugin",)
