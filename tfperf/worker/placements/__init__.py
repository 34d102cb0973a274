"""Placements: which device each layer of the model runs on (model parallelism).

Each placement is one module in this package defining `PLACEMENT`, an object satisfying
`Placement`; the registry is the set of modules present, so adding one edits no other file. A
placement assigns layers to devices; this module applies the assignment (each layer's calls
and variables on its device, gradients beside their forward ops, as TF1's
colocate_gradients_with_ops did) and counts the device-to-device copies a step makes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from tfperf.ground import registry

GRADIENT_SCOPE = "gradient_tape/"


class Placement(Protocol):
    name: str

    def assign(self, model: Any, workload: Any, devices: list[str]) -> dict[str, str]:
        """Layer name -> device for the layers this placement moves (others stay on the first
        device)."""


def available() -> set[str]:
    """Names of the implemented values, without importing TensorFlow."""
    return registry.names(__path__)


def load(name: str) -> Placement:
    found: Placement = registry.load(__name__, __path__, name, "PLACEMENT", "placement")
    return found


def apply(model: Any, assignment: Mapping[str, str]) -> None:
    """Run each assigned layer's calls on its device and move its variables there. Keras 3
    creates a functional model's variables while constructing it, before any device scope of
    ours can apply, so they are re-created on their device with their values."""
    import tensorflow as tf

    for layer in model.layers:
        device = assignment.get(layer.name)
        if device is None:
            continue
        call = layer.call

        @functools.wraps(call)
        def on_device(*args: Any, _call: Any = call, _device: str = device, **kwargs: Any) -> Any:
            with tf.device(_device):
                return _call(*args, **kwargs)

        layer.call = on_device
        for variable in layer.weights:
            with tf.device(device):
                variable._value = tf.Variable(
                    variable.value, trainable=variable.trainable, name=variable.name,
                    aggregation=variable.value.aggregation,
                    synchronization=variable.value.synchronization)


def colocate_gradients(graph: Any) -> None:
    """Give each gradient op its forward op's device. TF2's GradientTape leaves gradient ops
    unplaced, so the whole backward pass would run on the first device."""
    devices = {op.name: op.device for op in graph.get_operations() if op.device}
    for op in graph.get_operations():
        if op.device or not op.name.startswith(GRADIENT_SCOPE):
            continue
        parts = op.name[len(GRADIENT_SCOPE):].split("/")
        for end in range(len(parts), 0, -1):
            device = devices.get("/".join(parts[:end]))
            if device:
                op._set_device(device)
                break


# Ops that run a function: they take variables on any device (multi-device functions).
CALLS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})


@dataclass(frozen=True)
class Copies:
    count: int  # tensors that cross from one device to another in one step
    bytes: int  # their size, where shapes are static


def copies(graph: Any, default_device: str) -> Copies:
    """The device-to-device transfers of one call of a traced step: every edge whose producer
    and consumer run on different devices becomes a send/receive pair when TensorFlow
    partitions the graph. Unplaced ops run on `default_device` (fully qualified: job, replica,
    task and device). The ops counted are those the step's outputs and its stateful ops (the
    variable updates) depend on.

    Variables as TensorFlow's placer treats them: a captured handle lives where its variable
    does, and an op that uses a variable runs with it, whatever device it asked for. A function
    call is the exception: given a variable on another device (a replica's compute function
    given parameter_server's central weights), it reads the variable there and gets its value
    copied over, which counts as a copy of the variable's size."""
    import tensorflow as tf

    from tfperf.worker.telemetry.step_flops import live_ops

    # Op devices name as much as their placer knew ("/device:CPU:1", or with job and task):
    # each is completed from the default device, so one device has one name.
    local = tf.DeviceSpec.from_string(default_device)
    # Only variables' handles: a captured tensor is copied to its placeholder's device once a
    # call (a round), not each step.
    captured = {internal.op.name: external.device for external, internal in graph.captures
                if internal.dtype == tf.resource and getattr(external, "device", "")}
    placed: dict[str, str] = {}

    def device(op: Any) -> str:
        if op.name not in placed:
            handles = [t for t in op.inputs if t.dtype == tf.resource]
            if handles and op.type not in CALLS:
                placed[op.name] = device(handles[0].op)
            else:
                named = captured.get(op.name, op.device)  # only placeholders are captured
                placed[op.name] = str(local.make_merged_spec(tf.DeviceSpec.from_string(named))
                                      .to_string())
        return placed[op.name]

    count = nbytes = 0
    for op in live_ops(graph.outputs, graph.control_outputs):
        for tensor in op.inputs:
            if tensor.dtype == tf.variant or device(tensor.op) == device(op):
                continue
            count += 1
            nbytes += variable_bytes(tensor) if tensor.dtype == tf.resource \
                else static_bytes(tensor)
    return Copies(count, nbytes)


def variable_bytes(handle: Any) -> int:
    """The size of the variable behind a resource handle, or 0 where its shape is not known."""
    import tensorflow as tf
    from tensorflow.python.ops import handle_data_util

    data = handle_data_util.get_resource_handle_data(handle)
    if not data.is_set or not data.shape_and_type:
        return 0
    shape = data.shape_and_type[0].shape
    if shape.unknown_rank or any(d.size < 0 for d in shape.dim):
        return 0
    return int(math.prod(d.size for d in shape.dim) * tf.as_dtype(data.shape_and_type[0].dtype).size)


def static_bytes(tensor: Any) -> int:
    """A tensor's size in bytes, or 0 where its shape is not static."""
    dims = tensor.shape.as_list() if tensor.shape.rank is not None else None
    if dims is None or any(d is None for d in dims):
        return 0
    size = 1
    for d in dims:
        size *= d
    return int(size * tensor.dtype.size)
