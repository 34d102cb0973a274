"""A session's runtimes: the TensorFlow under test (every worker's, side B's in an A/B session)
and, in an A/B session, the baseline's (side A's). Each is built once from its spec (cached)
and its TensorFlow imported, before any case runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from tfperf.processes import environments, packages
from tfperf.processes.runtime import Runtime


@dataclass(frozen=True)
class SessionRuntimes:
    under_test: Runtime
    baseline: Runtime | None  # side A's, in an A/B session


def prepare(tensorflow: str, baseline: tuple[str, Mapping[str, str]] | None, fallback_version: str,
            cache_dir: Path, log: Path, say: Callable[[str], None]) -> SessionRuntimes:
    """Build (or find cached) each side's environment. Raises environments.SpecError whose
    message names the option and the spec, one line, when one cannot be built or imported.
    A runtime that does not know its TensorFlow's version (the current interpreter's) takes
    `fallback_version`, the version this process read without importing TensorFlow."""
    wanted: list[tuple[str, str, Mapping[str, str]]] = [("--perf-tensorflow", tensorflow, {})]
    if baseline is not None:
        wanted.append(("--perf-baseline", *baseline))
    runtimes = []
    for option, spec, env in wanted:
        if spec != "current":
            say(f"tfperf: worker environment for {option}={spec} (built once, cached in "
                f"{cache_dir / 'environments'})")
        try:
            runtime = environments.prepare(spec, dict(env), cache_dir, log)
        except environments.SpecError as error:
            raise environments.SpecError(f"{option}={spec}: {error}") from None
        # The session's own interpreter is not probed: it reads its own packages.
        runtimes.append(replace(runtime, tensorflow=runtime.tensorflow or fallback_version,
                                packages=runtime.packages or tuple(packages.installed().items())))
    return SessionRuntimes(runtimes[0], runtimes[1] if baseline is not None else None)
