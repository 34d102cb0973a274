"""A crash's stack, as faulthandler wrote it in a worker's log, trimmed to what explains it.

Every worker runs with faulthandler on, so a native crash leaves every thread's Python stack in
its log: "Fatal Python error: ...", then one block a thread, the crashing one marked "Current
thread". A cluster's chief runs a thread for each of its coordinator's workers besides its
main one, so its dump is longer than the log's tail that a failure shows, and the crashing
thread is not the last block: the failure showed the main thread waiting in join() and not the
coordinator thread that crashed. The log itself lives in a folder a self-test's session
removes, so what explains the crash must travel in the failure's own text.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfperf.ground.failures import CRASH_STACK

# Frames shown of the crashing thread and of the main thread (faulthandler writes up to 100;
# a forked worker's main thread is about 25 deep, the zygote's and runpy's at the bottom).
WHOLE_FRAMES = 16
# Frames shown of every other thread: enough to see two threads in one place. A call to a
# TensorFlow op is five frames deep before its caller's (the generated op, its public function,
# dispatch, the error handler, the weak-tensor wrapper).
OTHER_FRAMES = 6
# Lines the worker logged before its dump: what it was doing.
BEFORE_LINES = 6


@dataclass
class _Thread:
    header: str  # "Current thread 0x... (most recent call first):" or "Thread 0x... ..."
    frames: list[str]

    @property
    def current(self) -> bool:
        return self.header.startswith("Current thread")

    @property
    def started_by_threading(self) -> bool:
        return bool(self.frames) and self.frames[-1].rstrip().endswith(" in _bootstrap")

    def shown(self, frames: int, note: str = "") -> list[str]:
        kept = self.frames[:frames]
        more = len(self.frames) - len(kept)
        return [self.header + note, *kept,
                *([f"  ... {more} more frame{'s' * (more != 1)} (in the log)"] if more else [])]


def _threads(lines: list[str]) -> tuple[list[_Thread], int]:
    """The thread blocks of a dump (its lines after the CRASH_STACK line), and how many lines of it
    were read (the dump ends at "Extension modules:" or at the first line not of its kind)."""
    threads: list[_Thread] = []
    for used, line in enumerate(lines):
        if line.startswith(("Current thread 0x", "Thread 0x", "Stack (most recent")):
            threads.append(_Thread(line.rstrip(), []))
        elif line.startswith("  ") and threads:
            threads[-1].frames.append(line.rstrip())
        elif line.strip() and not line.startswith("Python runtime state"):
            return threads, used
    return threads, len(lines)


def trimmed(log: str) -> str | None:
    """The last fatal-error dump in `log` as a failure shows it, or None if it holds none: the
    few lines logged before it, the error, the crashing thread and the main thread (faulthandler
    lists it last; its outermost frame is not threading's bootstrap) with up to WHOLE_FRAMES
    frames each, and every other thread by its innermost OTHER_FRAMES frames."""
    lines = log.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(CRASH_STACK)]
    if not starts:
        return None
    start = starts[-1]
    threads, used = _threads(lines[start + 1:])
    before = [line for line in lines[:start] if line.strip()][-BEFORE_LINES:]
    after = [line for line in lines[start + 1 + used:]
             if line.strip() and not line.startswith("Extension modules:")]
    main = next((t for t in reversed(threads) if not t.started_by_threading), None)
    crashed = next((t for t in threads if t.current), None)
    shown = [lines[start].rstrip()]
    if crashed is not None:
        shown += crashed.shown(WHOLE_FRAMES, "  <- crashed" + (", the main thread"
                                                              if crashed is main else ""))
    if main is not None and main is not crashed:
        shown += main.shown(WHOLE_FRAMES, "  <- the main thread")
    for thread in threads:
        if thread is not crashed and thread is not main:
            shown += thread.shown(OTHER_FRAMES)
    return "\n".join([*before, *shown, *after])
