"""--perf-store: the results store a session writes every case to and reads its history from."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfperf.storage import database
from tfperf.storage.errors import StoreUnavailable


def add_option(group: Any) -> None:
    group.addoption("--perf-store", metavar="URL",
                    help="The results store every case is written to and the gate reads its "
                         f"history from: {database.VALID} (default: ${database.URL_ENV}, else "
                         f"{database.FILE_NAME} in the --perf-history folder).")


def parse(get: Callable[[str], Any], history: Path) -> str:
    """The store's URL; ValueError, one line, for one that names no database. Whether it can be
    reached is found when the session opens it, before its first case."""
    url = database.chosen_url(get("perf_store"), history)
    try:
        database.check_url(url)
    except StoreUnavailable as error:
        raise ValueError(f"--perf-store (or ${database.URL_ENV}): {error}") from None
    return url
