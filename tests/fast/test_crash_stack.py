"""A crash explains itself: the stack faulthandler left in a worker's log travels in the failure,
trimmed to the crashing and main threads whole and the other threads' innermost frames."""

from __future__ import annotations

from tfperf.ground.failures import CaseFailure
from tfperf.processes import crash_stack

TF = "/venv/lib/python3.11/site-packages/tensorflow/python"
THREADING = "/usr/lib/python3.11/threading.py"


def _frames(*names: str) -> list[str]:
    return [f'  File "{path}", line {line} in {name}'
            for line, (path, _, name) in enumerate((n.rpartition(":") for n in names), 1)]


# Cut from the frames of a crashed chief's log (2-vCPU Xeon, 2026-12): two coordinator threads at
# once in copy_tensor, the main thread waiting in join().
COPYING = _frames(f"{TF}/ops/gen_array_ops.py:identity", f"{TF}/ops/array_ops.py:identity",
                  f"{TF}/util/dispatch.py:op_dispatch_handler",
                  f"{TF}/util/traceback_utils.py:error_handler",
                  f"{TF}/ops/weak_tensor_ops.py:wrapper",
                  f"{TF}/distribute/coordinator/values.py:copy_tensor",
                  f"{TF}/util/nest_util.py:map_structure",
                  f"{TF}/distribute/coordinator/values.py:_copy_to_local",
                  f"{TF}/distribute/coordinator/values.py:get",
                  f"{TF}/distribute/coordinator/cluster_coordinator.py:_process_closure",
                  f"{TF}/distribute/coordinator/cluster_coordinator.py:_process_queue",
                  f"{THREADING}:run", f"{THREADING}:_bootstrap_inner", f"{THREADING}:_bootstrap")
MAIN = _frames(f"{TF}/distribute/coordinator/cluster_coordinator.py:join",
               "/repo/tfperf/worker/training/loop.py:remote_round",
               "/repo/tfperf/worker/training/loop.py:run_round",
               *(f"/repo/tfperf/worker/case/frame{i}.py:phase{i}" for i in range(20)),
               "<frozen runpy>:_run_module_as_main")
WAITING = _frames(f"{THREADING}:wait", f"{TF}/distribute/coordinator/cluster_coordinator.py:"
                  "_preemption_handler", f"{THREADING}:run", f"{THREADING}:_bootstrap_inner",
                  f"{THREADING}:_bootstrap")
LOG = "\n".join([
    "I0000 tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc: started",
    "warming up", "",
    "Fatal Python error: Segmentation fault", "",
    "Thread 0x00007f0000000003 (most recent call first):", *WAITING, "",
    "Thread 0x00007f0000000002 (most recent call first):", *COPYING, "",
    "Current thread 0x00007f0000000001 (most recent call first):", *COPYING, "",
    "Thread 0x00007f0000000000 (most recent call first):", *MAIN, "",
    "Extension modules: numpy._core._multiarray_umath, h5py._errors (total: 2)", ""])


def test_the_crashing_and_main_threads_are_shown_and_the_others_by_where_they_are() -> None:
    shown = crash_stack.trimmed(LOG)
    assert shown is not None
    lines = shown.splitlines()
    assert lines[:3] == ["I0000 tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc: "
                         "started", "warming up", "Fatal Python error: Segmentation fault"]
    # The crashing thread first and whole (14 frames, under the limit).
    assert lines[3] == "Current thread 0x00007f0000000001 (most recent call first):  <- crashed"
    assert lines[4:18] == COPYING
    # Then the main thread (listed last, not started by threading), cut at the limit.
    assert lines[18] == "Thread 0x00007f0000000000 (most recent call first):  <- the main thread"
    assert lines[19:19 + crash_stack.WHOLE_FRAMES] == MAIN[:crash_stack.WHOLE_FRAMES]
    more = len(MAIN) - crash_stack.WHOLE_FRAMES
    assert lines[19 + crash_stack.WHOLE_FRAMES] == f"  ... {more} more frames (in the log)"
    # The others by their innermost frames: the second thread copying is seen copying.
    rest = lines[20 + crash_stack.WHOLE_FRAMES:]
    assert rest[0] == "Thread 0x00007f0000000003 (most recent call first):"
    assert rest[1:6] == WAITING
    assert rest[6] == "Thread 0x00007f0000000002 (most recent call first):"
    assert rest[7:13] == COPYING[:crash_stack.OTHER_FRAMES]
    assert "in copy_tensor" in rest[12]
    assert rest[13:] == ["  ... 8 more frames (in the log)"]


def test_a_log_without_a_crash_has_no_stack_and_the_last_dump_is_the_one() -> None:
    assert crash_stack.trimmed("warming up\nTraceback (most recent call last):\nValueError") \
        is None
    two = "Fatal Python error: Aborted\n\nStack (most recent call first):\n" + \
        "\n".join(WAITING) + "\n" + LOG
    shown = crash_stack.trimmed(two)
    assert shown is not None and "Fatal Python error: Aborted" not in shown
    assert shown.endswith(str(crash_stack.trimmed(LOG)).partition("warming up\n")[2])


def test_a_crash_failure_shows_its_stack_under_a_header_that_says_so() -> None:
    stack = crash_stack.trimmed(LOG)
    assert stack is not None
    text = str(CaseFailure("crash", "task chief:0 of the cluster: worker killed by SIGSEGV "
                           "while compiling (log: /tmp/x.log)", stack))
    assert text.splitlines()[1] == (
        "--- the worker's log: its last lines, then the stack faulthandler wrote as it crashed "
        "(the crashing and main threads) ---")
    assert text.endswith(stack)
