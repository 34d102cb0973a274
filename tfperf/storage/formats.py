"""The names of the stored file formats, which the store's importer tells apart by."""

from __future__ import annotations

SESSION_FORMAT = "tfperf-session/1"  # a measured session's runs (tfperf.storage.session_files)
AB_FORMAT = "tfperf-ab/1"  # an A/B session's cases and pairs (tfperf.ab.ab_runner)
