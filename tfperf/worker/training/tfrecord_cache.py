"""TFRecord files of a workload's data, written once and reused across cases and sessions.

As the seeds' CIFAR conversion does, the suite writes the workload's (encoded) examples to
TFRecord files once. A cache entry is named by what it holds (workload, size, layout, batch,
file layout) and by a digest of its content: an entry whose content would differ is written
anew and the stale one removed; an entry that is incomplete or damaged (a killed writer, a
deleted file) fails validation and is rebuilt. Entries are written into a temporary folder and
renamed into place, so a reader never sees half an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMAT_VERSION = 1
EXAMPLES_PER_SMALL_FILE = 16  # many_small: the small-files case the seeds warn about
LARGE_FILES = 2  # few_large
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Entry:
    directory: Path
    files: tuple[Path, ...]
    feature_shape: tuple[int, ...]  # one example's
    feature_dtype: str
    label_shape: tuple[int, ...]
    label_dtype: str
    examples: int
    written: bool  # False when an existing entry was reused


def _digest(layout: str, features: np.ndarray, labels: np.ndarray) -> str:
    digest = hashlib.sha256(f"v{FORMAT_VERSION}/{layout}".encode())
    for array in (features, labels):
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()


def _shards(examples: int, layout: str) -> list[range]:
    per_file = EXAMPLES_PER_SMALL_FILE if layout == "many_small" else -(-examples // LARGE_FILES)
    return [range(start, min(start + per_file, examples)) for start in range(0, examples, per_file)]


def _write(directory: Path, layout: str, features: np.ndarray, labels: np.ndarray,
           digest: str) -> None:
    import tensorflow as tf

    def raw(value: np.ndarray) -> Any:
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.tobytes()]))

    files = {}
    for number, shard in enumerate(_shards(len(features), layout)):
        path = directory / f"part-{number:05d}.tfrecord"
        with tf.io.TFRecordWriter(str(path)) as writer:
            for i in shard:
                example = tf.train.Example(features=tf.train.Features(
                    feature={"x": raw(features[i]), "y": raw(labels[i])}))
                writer.write(example.SerializeToString())
        files[path.name] = path.stat().st_size
    manifest = {
        "format": FORMAT_VERSION, "digest": digest, "examples": len(features),
        "feature": {"shape": list(features.shape[1:]), "dtype": features.dtype.str},
        "label": {"shape": list(labels.shape[1:]), "dtype": labels.dtype.str},
        "files": files,
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1))


def _read(directory: Path, digest: str) -> dict[str, Any] | None:
    """The entry's manifest if the entry is complete and holds `digest`'s content."""
    try:
        manifest: dict[str, Any] = json.loads((directory / MANIFEST).read_text())
        if manifest["format"] != FORMAT_VERSION or manifest["digest"] != digest:
            return None
        for name, size in manifest["files"].items():
            if (directory / name).stat().st_size != size:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest


def _entry(directory: Path, manifest: dict[str, Any], written: bool) -> Entry:
    return Entry(
        directory=directory,
        files=tuple(directory / name for name in sorted(manifest["files"])),
        feature_shape=tuple(manifest["feature"]["shape"]),
        feature_dtype=np.dtype(manifest["feature"]["dtype"]).name,
        label_shape=tuple(manifest["label"]["shape"]),
        label_dtype=np.dtype(manifest["label"]["dtype"]).name,
        examples=int(manifest["examples"]),
        written=written,
    )


def ensure(root: Path, name: str, layout: str, features: np.ndarray, labels: np.ndarray) -> Entry:
    """The entry holding these examples (first axis) in this file layout, written if missing,
    stale or damaged. `name` says what the data is (workload, size, format, batch)."""
    digest = _digest(layout, features, labels)
    prefix = f"{name}-{layout}-"
    directory = root / f"{prefix}{digest[:16]}"
    manifest = _read(directory, digest)
    if manifest is not None:
        return _entry(directory, manifest, written=False)
    root.mkdir(parents=True, exist_ok=True)
    # Same data description, other content (the workload or its generator changed): stale.
    for stale in root.glob(f"{prefix}*"):
        if stale != directory:
            shutil.rmtree(stale, ignore_errors=True)
    temporary = root / f".writing-{directory.name}-{os.getpid()}"
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir()
    try:
        _write(temporary, layout, features, labels, digest)
        shutil.rmtree(directory, ignore_errors=True)  # a damaged entry
        try:
            temporary.rename(directory)
        except OSError:
            # Another process finished the same entry first: use it if it is whole.
            manifest = _read(directory, digest)
            if manifest is None:
                raise
            return _entry(directory, manifest, written=False)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    manifest = _read(directory, digest)
    assert manifest is not None, f"{directory}: just written but does not validate"
    return _entry(directory, manifest, written=True)
