"""FLOPs of a training step, read from its traced graph.

Only the matrix products count (convolutions forward and backward, MatMul, BatchMatMul,
Einsum): that is what MFU compares with the device's matrix-product rate. Only ops that the
step's outputs depend on are counted, so gradients TensorFlow traces but never uses (the input
gradient of the first convolution) do not inflate the figure. A multiply-add is 2 FLOPs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any

# Calls of nested functions (a tf.function inside the step, an XLA-compiled part of a model):
# their bodies are counted. Loops and conditionals would hide how often their body runs.
_CALLS = {"PartitionedCall", "StatefulPartitionedCall"}
_HIDDEN = {"While", "StatelessWhile", "If", "StatelessIf"}


def _shape(tensor: Any) -> list[int]:
    dims = tensor.shape.as_list()
    if any(d is None for d in dims):
        raise ValueError(f"{tensor.name} has no static shape {dims}: FLOPs need static shapes")
    return [int(d) for d in dims]


def _conv_forward(op: Any) -> int:
    out = _shape(op.outputs[0])
    kernel = _shape(op.inputs[1])  # (kh, kw, in, out)
    return 2 * math.prod(out) * math.prod(kernel[:-1])


def _conv_backprop_input(op: Any) -> int:
    grad_out = _shape(op.inputs[2])
    kernel = _shape(op.inputs[1])
    return 2 * math.prod(grad_out) * math.prod(kernel[:-1])


def _conv_backprop_filter(op: Any) -> int:
    grad_out = _shape(op.inputs[2])
    kernel = _shape(op.outputs[0])
    return 2 * math.prod(grad_out) * math.prod(kernel[:-1])


def _matmul(op: Any) -> int:
    a = _shape(op.inputs[0])
    transpose_a = op.get_attr("transpose_a")
    inner = a[0] if transpose_a else a[1]
    return 2 * math.prod(_shape(op.outputs[0])) * inner


def _batch_matmul(op: Any) -> int:
    a = _shape(op.inputs[0])
    inner = a[-2] if op.get_attr("adj_x") else a[-1]
    return 2 * math.prod(_shape(op.outputs[0])) * inner


def _einsum(op: Any) -> int:
    equation = op.get_attr("equation").decode()
    operands = re.split(r"->", equation.replace(" ", ""))[0].split(",")
    sizes: dict[str, int] = {}
    for letters, tensor in zip(operands, op.inputs, strict=True):
        if "." in letters:
            raise ValueError(f"einsum with ellipsis {equation!r} is not counted")
        sizes.update(zip(letters, _shape(tensor), strict=True))
    # Every index, kept or contracted, is one loop of the product.
    return 2 * math.prod(sizes.values()) if len(operands) > 1 else 0


COUNTERS: dict[str, Callable[[Any], int]] = {
    "Conv2D": _conv_forward,
    "Conv2DBackpropInput": _conv_backprop_input,
    "Conv2DBackpropFilter": _conv_backprop_filter,
    "MatMul": _matmul,
    "BatchMatMulV2": _batch_matmul,
    "BatchMatMulV3": _batch_matmul,
    "Einsum": _einsum,
}


def live_ops(outputs: Iterable[Any], ops: Iterable[Any] = ()) -> list[Any]:
    """The ops that `outputs` (tensors) and `ops` depend on, themselves included (data and
    control edges)."""
    seen: set[str] = set()
    stack = [t.op for t in outputs] + list(ops)
    live = []
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        live.append(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return live


def _body(graph: Any, op: Any) -> Any:
    """The graph of the function that a call op runs."""
    function = graph._get_function(op.get_attr("f").name)
    if function is None or getattr(function, "graph", None) is None:
        from tensorflow.python.framework import function_def_to_graph

        return function_def_to_graph.function_def_to_graph(function.definition)
    return function.graph


def count_graph(graph: Any) -> int:
    """Matrix-product FLOPs of a traced function's graph (one call), nested calls included."""
    total = 0
    for op in live_ops(graph.outputs):
        if op.type in _HIDDEN:
            raise ValueError(
                f"{op.type} {op.name} hides its body from the FLOP count: trace the step without "
                "loops or conditionals"
            )
        if op.type in _CALLS:
            total += count_graph(_body(graph, op))
            continue
        counter = COUNTERS.get(op.type)
        if counter is not None:
            total += counter(op)
    return total
