"""The dashboard, built by its command from a generated store and opened in a real headless
Chromium (Debian's, driven by Playwright): it loads offline with no console error, and every
plot renders."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.store_history import Shape, case_ids, generate
from tfperf.storage import database
from tfperf.storage.results_store import BisectRow, ResultsStore
from tfperf.storage.timestamps import utc

CHROMIUM = Path("/usr/bin/chromium")
# Chromium as root in a sandbox-less container, and without the background connections this
# machine's closed network refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SHAPE = Shape(days=40, cases=8, runners=2, ab_sessions=3, slow_case=1, failed_case=4)
# Every canvas under a node, through the shadow roots Bokeh renders into.
COUNT_CANVASES = """() => {
  const walk = (root) => {
    let n = [...root.querySelectorAll('canvas')].filter(c => c.width > 0 && c.height > 0).length;
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) n += walk(e.shadowRoot);
    return n;
  };
  return walk(document);
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        reason = f"no browser at {CHROMIUM} (./run test installs Debian's chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dashboard")
    url = database.default_url(folder / "history")
    store = ResultsStore.open(url)
    try:
        generate(store, SHAPE)
        # A bisection whose confirmation is one of the A/B sessions above (its page links it).
        first = next(s.id for s in store.sessions() if s.kind == "ab")
        store.add_bisect(BisectRow("bisect-1", utc("2026-11-27T03:00:00+00:00"), "k",
                                   case_ids(SHAPE.cases)[SHAPE.slow_case], "commits", "found",
                                   "c1", "c0", {"candidates": [{"label": "c0"}, {"label": "c1"}],
                                                "steps": [{"role": "confirm", "candidate": 1,
                                                           "against": 0, "verdict": "slower",
                                                           "ratio": 0.9, "low": 0.88,
                                                           "high": 0.92, "confidence": 0.95,
                                                           "pairs": 16, "seconds": 30.0,
                                                           "session": first}]}))
    finally:
        store.close()
    built = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_dashboard", "--store",
                            url, "--out", str(folder / "site")], cwd=folder,
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    assert re.match(r"dashboard: 15 pages in .*site \(\d+\.\d s\): open file://", built.stdout)
    return folder / "site"


