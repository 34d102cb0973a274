"""Several `pytest perf/ --collect-only` runs in one process, for test_layout.py: each selection's
exit code and output, as JSON on stdout. One interpreter and one import of the plugin for all of
them, where a process each paid both (about 1.5 s of CPU a selection).

    python -m tests.helpers.collect_many '[["-k", "workers2"], ["--perf-tier=nightly"]]'
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

import pytest


def main() -> None:
    done = []
    for args in json.loads(sys.argv[1]):
        listing = [flag for flag in ("--collect-only", "-q") if flag not in args]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = pytest.main(["perf/", *args, *listing, "-p", "no:cacheprovider"])
        done.append({"args": args, "code": int(code), "out": out.getvalue()})
    print(json.dumps(done))


if __name__ == "__main__":
    main()
