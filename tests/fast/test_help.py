"""The options reference cannot drift from the code: docs/options.md names every --perf-* option."""

from __future__ import annotations

import re

from tests.helpers.house import perf_options
from tests.helpers.suites import REPO


def test_the_options_reference_lists_exactly_the_options_pytest_has() -> None:
    """docs/options.md cannot drift from the code: the same --perf-* names both ways."""
    documented = set(re.findall(r"--perf-[a-z-]+", (REPO / "docs" / "options.md").read_text()))
    assert documented == {name for name in perf_options() if name.startswith("--perf-")}
