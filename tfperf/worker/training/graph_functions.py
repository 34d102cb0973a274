"""tf.function without AutoGraph, for every function the harness builds.

AutoGraph rewrites a function's Python source before tracing it: 2-3 s of a case's setup on
two cores (cProfile of a deepconn worker: 2.7 s in AST transforms of 9 functions, against a
0.2 s trace). The harness writes its loop as an explicit tf.while_loop, and Keras 3 keeps no
Python control flow on tensors (its code also runs under JAX, which has no AutoGraph), so
there is nothing for AutoGraph to convert.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf


def graph_function(function: Callable[..., Any], **options: Any) -> Any:
    return tf.function(function, autograph=False, **options)
