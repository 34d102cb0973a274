"""The lab's shared parts, which every study in benchmarks/ uses: one driver of the suite's
pytest sessions (sessions.py) and one reader and writer of the files the studies keep
(records.py). A study imports them as `from lab import records, sessions`: its folder is on the path
when it runs as `python benchmarks/NAME.py`."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout the studies measure
# A study imports this checkout's tfperf, the code it measures, even where another is
# installed (a study run from a clone with another checkout's environment).
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