def _open(browser: Any, page_path: Path) -> tuple[Any, list[str], list[str]]:
    """The page, loaded; what its console said (errors and warnings), and every request that
    would have left the site's folder."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    said: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: said.append(f"{m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: said.append(f"pageerror: {e}"))

    def route(request_route: Any) -> None:
        if not request_route.request.url.startswith("file://"):
            outside.append(request_route.request.url)
            request_route.abort()
        else:
            request_route.continue_()

    page.route("**/*", route)
    page.goto(page_path.as_uri())
    return page, said, outside


def test_every_page_loads_offline_with_its_plots_rendered(browser: Any, site: Path) -> None:
    pages = [*sorted((site / "cases").glob("*.html")), *sorted((site / "ab").glob("*.html"))]
    assert len(pages) == SHAPE.cases + SHAPE.ab_sessions
    slow = (site / "cases" / f"{case_ids(SHAPE.cases)[SHAPE.slow_case]}.html").read_text()
    # The latest runs' table says why each verdict, and flags what a sanity check flagged; the
    # plots' hover has the same reasons (their data, in the page).
    assert "regression: throughput -10.0% (made up)" in slow.split("Latest runs")[1]
    assert slow.count("regression: throughput -10.0% (made up)") >= 2
    assert "yardstick disturbed (made up)" in slow
    for path in pages:
        page, said, outside = _open(browser, path)
        roots = page.evaluate("() => document.querySelectorAll('[data-root-id]').length")
        case = path.parent.name == "cases"
        assert roots == (2 if case else 1), path
        # A case page plots every figure its runs have: examples/s, compile time, peak memory
        # and MFU here (these runs have no scaling efficiency), each with its band, and the
        # same four by TensorFlow build (its runs span six builds).
        plots = 8 if case else 1
        page.wait_for_function(f"() => ({COUNT_CANVASES})() >= {plots}", timeout=30_000)
        assert said == [] and outside == [], (path, said, outside)
        if path.parent.name == "cases" and "resnet20" in path.name and "fp32" in path.name:
            page.screenshot(path=str(site / "case-screenshot.png"), full_page=True)
        page.close()
    assert (site / "case-screenshot.png").stat().st_size > 20_000
    # A bisection's page: its steps, each linking its A/B session's page, which opens.
    page, said, outside = _open(browser, site / "bisects" / "bisect-1.html")
    text = page.inner_text("body")
    assert "found; culprit c1, last good c0" in text and "1 (confirm)\tc1\tc0\t0.900" in text
    page.click("a[href^='../ab/']")
    page.wait_for_load_state()
    assert page.url.endswith(".html") and "/ab/ab-" in page.url, page.url
    assert said == [] and outside == [], (said, outside)
    page.close()


def test_the_front_page_says_what_regressed_or_failed_and_filters_the_cases(
        browser: Any, site: Path) -> None:
    page, said, outside = _open(browser, site / "index.html")
    text = page.inner_text("body")
    slow = case_ids(SHAPE.cases)[SHAPE.slow_case]
    regressed = text.split("Regressed (")[1].split("Failed (")[0]
    assert regressed.startswith("2)") and regressed.count(slow) == 2  # on both runners
    assert regressed.count("regression: throughput -10.0% (made up)") == 2  # and why
    failed = text.split("Failed (")[1].split("Cases (")[0]
    assert failed.startswith("1)") and case_ids(SHAPE.cases)[4] in failed
    assert "out_of_memory\tmeasuring\tworker killed by SIGSEGV" in failed
    # Its log's last lines, kept by the store, open with a click.
    page.click("summary")
    assert page.inner_text("pre.log") == "Fatal Python error"
    assert "Bisections (1)" in text
    shown = "() => [...document.querySelectorAll('tr[data-case]')]" \
            ".filter(r => r.style.display !== 'none').length"
    assert page.evaluate(shown) == SHAPE.cases
    page.select_option("select[data-part=precision]", "mixed_fp16")
    assert page.evaluate(shown) == sum("-mixed_fp16-" in c for c in case_ids(SHAPE.cases))
    page.select_option("select[data-part=precision]", "")
    page.select_option("select[data-part=data_format]", "NCHW")
    assert page.evaluate(shown) == sum("-NCHW-" in c for c in case_ids(SHAPE.cases))
    assert "A/B sessions (3)" in text
    page.screenshot(path=str(site / "front-screenshot.png"), full_page=True)
    assert said == [] and outside == [], (said, outside)
    for html_file in site.rglob("*.html"):
        assert not re.search(r"(src|href)=\"(https?:)?//", html_file.read_text()), html_file
    shutil.copy(site / "front-screenshot.png", site.parent / "front-screenshot.png")


def _session_rates(site: Path, file: str) -> dict[str, float]:
    said = re.fullmatch(r'tfperfSession\((".*?"), (\{.*\})\);\n',
                        (site / "sessions" / f"{file}.js").read_text())
    assert said is not None
    rates: dict[str, float] = json.loads(said.group(2))
    return rates


def test_any_two_sessions_compare_and_the_findings_page_and_feed_open(browser: Any, site: Path
                                                                      ) -> None:
    """Compare.html shows B/A per case of two sessions (by default the newest and the
    one before it on its machine; any other chosen, the address keeping the choice), and the
    regressions page opens and leads to its cases. Offline, with no console error."""
    listed = json.loads((site / "static" / "sessions.js").read_text()
                        .split(" = ", 1)[1].rstrip(";\n"))
    newest = listed[0]
    before = next(s for s in listed if s["machine"] == newest["machine"] and s is not newest)
    page, said, outside = _open(browser, site / "compare.html")
    rows = "() => [...document.querySelectorAll('tr.case')].map(r => [...r.cells].map(c => " \
           "c.textContent))"
    page.wait_for_function("() => document.querySelectorAll('tr.case').length > 0")
    a, b = _session_rates(site, before["file"]), _session_rates(site, newest["file"])
    expected = sorted(([c, f"{a[c]:.1f}", f"{b[c]:.1f}", f"{b[c] / a[c]:.3f}"]
                       for c in b if c in a), key=lambda row: b[row[0]] / a[row[0]])
    assert page.evaluate(rows) == expected and len(expected) == SHAPE.cases
    other = next(s for s in listed if s["machine"] != newest["machine"])
    page.select_option("#a", other["id"])
    a = _session_rates(site, other["file"])
    page.wait_for_function(f"() => document.querySelector('tr.case td:nth-child(2)')"
                           f".textContent !== {json.dumps(expected[0][1])}")
    both = sorted([c, f"{a[c]:.1f}", f"{b[c]:.1f}", f"{b[c] / a[c]:.3f}"] for c in b if c in a)
    assert sorted(page.evaluate(rows)) == both
    assert page.url.endswith(f"#a={other['id']}&b={newest['id']}")
    assert page.inner_text("#summary").startswith(f"{len(both)} cases in both, B/A geometric")
    assert said == [] and outside == [], (said, outside)
    page.close()
    page, said, outside = _open(browser, site / "regressions.html")
    text = page.inner_text("body")
    assert "still open" in text and "regression" in text and "failure" in text
    page.click("td a[href^='cases/']")
    page.wait_for_load_state()
    assert "/cases/" in page.url and said == [] and outside == [], (said, outside)
    page.close()
    feed = ET.fromstring((site / "regressions.xml").read_text())
    assert len(feed.findall("{http://www.w3.org/2005/Atom}entry")) >= 2
