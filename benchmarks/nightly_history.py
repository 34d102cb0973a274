"""Since which build? The real history between TensorFlow 2.21.0 and 2.22.0rc0 (issue 78 item 6):
a case's series across tf-nightly builds, its change points, and the bisections that placed
them, kept from a results store into one committed file so that others can judge them again.

The measuring is the product's own commands (benchmarks/results/nightly_history.md has them):
one gated session of a case under each build of a sparse series (`pytest perf/ -k CASE
--perf-tensorflow=tf-nightly==VERSION`), `tfperf-store changes CASE`, and `tfperf-bisect
nightlies ... --finding memory|configuration`. This study keeps what they stored and reads it
back:

    python benchmarks/nightly_history.py keep CASE [CASE ...] [--store URL]
    python benchmarks/nightly_history.py report [FILE]

`keep` writes data/nightly_history/<this machine's key>.jsonl.gz anew: a first line naming the
machine and when, then each case's runs (their series rows: build, Keras, figures) and each of
its bisections' documents. `report` prints each series by build and each bisection's
conclusion, from the file alone.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab import ROOT, records

from tfperf.bisect import report as bisect_report
from tfperf.commands import store_series
from tfperf.ground.machine import detect
from tfperf.storage import build_series, database
from tfperf.storage.results_store import ResultsStore

DATA = records.DATA / "nightly_history"


def keep(cases: Sequence[str], url: str, out: Path) -> int:
    store = ResultsStore.open(url, create=False)
    try:
        lines: list[dict[str, Any]] = [{
            "kind": "header", "machine_key": detect().key(),
            "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}]
        for case in cases:
            lines += [{"kind": "run", **row, "when": row["when"].isoformat()}
                      for row in store.series(case)]
            lines += [{"kind": "bisection", **row.document} for row in store.bisects(case)]
    finally:
        store.close()
    out.unlink(missing_ok=True)  # anew: the store holds everything the file did
    records.append(out, *lines)
    runs = sum(line["kind"] == "run" for line in lines)
    print(f"kept {runs} runs and {len(lines) - runs - 1} bisections of {len(cases)} cases in "
          f"{out.relative_to(ROOT)}")
    return 0


def report(path: Path) -> int:
    found = list(records.rows([path]))
    header, rows = found[0], found[1:]
    print(f"{path.relative_to(ROOT)}: kept {header['when']} on {header['machine_key']}")
    runs = [{**r, "when": datetime.datetime.fromisoformat(r["when"])} for r in rows
            if r["kind"] == "run"]
    for series in build_series.of_rows(runs):
        print("\n" + store_series.table(series))
    for doc in (r for r in rows if r["kind"] == "bisection"):
        print(f"\nbisection {doc['id']} of {doc['case_id']}, following "
              f"{doc.get('followed', 'slower')}:")
        for line in bisect_report.conclusion(doc):
            print("  " + line.replace("**", "").replace("`", ""))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    kept = commands.add_parser("keep", help="keep the cases' series and bisections in a file")
    kept.add_argument("cases", nargs="+")
    kept.add_argument("--store", help="default: the project's own (.perf-results/history)")
    shown = commands.add_parser("report", help="print what a kept file holds")
    shown.add_argument("file", nargs="?", type=Path)
    args = parser.parse_args(argv)
    if args.command == "keep":
        url = args.store or database.default_url(ROOT / ".perf-results" / "history")
        return keep(args.cases, url, DATA / f"{detect().key()}.jsonl.gz")
    files = [args.file] if args.file else sorted(DATA.glob("*.jsonl.gz"))
    if not files:
        parser.error(f"no kept file in {DATA.relative_to(ROOT)}: run keep first")
    return max(report(path.resolve()) for path in files)


if __name__ == "__main__":
    sys.exit(main())
