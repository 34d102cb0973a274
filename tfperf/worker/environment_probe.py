"""Which TensorFlow this interpreter imports, and what else its environment holds: run as
`python -m tfperf.worker.environment_probe` by tfperf.processes.environments, forked from the
side's zygote where there is one (which has imported TensorFlow already). One JSON line.

It imports what every worker imports first, so an environment whose workers cannot start
fails here, before any case, with the reason."""

from __future__ import annotations

import importlib
import json

import tensorflow as tf

import tfperf.processes.protocol  # noqa: F401  (the harness's worker side is importable)
from tfperf.processes import packages

# After TensorFlow: an environment that has neither is said to lack TensorFlow, the one named.
keras = importlib.import_module("keras")

# Every distribution and its version: every difference between two sides is listed.
print(json.dumps({"tensorflow": tf.__version__, "git": tf.version.GIT_VERSION,
                  "keras": keras.__version__, "packages": packages.installed()}), flush=True)
