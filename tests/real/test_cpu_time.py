"""The CPU time of worker processes, as the A/B duet reads it to see what idle workers burn."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tfperf.processes import cpu_time

# Burns a known amount of CPU time, says so, then sleeps until killed.
BURNER = textwrap.dedent("""
    import sys, time
    while time.process_time() < float(sys.argv[1]):
        pass
    print(time.process_time(), flush=True)
    time.sleep(600)
""")


def _first_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, which is Linux's")
def test_counts_what_processes_burned_and_nothing_while_they_sleep() -> None:
    burners = [subprocess.Popen([sys.executable, "-c", BURNER, str(seconds)],
                                stdout=subprocess.PIPE, text=True) for seconds in (0.3, 0.6)]
    try:
        burned = sum(float(_first_line(p)) for p in burners)
        pids = [p.pid for p in burners]
        counted = cpu_time.seconds(pids)
        assert counted is not None
        # /proc counts whole 10 ms ticks, user and system apart, in each process.
        assert burned - 0.02 * 2 * len(burners) <= counted <= burned + 0.1
        assert cpu_time.seconds(pids) == pytest.approx(counted, abs=0.02)  # asleep now
    finally:
        for process in burners:
            process.kill()
            process.wait()
    assert cpu_time.seconds(pids) is None  # gone
