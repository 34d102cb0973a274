"""Build the dashboard: a static site from the results store that opens offline.

    tfperf-dashboard [--store URL] [--out DIR] [--url https://OWNER.github.io/REPO/]

The front page lists what regressed or failed in the 24 hours up to the newest result, every
case (filtered by workload or by any part of its id) and every A/B session; each case has a page
of examples/s by date across machine keys, with TensorFlow builds marked, the band of each
build, every verdict and every failure; each A/B session a page of its ratios and intervals
(with a plot for the newest 30 sessions); each bisection a page of its steps. regressions.html
lists every regression, failure, slower A/B case and culprit with its history, and
regressions.xml is the same as an Atom feed; compare.html compares any two measured sessions,
case by case. Exit 0: built; 2: bad input or a store that cannot be used.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from tfperf.commands import arguments
from tfperf.dashboard import site_data
from tfperf.dashboard.site import build
from tfperf.ground import project
from tfperf.storage.errors import StorageError


def _site_url(text: str) -> str:
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"{text!r} is not an http(s) URL like "
                                         "https://OWNER.github.io/REPO/")
    return text if text.endswith("/") else text + "/"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tfperf-dashboard",
                                     description=__doc__.split("\n\n")[0])
    arguments.add_store(parser, "what the site shows")
    parser.add_argument("--out", type=Path,
                        help="where the site goes (default: the project's results folder's "
                             f"dashboard/; {project.LAYOUT})")
    parser.add_argument("--url", type=_site_url,
                        help="the site's public address (e.g. its GitHub Pages URL): the Atom "
                             "feed's links are absolute under it (default: relative)")
    args = parser.parse_args(argv)
    layout, _ = arguments.fill_folders(args, parser)
    site = args.out or layout.results / "dashboard"
    started = time.monotonic()
    store = arguments.open_store(args, layout.history, parser, create=False)
    try:
        data = site_data.read(store)
    except StorageError as error:  # a row none of its vocabulary's values: one line
        print(f"tfperf-dashboard: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()
    count = build(data, site, base_url=args.url or "")
    print(f"dashboard: {count} pages in {site} ({time.monotonic() - started:.1f} s): open "
          f"{(site / 'index.html').resolve().as_uri()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
