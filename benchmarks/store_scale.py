"""The results store and the dashboard at a fleet's scale: one year of nightly runs, 150 cases
on 5 runners (about 275,000 runs), and 365 A/B sessions, generated into SQLite or a real
PostgreSQL server started here.

    python benchmarks/store_scale.py --backend sqlite       [--days 365 --cases 150 ...]
    python benchmarks/store_scale.py --backend postgresql

Reports: the rows written and how long that took; the store's size on disk; the gate's history
query for one case (the median of --repeats queries, each of another case); the dashboard's
build time (read + pages) and page count; the front page's size and its load time in headless
Chromium (the median of --repeats loads, to the load event).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import lab  # noqa: F401 (the checkout first on the path: the self-tests' generator and server)
import sqlalchemy as sa

from tests.helpers.postgres_server import running_server
from tests.helpers.store_history import Shape, case_ids, generate, machine_keys
from tfperf.dashboard import site_data
from tfperf.dashboard.site import build
from tfperf.storage import database
from tfperf.storage.results_store import ResultsStore
from tfperf.storage.stored_runs import StoredRuns

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@contextlib.contextmanager
def store_url(backend: str, folder: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield database.default_url(folder)
        return
    with running_server() as server:
        yield server.new_database("scale")


def size_bytes(store: ResultsStore, folder: Path) -> int:
    if store.engine.dialect.name == "sqlite":
        return sum(p.stat().st_size for p in folder.glob(f"{database.FILE_NAME}*"))
    with store.engine.connect() as connection:
        return int(connection.execute(sa.text(
            "SELECT pg_database_size(current_database())")).scalar_one())


def load_ms(page_path: Path, repeats: int) -> float:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=CHROMIUM_ARGS)
        for _ in range(repeats):
            page = browser.new_page()
            page.goto(page_path.as_uri(), wait_until="load")
            times.append(float(page.evaluate(
                "() => performance.getEntriesByType('navigation')[0].loadEventEnd")))
            page.close()
        browser.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--cases", type=int, default=150)
    parser.add_argument("--runners", type=int, default=5)
    parser.add_argument("--ab-sessions", type=int, default=365)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    shape = Shape(args.days, args.cases, args.runners, args.ab_sessions, slow_case=3,
                  failed_case=5)
    with tempfile.TemporaryDirectory() as scratch, \
            store_url(args.backend, Path(scratch)) as url:
        folder = Path(scratch)
        store = ResultsStore.open(url)
        started = time.monotonic()
        counts = generate(store, shape)
        print(f"{args.backend}: wrote {counts} in {time.monotonic() - started:.0f} s")
        print(f"store size: {size_bytes(store, folder) / 2**20:.0f} MiB")
        key, cases = machine_keys(args.runners)[0], case_ids(args.cases)
        query_ms = []
        for i in range(args.repeats):
            history = StoredRuns(store, key, exclude_session="tonight")
            started = time.perf_counter()
            runs = history.of(cases[i % len(cases)])
            query_ms.append((time.perf_counter() - started) * 1000)
        print(f"gate history query, one case ({len(runs)} runs): median "
              f"{statistics.median(query_ms):.1f} ms (min {min(query_ms):.1f}, max "
              f"{max(query_ms):.1f}) over {args.repeats}")
        started = time.monotonic()
        data = site_data.read(store)
        read_s = time.monotonic() - started
        pages = build(data, folder / "site")
        build_s = time.monotonic() - started
        store.close()
        print(f"dashboard: {pages} pages in {build_s:.1f} s (reading the store {read_s:.1f} s)")
        front = folder / "site" / "index.html"
        site_mib = sum(p.stat().st_size for p in (folder / "site").rglob("*")) / 2**20
        print(f"front page: {front.stat().st_size / 1024:.0f} KiB (the site: {site_mib:.0f} "
              f"MiB); load in headless Chromium: median {load_ms(front, 5):.0f} ms over 5")


if __name__ == "__main__":
    main()
