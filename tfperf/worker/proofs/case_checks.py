"""What a worker checks of its case, and how it names what went wrong: the loss is finite, every
placed variable and layout-carrying op is where and how the case says."""

from __future__ import annotations

from typing import Any

from tfperf.ground.failures import Cause


class NonFiniteLoss(Exception):
    pass


class ConfigurationError(Exception):
    """The case did not run as named (devices, replicas): its figures would be mislabelled."""


def classify(error: BaseException, phase: str) -> Cause:
    import tensorflow as tf

    if isinstance(error, tf.errors.ResourceExhaustedError | MemoryError):
        return "out_of_memory"
    if isinstance(error, NonFiniteLoss):
        return "non_finite_loss"
    if isinstance(error, ConfigurationError):
        return "configuration"
    if phase == "compiling":
        return "compile_error"
    return "error"


def check_finite(loss: float, step: int) -> None:
    if loss != loss or loss in (float("inf"), float("-inf")):
        raise NonFiniteLoss(f"loss is {loss} at step {step}")


def check_variables(model: Any, assignment: dict[str, str]) -> None:
    """Each placed layer's variables live on its device (a proof, not the request)."""
    import tensorflow as tf

    for layer in model.layers:
        if layer.name not in assignment:
            continue
        want = tf.DeviceSpec.from_string(assignment[layer.name])
        for variable in layer.weights:
            have = tf.DeviceSpec.from_string(variable.value.device)
            if (have.device_type, have.device_index) != (want.device_type, want.device_index):
                raise ConfigurationError(f"{variable.path} is on {variable.value.device}, its "
                                         f"placement says {assignment[layer.name]}")


# Ops whose layout is an attribute: convolutions forward and backward, pooling, batch norm.
_LAYOUT_OPS = ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad",
               "AvgPool", "AvgPoolGrad", "FusedBatchNormV3", "FusedBatchNormGradV3", "BiasAdd",
               "BiasAddGrad")


def check_layout(graph: Any, data_format: str) -> int:
    """Every layout-carrying op of the step runs in the case's data format (an NCHW case whose
    convolutions ran NHWC behind transposes would be mislabelled). Returns how many there are."""
    from tfperf.worker.telemetry.step_flops import live_ops

    checked = 0
    for op in live_ops(graph.outputs):
        if op.type not in _LAYOUT_OPS:
            continue
        have = op.get_attr("data_format").decode()
        # BiasAdd of a dense layer says NHWC for "channels last", whatever the case's layout.
        if op.type.startswith("BiasAdd") and op.inputs[0].shape.rank != 4:
            continue
        if have != data_format:
            raise ConfigurationError(f"{op.type} {op.name} runs in {have}, the case is "
                                     f"{data_format}")
        checked += 1
    return checked
