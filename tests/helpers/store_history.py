"""A generated history in a results store: nights of a fleet of runners, TensorFlow builds that
change every few weeks, a slowdown in one case, failures, A/B sessions. The dashboard's
self-test builds from a small one; benchmarks/store_scale.py from a year of 150 cases on 5
runners. Rows go in through the store's own tables, as sessions write them."""

from __future__ import annotations

import datetime
import itertools
import random
from dataclasses import dataclass

from tfperf.ground.machine import kind_of_key
from tfperf.storage import tables
from tfperf.storage.fingerprint import series_key
from tfperf.storage.results_store import ResultsStore

START = datetime.datetime(2025, 11, 26, 3, 0, tzinfo=datetime.UTC)
BUILDS = [("2.16.2", "v2.16.1-19-g810f233968c"), ("2.17.1", "v2.17.0-rc1-2-gad6d8cc177d"),
          ("2.18.1", "v2.18.0-rc2-46-gcc0a2c4e2ae"), ("2.19.1", "v2.19.0-rc0-6-ge36baa30292"),
          ("2.20.0", "v2.20.0-rc0-54-g72fbba3d20f"), ("2.21.0", "v2.21.0-rc1-3-g5e6c1b1d6f0")]
WORKLOADS = ("resnet20", "resnet56", "resnet50", "tinycnn", "transformer", "fused_elementwise")


@dataclass(frozen=True)
class Shape:
    days: int
    cases: int
    runners: int
    ab_sessions: int
    slow_case: int = 0  # this case runs 10% slower from the middle of the history on
    failed_case: int | None = None  # this case crashes on the first runner on the last night


def case_ids(count: int) -> list[str]:
    combos = itertools.product(WORKLOADS, ("xla_off", "xla_auto", "xla_jit"), ("NHWC", "NCHW"),
                               ("fp32", "mixed_fp16", "mixed_bf16"), ("1", "2"))
    return [f"{w}-gpu{n}-workers1-{x}-{f}-default-{'single' if n == '1' else 'replicated'}-"
            f"{p}-synthetic-prep_host" for w, x, f, p, n in itertools.islice(combos, count)]


def machine_keys(count: int) -> list[str]:
    kinds = ["NVIDIA_A100-SXM4-80GB", "NVIDIA_H100_80GB_HBM3"]
    return [f"Linux-py3.11-tf2.21.0-1x{kinds[i % 2]}-r{i}" for i in range(count)]


def _hard(build: tuple[str, str]) -> dict[str, object]:
    return {"tensorflow": build[0], "tensorflow_git": build[1], "gpu": "A100", "config": "abc123"}


def _run_document(case: str, when: str, session: str, rate: float, build: tuple[str, str],
                  verdict: str, rng: random.Random) -> dict[str, object]:
    rounds = [rate * rng.gauss(1, 0.01) for _ in range(10)]
    return {"case_id": case, "when": when, "session": session, "commit": "0" * 40,
            "examples_per_sec": sorted(rounds)[5], "round_examples_per_sec": rounds,
            "scaling_efficiency": None, "peak_memory_bytes": 2.1e9, "verdict": verdict,
            "rerun_round_examples_per_sec": [], "wall_s": 42.0,
            "fingerprint": {"hard": _hard(build), "soft": {"driver": "580.65", "host": "runner"}}}


def generate(store: ResultsStore, shape: Shape, seed: int = 1) -> dict[str, int]:
    """Write the history; how many rows of each kind."""
    rng = random.Random(seed)
    cases, keys = case_ids(shape.cases), machine_keys(shape.runners)
    base = {case: 500.0 + 40 * i for i, case in enumerate(cases)}
    counts = {"sessions": 0, "runs": 0, "failures": 0, "ab_cases": 0}
    per_build = max(1, shape.days // len(BUILDS))
    with store.engine.begin() as connection:
        for day in range(shape.days):
            build = BUILDS[min(day // per_build, len(BUILDS) - 1)]
            for r, key in enumerate(keys):
                moment = START + datetime.timedelta(days=day, minutes=7 * r)
                session = f"{moment:%Y%m%dT%H%M%S}Z-{r}"
                connection.execute(tables.sessions.insert().values(
                    id=session, kind="measured", tier="nightly", machine_key=key,
                    commit="0" * 40, started=moment.isoformat(), source="session"))
                runs, failures = [], []
                for c, case in enumerate(cases):
                    when = (moment + datetime.timedelta(seconds=50 * c)).isoformat()
                    last_night = day == shape.days - 1 and r == 0 and c == shape.failed_case
                    if last_night or rng.random() < 0.002:
                        failures.append({
                            "session_id": session, "case_id": case, "machine_key": key,
                            "when": when, "cause": "out_of_memory" if last_night else "crash",
                            "phase": "measuring",
                            "message": "worker killed by SIGSEGV while measuring",
                            "log_path": f"logs/{case}.log", "log_tail": "Fatal Python error"})
                        continue
                    slow = c == shape.slow_case and day >= shape.days // 2
                    rate = base[case] * (0.9 if slow else 1.0) * (1 + 0.02 * r)
                    verdict = "regression" if slow and day == shape.days - 1 else "ok"
                    document = _run_document(case, when, session, rate, build, verdict, rng)
                    reason = (f"{verdict}: throughput {'-10.0' if slow else '+0.3'}% (made up)")
                    runs.append({"session_id": session, "case_id": case, "machine_key": key,
                                 "when": when, "tensorflow": build[0], "git_hash": build[1],
                                 "examples_per_sec": document["examples_per_sec"],
                                 "verdict": verdict, "document": {**document, "reason": reason},
                                 "reason": reason, "compile_cpu_s": 2.0 * rng.gauss(1, 0.05),
                                 "peak_memory_bytes": 2.1e9, "mfu": 0.4 * rate / base[case],
                                 "flagged": "yardstick disturbed (made up)" if day == 3 else "",
                                 "machine_kind": kind_of_key(key),
                                 "series_key": series_key(_hard(build))})
                connection.execute(tables.runs.insert(), runs)
                if failures:
                    connection.execute(tables.failures.insert(), failures)
                counts["sessions"] += 1
                counts["runs"] += len(runs)
                counts["failures"] += len(failures)
        for day in range(shape.ab_sessions):
            moment = START + datetime.timedelta(days=day, hours=12)
            session = f"ab-{moment:%Y%m%d}"
            connection.execute(tables.sessions.insert().values(
                id=session, kind="ab", tier="smoke", machine_key=keys[0], commit="0" * 40,
                started=moment.isoformat(), source="session"))
            rows = []
            for case in cases[:14]:
                ratio = rng.gauss(1.0, 0.01)
                pairs = [{"duet": 1 + i % 4, "order": "AB" if i % 2 else "BA", "a_rate": 100.0,
                          "b_rate": 100 * ratio * rng.gauss(1, 0.01), "at_s": 3.0 * i}
                         for i in range(24)]
                verdict = "same" if abs(ratio - 1) < 0.015 else "slower" if ratio < 1 else "faster"
                rows.append({"session_id": session, "case_id": case, "when": moment.isoformat(),
                             "verdict": verdict, "ratio": ratio, "low": ratio - 0.012,
                             "high": ratio + 0.012, "pairs": len(pairs),
                             "document": {"case_id": case, "pairs": pairs, "failure": None}})
            connection.execute(tables.ab_cases.insert(), rows)
            counts["sessions"] += 1
            counts["ab_cases"] += len(rows)
    return counts
