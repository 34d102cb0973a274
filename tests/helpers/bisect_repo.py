"""A generated git repository of one workload's history, for tfperf-bisect's self-tests and
benchmarks/bisect_commits.py: a residual stack of convolution blocks whose every block is the
same work, so that a commit that adds blocks adds that share of work per step (5 blocks on 50:
10%). Most commits change nothing the steps run (a docstring, a comment, a name); the chosen
ones add blocks, and one may break the module so that it cannot be imported (a commit that
does not build). A commit may also add ballast (a non-trainable weight of some MiB: the steps'
work unchanged, the peak memory grown) or compile the loss with XLA (a case named xla_off that
then fails as configured). Also a project that runs the suite's tests (perf/) for the bisection
to run in.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BASE_BLOCKS = 50

_WORKLOAD = '''"""{doc}"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from tfperf.worker.model.layers import output_dtype
from tfperf.worker.model.learnable_images import ImageBytes, learnable_images
from tfperf.workload import ModelConfig, Tier

BLOCKS = {blocks}  # {comment}
BALLAST_MIB = {ballast}
WIDTH = 16
SIZE = 16
CLASSES = 4
BRIGHTNESS = np.linspace(-1, 1, CLASSES, dtype=np.float32)


class Ballast(keras.layers.Layer):
    """Memory the steps hold and barely touch."""

    def build(self, shape: Any) -> None:
        self.ballast = self.add_weight(shape=(BALLAST_MIB * 2**18,), initializer="zeros",
                                       trainable=False)

    def call(self, x: Any) -> Any:
        return x + 0.0 * keras.ops.mean(self.ballast)


def _cross_entropy(labels: tf.Tensor, outputs: Any) -> tf.Tensor:
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, outputs)


CROSS_ENTROPY = {cross_entropy}


class {name}(ImageBytes):
    name = "stack"
    data_formats = ("NHWC",)
    precisions = ("fp32",)
    towers = False
    tier = Tier.SMOKE
    batch_sizes = {{"tiny": 32, "full": 32}}
    smoke_matrix = False

    def build_model(self, config: ModelConfig) -> keras.Model:
        inputs = keras.Input((SIZE, SIZE, 3))
        x = keras.layers.Conv2D(WIDTH, 3, padding="same")(inputs)
        for _ in range(BLOCKS):  # residual, so that a deep stack still learns
            x = x + 0.1 * keras.layers.Conv2D(WIDTH, 3, padding="same", activation="relu")(x)
        if BALLAST_MIB:
            x = Ballast()(x)
        x = keras.layers.GlobalAveragePooling2D()(x)
        return keras.Model(inputs, keras.layers.Dense(CLASSES, dtype=output_dtype())(x))

    def optimizer(self, config: ModelConfig) -> keras.optimizers.Optimizer:
        return keras.optimizers.SGD(0.02, momentum=0.9)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        images, labels = learnable_images(config, count, CLASSES, SIZE, noise=0.5)
        # Each class a brightness of its own too: a signal that the global average pooling
        # keeps, so that the loss falls from the first steps (the templates alone left a
        # 50-block stack near chance, 1.3 against ln 4, after 34 steps).
        return images + BRIGHTNESS[labels][..., None, None, None], labels

    def loss(self, labels: tf.Tensor, outputs: Any) -> tf.Tensor:
        return CROSS_ENTROPY(labels, outputs)


WORKLOAD = {name}(){broken}
'''
CASE_ID = "stack-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"
SELECT = ("-k", "stack and xla_off", "--perf-only=device_kind=cpu", "--perf-only=device_count=1",
          "--perf-only=workers=1", "--perf-only=input=synthetic", "--perf-only=strategy=single",
          "--perf-only=placement=default")


@dataclass(frozen=True)
class History:
    commits: int = 16  # the first is the good end, the last the bad one
    added: dict[int, int] = field(default_factory=dict)  # commit number -> blocks it adds
    broken: frozenset[int] = frozenset()  # commits whose module does not import
    base_blocks: int = BASE_BLOCKS  # the first commit's
    ballast: dict[int, int] = field(default_factory=dict)  # commit number -> MiB it adds
    compiled_from: int | None = None  # the first commit whose loss XLA compiles


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repository(path: Path, history: History) -> list[str]:
    """The repository, each commit's sha in order (the first is the good end)."""
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "config", "user.name", "Bisect Fixture")
    _git(path, "config", "user.email", "fixture@example.invalid")
    folder = path / "workloads"
    folder.mkdir()
    blocks, ballast, shas = history.base_blocks, 0, []
    for number in range(history.commits):
        blocks += history.added.get(number, 0)
        ballast += history.ballast.get(number, 0)
        compiled = history.compiled_from is not None and number >= history.compiled_from
        subject = (f"add {history.added[number]} blocks" if number in history.added
                   else f"add {history.ballast[number]} MiB of ballast"
                   if number in history.ballast
                   else "compile the loss with XLA" if number == history.compiled_from
                   else "break the module" if number in history.broken
                   else f"tidy the stack ({number})")
        (folder / "stack.py").write_text(_WORKLOAD.format(
            doc=f"A residual stack of convolution blocks (revision {number}).",
            blocks=blocks, comment=f"revision {number}", name=f"Stack{number % 3}",
            ballast=ballast,
            cross_entropy="tf.function(_cross_entropy, jit_compile=True)" if compiled
            else "_cross_entropy",
            broken="\nthis line does not parse" if number in history.broken else ""))
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", subject, "--date", f"2026-11-{number + 1:02d}T12:00:00")
        shas.append(_git(path, "rev-parse", "HEAD"))
    return shas


def commit_blocks(path: Path, blocks: int, subject: str) -> str:
    """One more commit that sets the stack's blocks; its sha."""
    module = path / "workloads" / "stack.py"
    module.write_text(re.sub(r"^BLOCKS = \d+", f"BLOCKS = {blocks}", module.read_text(),
                             flags=re.MULTILINE))
    _git(path, "commit", "-q", "-am", subject)
    return _git(path, "rev-parse", "HEAD")


def commit_unbuildable(path: Path, subject: str) -> str:
    """One more commit whose module imports (so a case is selected) but whose model cannot be
    built: a worker of it fails before its first step. Its sha."""
    module = path / "workloads" / "stack.py"
    first_line = "        inputs = keras.Input((SIZE, SIZE, 3))\n"  # build_model's
    text = module.read_text()
    assert first_line in text, "the fixture's build_model changed: mend commit_unbuildable"
    module.write_text(text.replace(
        first_line, "        raise RuntimeError(\"this revision's stack cannot be built\")\n", 1))
    _git(path, "commit", "-q", "-am", subject)
    return _git(path, "rev-parse", "HEAD")


def make_project(path: Path) -> Path:
    """A project that runs the suite: pytest.ini, conftest.py and perf/ of this repository,
    with no workloads of its own (each step names its commit's folder)."""
    path.mkdir(parents=True, exist_ok=True)
    for name in ("pytest.ini", "conftest.py"):
        shutil.copy(REPO / name, path / name)
    shutil.copytree(REPO / "perf", path / "perf", ignore=shutil.ignore_patterns("__pycache__"))
    (path / "workloads").mkdir(exist_ok=True)
    return path
