"""A failed case as the product's answer: its message and where to look next.

A case that fails with a cause (a regression, an A/B finding, a crash, a configuration that did
not run as named) has been judged by the harness, so the harness's own frames say nothing a
person can act on; pytest shows this text instead of them. Any other exception is the
harness's error and keeps its traceback."""

from __future__ import annotations

from tfperf.ground.failures import CaseFailure, Cause

# The guide that explains each cause, and what a person usually does next.
GUIDE: dict[Cause, str] = {
    "crash": "where the worker's log had one, the stack above is the one faulthandler wrote "
             "as it died; the whole log is kept (docs/results.md, docs/clusters.md)",
    "out_of_memory": "a smaller --perf-batch-size, or a case with more devices (docs/results.md)",
    "timeout": "--perf-timeout sets a case's limit; the log says the last phase (docs/results.md)",
    "compile_error": "the log has the tracing or XLA error; reproduce it with -k and this case id",
    "non_finite_loss": "the workload's numbers diverged (docs/workloads.md)",
    "loss_not_falling": "the workload did not learn: its model, data or optimizer "
                        "(docs/workloads.md)",
    "error": "the worker's own error is in its log's last lines above",
    "configuration": "the case did not run as its id names it: devices, replicas, layout or XLA "
                     "(docs/results.md)",
    "not_steady": "the step traced or compiled again while measured (docs/results.md)",
    "not_sane": "a measured time or rate of zero or less (docs/results.md)",
    "regression": "the gate's statistics, waivers and rollbacks: docs/gate.md; judge the kept "
                  "runs again with tfperf-gate",
    "slower": "the A/B's verdict and interval: docs/ab.md; since when: tfperf-bisect "
              "(docs/bisect.md)",
    "costs_more": "the cost verdicts (compile time, peak memory): docs/ab.md",
    "numerics_differ": "the numerics verdict and its tolerances: docs/ab.md",
}


def answered(error: BaseException | None, in_a_case: bool) -> CaseFailure | None:
    """The failure pytest shows as an answer: a case's CaseFailure. Anything else keeps its
    traceback: the harness's own errors, and a check outside the cases (the XLA equivalence
    property, whose falsifying example travels with its exception)."""
    return error if in_a_case and isinstance(error, CaseFailure) else None


def shown(failure: CaseFailure, where: list[str]) -> str:
    """What pytest prints for the failed case: the failure (with its log's last lines, if any),
    then where to look next: the runner's files for this case, and the guide for its cause."""
    steps = [*where, GUIDE[failure.cause]]
    if failure.log_path and not any(failure.log_path in step for step in steps) \
            and failure.log_path not in failure.message:
        steps.insert(0, f"the worker's log: {failure.log_path}")
    return "\n".join([str(failure), "", "where to look next:", *(f"  {s}" for s in steps)])
