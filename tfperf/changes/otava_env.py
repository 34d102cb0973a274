"""Apache Otava's own environment, built once with uv and kept under the results cache: Otava
pins numpy 2.2 and scipy below 1.17 and the suite needs 2.4 and 1.17, so they cannot share one
(as a worker environment of another TensorFlow does not). Its detector runs there, as a
subprocess given the series on stdin (in_otava.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from filelock import FileLock

from tfperf.processes.environments import uv
from tfperf.processes.runtime import without_secrets

OTAVA = "apache-otava==0.8.0"
PYTHON = "3.11"  # Otava 0.8.0 supports 3.8 to 3.11
DETECTOR = Path(__file__).with_name("in_otava.py")


class OtavaUnavailable(RuntimeError):
    """Otava's environment could not be built: one line, with the installer's reason."""


def python(cache: Path) -> Path:
    """The interpreter of Otava's environment under `cache`, built the first time (one builder
    at a time: a lock beside it)."""
    folder = cache / f"otava-{OTAVA.split('==')[1]}"
    interpreter = folder / "bin" / "python"
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if (folder / ".complete").exists():
            return interpreter
        shutil.rmtree(folder, ignore_errors=True)
        installer = uv()
        env = without_secrets(os.environ, suffixes=False)
        for command in ([installer, "venv", "--quiet", "--python", PYTHON, str(folder)],
                        [installer, "pip", "install", "--quiet", "--python", str(interpreter),
                         OTAVA]):
            done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
            if done.returncode:
                said = (done.stderr or done.stdout).strip().splitlines()
                raise OtavaUnavailable(f"cannot build Otava's environment ({OTAVA}) in {folder}: "
                                       f"{said[-1] if said else f'exit {done.returncode}'}")
        (folder / ".complete").touch()
    return interpreter


def detect(cache: Path, series: Sequence[dict[str, Any]], window: int, max_pvalue: float,
           min_magnitude: float) -> dict[str, list[list[float]]]:
    """Each series' change points ([index, forward change %, p-value]) by its id."""
    lines = "".join(json.dumps(s) + "\n" for s in series)
    done = subprocess.run([str(python(cache)), str(DETECTOR), str(window), str(max_pvalue),
                           str(min_magnitude)], input=lines, capture_output=True, text=True,
                          check=False)
    if done.returncode:
        said = done.stderr.strip().splitlines()
        raise OtavaUnavailable(f"Otava's detector failed: {said[-1] if said else done.returncode}")
    return {found["id"]: found["points"] for found in map(json.loads, done.stdout.splitlines())}
