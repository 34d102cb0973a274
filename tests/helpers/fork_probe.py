"""Run by tests/test_warm_start.py in a forked worker: reports what the process is."""

import json
import os
import sys

# Before anything here imports it: a forked child has TensorFlow from its zygote already.
preloaded = "tensorflow" in sys.modules
line = sys.stdin.readline().strip()
if line == "hang":
    sys.stdin.readline()  # until killed
print(json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "pgid": os.getpgid(0),
                  "cwd": os.getcwd(), "probe": os.environ.get("PROBE"), "argv": sys.argv[1:],
                  "line": line, "tensorflow_preloaded": preloaded}), flush=True)
print("to the log", file=sys.stderr, flush=True)
sys.exit(int(sys.argv[1]))
