"""The tiny CNN, whose workers each write their whole environment to a file in the folder that
ENV_PROBE_FOLDER names: the secrets self-test (tests/real/test_secrets.py) reads what the code
under test could have read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import keras
from _tiny import TinyCNN

from tfperf.workload import ModelConfig


class EnvProbe(TinyCNN):
    name = "env_probe"

    def build_model(self, config: ModelConfig) -> keras.Model:
        folder = os.environ.get("ENV_PROBE_FOLDER")
        if folder:
            (Path(folder) / f"worker-{os.getpid()}.json").write_text(json.dumps(dict(os.environ)))
        return super().build_model(config)


WORKLOAD = EnvProbe()
