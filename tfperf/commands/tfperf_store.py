"""The results store: import kept files into it, say what it holds, bring its schema forward.

    tfperf-store import .perf-results/history .perf-results/ab perf-history/   # once
    tfperf-store info
    tfperf-store upgrade

The store is the one named by --store, else $TFPERF_STORE_URL, else store.sqlite3 in the
project's history folder (.perf-results/history). Exit 0: done; 1: an import left something
out; 2: bad input or a store that cannot be used.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tfperf.commands import arguments
from tfperf.commands import store_import as importer
from tfperf.storage import database
from tfperf.storage.errors import StorageError, StoreUnavailable
from tfperf.storage.results_store import ResultsStore


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfperf-store", description=__doc__.split("\n\n")[0])
    arguments.add_store(parser, "where to import to, or what to show")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="import|info|upgrade")
    imports = verbs.add_parser("import", help="add kept session files (files or folders, "
                                              "searched for *.json) to the store")
    imports.add_argument("paths", nargs="+", type=Path)
    verbs.add_parser("info", help="the store's schema revision and what it holds")
    verbs.add_parser("upgrade", help="bring the store's schema to this tfperf's newest")
    return parser


def _import(store: ResultsStore, paths: Sequence[Path]) -> int:
    found = importer.read(paths)  # all checked before anything is written
    added = 0
    for kept in found.kept:
        added += importer.write(store, kept)
    left = {str(k.path): importer.missing(store, k) for k in found.kept}
    print(f"imported {len(found.kept)} kept files into {store.where}: {added} rows added "
          f"(the rest were there already)")
    if found.other:
        print(f"passed over {len(found.other)} JSON files of other formats (e.g. "
              f"{found.other[0]})")
    lost = {path: cases for path, cases in left.items() if cases}
    for path, cases in lost.items():
        print(f"not in the store after the import: {path}: {', '.join(cases[:5])}",
              file=sys.stderr)
    return 1 if lost else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    layout, _ = arguments.fill_folders(args, parser)
    url = database.chosen_url(args.store, layout.history)
    try:
        database.check_url(url)
        store = ResultsStore.open(url)
    except StoreUnavailable as error:
        print(f"tfperf-store: {error}", file=sys.stderr)
        return 2
    try:
        if args.verb == "import":
            return _import(store, args.paths)
        if args.verb == "info":
            counts = ", ".join(f"{n} {name}" for name, n in store.counts().items())
            print(f"{store.where}: schema {database.head()}; {counts}")
        else:
            print(f"{store.where}: schema at {database.head()}")
        return 0
    except StorageError as error:
        print(f"tfperf-store: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main())
