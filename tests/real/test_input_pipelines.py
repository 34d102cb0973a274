"""Input pipelines: the TFRecord cache (written once, reused, rebuilt when stale or damaged),
the tf.data pipeline reading back exactly what was stored, preprocessing on the host or the
device, and the input figures every case reports (real files, real TensorFlow, real workers)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from tests.helpers.suites import MakeSuite
from tfperf.worker.pipelines import tfrecord
from tfperf.worker.training import tfrecord_cache


def examples(count: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, (count, 4, 4, 3), dtype=np.uint8),
            rng.integers(0, 10, count, dtype=np.int32))


def test_cache_is_written_once_and_reused(tmp_path: Path) -> None:
    features, labels = examples()
    first = tfrecord_cache.ensure(tmp_path, "w-tiny-NHWC-b8", "few_large", features, labels)
    assert first.written and len(first.files) == tfrecord_cache.LARGE_FILES
    stamps = [f.stat().st_mtime_ns for f in first.files]
    again = tfrecord_cache.ensure(tmp_path, "w-tiny-NHWC-b8", "few_large", features, labels)
    assert not again.written and again.directory == first.directory
    assert [f.stat().st_mtime_ns for f in again.files] == stamps
    small = tfrecord_cache.ensure(tmp_path, "w-tiny-NHWC-b8", "many_small", features, labels)
    assert len(small.files) == 40 // tfrecord_cache.EXAMPLES_PER_SMALL_FILE + 1
    assert first.directory.is_dir()  # another layout is another entry


def test_cache_is_rebuilt_when_its_content_would_differ(tmp_path: Path) -> None:
    old = tfrecord_cache.ensure(tmp_path, "w-tiny-NHWC-b8", "few_large", *examples(seed=0))
    new = tfrecord_cache.ensure(tmp_path, "w-tiny-NHWC-b8", "few_large", *examples(seed=1))
    assert new.written and new.directory != old.directory
    assert not old.directory.exists()  # the stale entry is gone, not left to grow the cache


@pytest.mark.parametrize("damage", ["truncate", "delete", "manifest", "unfinished"])
def test_damaged_cache_entry_is_rebuilt(tmp_path: Path, damage: str) -> None:
    features, labels = examples()
    entry = tfrecord_cache.ensure(tmp_path, "w", "few_large", features, labels)
    if damage == "truncate":
        with entry.files[0].open("r+b") as handle:
            handle.truncate(10)
    elif damage == "delete":
        entry.files[1].unlink()
    elif damage == "manifest":
        (entry.directory / tfrecord_cache.MANIFEST).write_text("{not json")
    else:  # a writer killed before it renamed its folder into place, and no entry
        for path in entry.directory.iterdir():
            path.unlink()
        entry.directory.rmdir()
        (tmp_path / f".writing-{entry.directory.name}-999999").mkdir()
    rebuilt = tfrecord_cache.ensure(tmp_path, "w", "few_large", features, labels)
    assert rebuilt.written and rebuilt.directory == entry.directory
    assert read_all(rebuilt) == stored_set(features, labels)


def stored_set(features: np.ndarray, labels: np.ndarray) -> set[tuple[bytes, int]]:
    return {(f.tobytes(), int(y)) for f, y in zip(features, labels, strict=True)}


def read_all(entry: tfrecord_cache.Entry, batch: int = 8) -> set[tuple[bytes, int]]:
    seen: set[tuple[bytes, int]] = set()
    for x, y in tfrecord.dataset(entry, batch, None).take(3 * entry.examples // batch):
        assert x.dtype == tf.uint8 and x.shape == (batch, 4, 4, 3)
        seen |= stored_set(x.numpy(), y.numpy())
    return seen


def test_pipeline_reads_back_exactly_what_was_stored(tmp_path: Path) -> None:
    features, labels = examples()
    for layout in ("few_large", "many_small"):
        entry = tfrecord_cache.ensure(tmp_path, "w", layout, features, labels)
        assert read_all(entry) == stored_set(features, labels)


def test_host_preprocessing_runs_in_the_pipeline(tmp_path: Path) -> None:
    features, labels = examples()
    entry = tfrecord_cache.ensure(tmp_path, "w", "few_large", features, labels)
    host = tfrecord.dataset(entry, 8, lambda x: tf.cast(x, tf.float32) / 255)
    raw = tfrecord.dataset(entry, 8, None)
    assert host.element_spec[0].dtype == tf.float32  # preprocessed before the step
    assert raw.element_spec[0].dtype == tf.uint8  # the device gets the compact form


def test_every_input_trains_and_reports_what_input_costs(make_suite: MakeSuite) -> None:
    suite = make_suite("tinycnn")
    # Device preprocessing joins at nightly: run that tier's inputs at tiny size.
    args = ("--perf-tier=nightly", "--perf-selection=all", "--perf-size=tiny", "--perf-warmup-rounds=1",
            "--perf-only=precision=fp32", "--perf-only=placement=default",
            "--perf-only=workload=tinycnn", "--perf-only=device_kind=cpu",
            "--perf-only=device_count=1", "--perf-only=xla=off", "--perf-only=data_format=NHWC",
            "--perf-only=strategy=single", "--perf-rounds=2", "--perf-steps-per-round=3",
            "--perf-tfrecord-files=many_small")
    result = suite.runpytest(*args, "--perf-only=input=synthetic,tfrecord,feed",
                             "--benchmark-json=out.json")
    assert result.parseoutcomes() == {"no_baseline": 4}, result.stdout.str()
    benches = json.loads((suite.path / "out.json").read_text())["benchmarks"]
    by_case = {(b["extra_info"]["input"], b["extra_info"]["preprocess"]): b["extra_info"]
               for b in benches}
    assert set(by_case) == {("synthetic", "host"), ("tfrecord", "host"), ("tfrecord", "device"),
                            ("feed", "host")}
    synthetic = by_case["synthetic", "host"]
    assert synthetic["pipeline_examples_per_sec"] is None and synthetic["input_bound"] is None
    assert synthetic["input_bound_evidence"].startswith("no input pipeline")
    for key in (("tfrecord", "host"), ("tfrecord", "device"), ("feed", "host")):
        info = by_case[key]
        assert info["loss_last"] < info["loss_first"], key
        assert info["pipeline_examples_per_sec"] > 0 and info["step_examples_per_sec"] > 0
        assert info["input_bound"] == (info["pipeline_examples_per_sec"]
                                       < info["step_examples_per_sec"])
        assert info["input_bound_evidence"].endswith("(a CPU case: judged on the rates alone)")
        assert info["fraction_of_step_alone"] > 0
    entries = [p for p in (suite.path / ".perf-results" / "cache").iterdir()
               if not p.name.startswith(".")]
    assert len(entries) == 1 and "-many_small-" in entries[0].name
    stamp = (entries[0] / tfrecord_cache.MANIFEST).stat().st_mtime_ns
    # A second session reuses the files (the cache is shared by cases and sessions).
    again = suite.runpytest(*args, "--perf-only=input=tfrecord", "--perf-only=preprocess=host",
                            "--perf-history=second-session")  # judged against nothing
    assert again.parseoutcomes() == {"no_baseline": 1}, again.stdout.str()
    assert (entries[0] / tfrecord_cache.MANIFEST).stat().st_mtime_ns == stamp
    assert not [p for p in entries[0].parent.iterdir() if p.name.startswith(".writing")]
    assert os.listdir(entries[0].parent) == [entries[0].name]
