"""The XLA equivalence property: one drawn example, two arms, proof that XLA ran, comparison.

Used by perf/test_xla_equivalence.py through the `xla_equivalence` fixture. An example fails
when the arms differ beyond the precision's tolerance, when anything is NaN or infinite, when
the XLA arm executed no XLA (two non-XLA runs would prove nothing) or when the reference arm
did. The failure names the configuration and prints the command that reproduces it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from hypothesis import strategies as st

from tfperf.equivalence.arms import ArmResult, ArmWorkers
from tfperf.numerics.compare import ArmSpec, Differences, differences, problems, same_start
from tfperf.numerics.tolerances import tolerance
from tfperf.workload import WorkloadInfo

BATCH_SIZES = (4, 8, 16)
MAX_STEPS = 4  # the tolerances were measured at this many steps (benchmarks/xla_noise_floor.py)
XLA_MODES = ("jit", "auto")
# Seeds vary the data and initial weights; a small range keeps shrinking short.
MAX_SEED = 1023


class EquivalenceFailure(AssertionError):
    pass


@dataclass
class EquivalenceCheck:
    runner: ArmWorkers
    workloads: Mapping[str, WorkloadInfo]
    device: str
    # Precisions drawn on this device; on CPU mixed_fp16 is left out: without XLA it trains
    # about 35x slower than fp32 there (../shared/TF-NOTES.md), minutes per example.
    precisions: tuple[str, ...]
    fault: str | None = None
    example: ArmSpec | None = None
    # --perf-only choices that narrow the draws: xla, data_format, precision.
    only: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The largest difference of each kind seen this session, and where: for the summary.
    largest: dict[str, tuple[float, str]] = field(default_factory=dict)
    examples_run: int = 0
    # XLA arms trained again from the reference's initial weights, having started elsewhere.
    restarted: int = 0
    # Whether bfloat16 may train in NCHW here: not on a CPU without AVX-512 (requirements.py).
    nchw_bf16: bool = True


    @classmethod
    def for_session(cls, arms: ArmWorkers, workloads: Mapping[str, WorkloadInfo],
                    only: Mapping[str, tuple[str, ...]], xla_fault: str | None,
                    xla_example: ArmSpec | None, cpu_avx512: bool = True) -> EquivalenceCheck:
        """The session's check: its workloads (those --perf-only names), on the first GPU
        where there is one, in every precision the device runs; `xla_fault` and `xla_example`
        as --perf-xla-fault and --perf-xla-example say."""
        chosen = only.get("workload")
        return cls(arms, {n: w for n, w in workloads.items() if not chosen or n in chosen},
                   "/device:GPU:0" if arms.gpu else "/device:CPU:0",
                   ("fp32", "mixed_bf16", "mixed_fp16") if arms.gpu else ("fp32", "mixed_bf16"),
                   xla_fault, xla_example, only,
                   nchw_bf16=arms.gpu or cpu_avx512)

    def _allowed(self, axis: str, values: tuple[str, ...]) -> list[str]:
        return [v for v in values if v in self.only.get(axis, values)]

    def _names(self) -> list[str]:
        precisions = self._allowed("precision", self.precisions)
        return sorted(n for n, w in self.workloads.items() if set(w.precisions) & set(precisions)
                      and self._allowed("data_format", w.data_formats))

    def nothing_to_draw(self) -> str | None:
        """Why the --perf-only choices leave no example to draw (the property is then skipped
        with this reason, as a case the choices exclude is), or None."""
        if self.example is not None or (self._names() and self._allowed("xla", XLA_MODES)):
            return None
        return ("--perf-only leaves no XLA equivalence example: it needs an XLA mode auto or "
                "jit, and a workload with the chosen formats and precisions")

    def examples(self) -> st.SearchStrategy[ArmSpec]:
        if self.example is not None:
            return st.just(self.example)
        if (why := self.nothing_to_draw()) is not None:
            raise ValueError(why)
        allowed = self._allowed
        precisions = allowed("precision", self.precisions)
        names = self._names()
        modes = allowed("xla", XLA_MODES)

        @st.composite
        def draw(draw: st.DrawFn) -> ArmSpec:
            info = self.workloads[draw(st.sampled_from(names))]

            def formats(precision: str) -> list[str]:
                return [f for f in allowed("data_format", info.data_formats)
                        if self.nchw_bf16 or f != "NCHW" or precision != "mixed_bf16"]

            precision = draw(st.sampled_from([p for p in info.precisions
                                              if p in precisions and formats(p)]))
            return ArmSpec(
                workload=info.name,
                size="tiny",
                batch_size=draw(st.sampled_from(BATCH_SIZES)),
                data_format=draw(st.sampled_from(formats(precision))),
                precision=precision,
                seed=draw(st.integers(0, MAX_SEED)),
                steps=draw(st.integers(1, MAX_STEPS)),
                xla=draw(st.sampled_from(modes)),
                device=self.device,
            )

        return draw()

    def _note(self, spec: ArmSpec, found: Differences) -> None:
        where = f"{spec.workload} {spec.precision} {spec.data_format} xla_{spec.xla} seed {spec.seed}"
        for kind in ("loss", "gradients", "weights"):
            key = f"{spec.precision} {kind}"
            value = getattr(found, kind)
            if value >= self.largest.get(key, (-1.0, ""))[0]:
                self.largest[key] = (value, where)

    def check(self, spec: ArmSpec) -> None:
        self.examples_run += 1
        arm = replace(spec, fault=self.fault) if self.fault else spec
        reference, candidate = self._train(spec.reference(), arm,
                                           self.workloads[spec.workload].path)
        lines = []
        if reference.xla_executions:
            lines.append(f"the XLA-off reference executed XLA {reference.xla_executions} times")
        if candidate.xla_executions == 0:
            lines.append(f"XLA did not run in the xla_{spec.xla} arm (no XLA execution in its "
                         "profiler trace): the comparison would prove nothing")
        found = differences(reference.trajectory, candidate.trajectory)
        if not found.non_finite and not self.fault:
            self._note(spec, found)
        lines += problems(found, tolerance(spec.workload, spec.precision))
        if lines:
            fault = f" --perf-xla-fault={self.fault}" if self.fault else ""
            raise EquivalenceFailure(
                f"XLA ({spec.xla}) and non-XLA training differ for {spec.workload} "
                f"{spec.precision} {spec.data_format} batch {spec.batch_size}, {spec.steps} "
                f"steps, seed {spec.seed}:\n" + "\n".join(f"  - {line}" for line in lines)
                + "\nreproduce: pytest perf/test_xla_equivalence.py "
                f"--perf-xla-example={shlex.quote(spec.to_json())}{fault}")

    def _train(self, reference_spec: ArmSpec, arm: ArmSpec, path: Path
               ) -> tuple[ArmResult, ArmResult]:
        """Both arms, from identical initial weights. Where the runner allows, they train at
        once, each from the workload's seeded initialisation; an XLA arm that did not start
        from exactly the reference's weights trains again from them, as it does when arms
        run one after the other."""
        if not self.runner.concurrent or arm.xla == reference_spec.xla:  # one worker: in turn
            reference = self.runner.run(reference_spec, path)
            return reference, self.runner.run(arm, path, initial=reference.path)
        pending = self.runner.submit(arm, path)  # the longer arm (it compiles) first
        try:
            reference = self.runner.run(reference_spec, path)
        except BaseException:
            self.runner.abandon(pending)
            raise
        candidate = self.runner.wait(pending)
        if not same_start(reference.trajectory, candidate.trajectory):
            self.restarted += 1
            candidate = self.runner.run(arm, path, initial=reference.path)
        return reference, candidate

    def summary(self) -> list[str]:
        arms = "XLA arm" if self.restarted == 1 else "XLA arms"
        restarted = (f" ({self.restarted} {arms} trained again from the reference's initial "
                     "weights)") if self.restarted else ""
        lines = [f"{self.examples_run} examples{restarted}; largest XLA vs non-XLA difference "
                 "seen:"]
        for key, (value, where) in sorted(self.largest.items()):
            lines.append(f"  {key:22} {value:.2e}  ({where})")
        return lines
