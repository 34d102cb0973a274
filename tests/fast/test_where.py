"""A finding's where-report from two sides' op summaries, as their workers send them
(tfperf/worker/telemetry/op_profile.py). A real profiled A/B: tests/real/test_ab.py (the slowdown)."""

from __future__ import annotations

import pytest

from tfperf.ab import where

A = {"steps": 4, "ops_s": 0.0055, "every_op": True,
     "ops": [["Conv2D", 0.004, 1.0], ["MatMul", 0.001, 1.0], ["Mul", 0.0005, 6.0]],
     "allocated_by_op": [], "clusters": []}
B = {"steps": 4, "ops_s": 0.0112, "every_op": True,
     "ops": [["Sort", 0.006, 1.0], ["Conv2D", 0.004, 1.0], ["MatMul", 0.0012, 1.0]],
     "allocated_by_op": [["while/body/_1/StatefulPartitionedCall/sort/TopKV2", 3 * 2**20]],
     "clusters": [["a_inference_step_7__XlaMustCompile_true", 256]]}


def test_the_op_that_moved_most_comes_first_with_its_ratio_and_shares() -> None:
    changes = where.compare(A, B)
    assert [c.op for c in changes] == ["Sort", "Mul", "MatMul", "Conv2D"]
    sort, mul, matmul, conv = changes
    assert (sort.a_s, sort.b_s, sort.ratio) == (0.0, 0.006, None)  # new in B: no ratio
    assert sort.share_b == pytest.approx(0.006 / 0.0112)
    assert (mul.b_s, mul.change_s) == (0.0, -0.0005)  # B runs no Mul
    assert matmul.ratio == pytest.approx(1.2) and conv.ratio == 1.0
    assert where.brief({"A": A, "B": B}) == ("where: largest op changes a step, A -> B: Sort "
                                             "0.000 -> 6.000 ms, Mul 0.500 -> 0.000 ms, MatMul "
                                             "1.000 -> 1.200 ms")


def test_an_op_below_a_side_s_kept_list_is_unknown_not_zero() -> None:
    """A side keeps its largest ops only (op_profile.KEEP): an op missing from a list that is
    not every op may have run there, so its time is unknown, and so is its ratio."""
    partial = {**A, "every_op": False}
    sort = where.compare(partial, B)[0]
    assert (sort.op, sort.a_s, sort.ratio, sort.share_a) == ("Sort", None, None, None)
    table = "\n".join(where.lines({"A": partial, "B": B}))
    assert "| `Sort` | ? | 6.000 | ? | ? | 53.6% |" in table, table


def test_the_report_lists_ops_clusters_and_memory_by_op_or_says_why_not() -> None:
    said = "\n".join(where.lines({"A": A, "B": B}))
    assert "all ops 5.500 -> 11.200 ms a step" in said
    assert "| `Sort` | 0.000 | 6.000 | new | 0.0% | 53.6% |" in said
    assert "| `Mul` | 0.500 | 0.000 | gone | 9.1% | 0.0% |" in said
    assert "| `MatMul` | 1.000 | 1.200 | 1.20 | 18.2% | 10.7% |" in said
    assert ("XLA clusters run: A none; B a_inference_step_7__XlaMustCompile_true "
            "(256 instructions).") in said
    assert "Bytes allocated a step by op, A -> B: `sort/TopKV2` 0.0 -> 3.0 MiB." in said
    no_memory = "\n".join(where.lines({"A": A, "B": {**B, "allocated_by_op": []}}))
    assert "Memory by op: no allocation in these traces" in no_memory
    assert where.lines({"error": "a case of 2 processes is not profiled"}) == [
        "No profile: a case of 2 processes is not profiled"]
    assert where.brief({"error": "x"}) == "where: no profile: x"
