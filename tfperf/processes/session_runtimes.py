"""A session's runtimes: the TensorFlow under test (every worker's, side B's in an A/B session)
and, in an A/B session, side A's. Each is built once from its spec (cached)
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
    side_a: Runtime | None  # in an A/B session


def prepare(tensorflow: str, side_a_spec: tuple[str, Mapping[str, str]] | None,
            fallback_version: str, cache_dir: Path, log: Path, say: Callable[[str], None],
            hold: bool = True) -> SessionRuntimes:
    """Build (or find cached) each side's environment. Raises environments.SpecError whose
    message names the option and the spec, one line, when one cannot be built or imported.
    A runtime that does not know its TensorFlow's version (the current interpreter's) takes
    `fallback_version`, the version this process read without importing TensorFlow.

    With `hold`, side A's environment holds every package it does not name at the
    session's own versions, and side B's at side A's, wherever the resolver allows: the sides
    then differ only in what the user named, and what had to change anyway is said. Side A
    is built first for that."""
    own = packages.installed()

    def build(option: str, spec: str, env: Mapping[str, str], reference: Mapping[str, str]
              ) -> Runtime:
        if spec != "current":
            say(f"tfperf: worker environment for {option}={spec} (built once, cached in "
                f"{cache_dir / 'environments'})")
        try:
            runtime = environments.prepare(spec, dict(env), cache_dir, log,
                                           reference if hold else None)
        except environments.SpecError as error:
            raise environments.SpecError(f"{option}={spec}: {error}") from None
        if runtime.released:
            say(f"tfperf: {option}={spec} holds every other package at its reference's "
                f"version but {', '.join(runtime.released)}, which its requirements move")
        # The session's own interpreter is not probed: it reads its own packages.
        return replace(runtime, tensorflow=runtime.tensorflow or fallback_version,
                       packages=runtime.packages or tuple(own.items()))

    if side_a_spec is not None and hold:
        # A side that is `current` beside a side that is built gets built alike: its
        # TensorFlow from the index at this session's version, everything it needs held at
        # this session's versions, and nothing of the harness, so that what differs between
        # the sides is what differs for the training step.
        if side_a_spec[0] == "current" and tensorflow != "current":
            side_a_spec = (_alike(own, say, "side A"), side_a_spec[1])
        elif tensorflow == "current" and side_a_spec[0] != "current":
            tensorflow = _alike(own, say, "side B")
    side_a = build("--perf-ab-side-a", *side_a_spec, own) if side_a_spec is not None else None
    under_test = build("--perf-tensorflow", tensorflow, {},
                       dict(side_a.packages) if side_a is not None else own)
    return SessionRuntimes(under_test, side_a)


def _alike(own: Mapping[str, str], say: Callable[[str], None], side: str) -> str:
    """The requirement of this session's own TensorFlow, or `current` where the package index
    cannot have it (no distribution of TensorFlow is installed, as with a local build)."""
    found = packages.tensorflow_requirement(own)
    if found is None:
        say(f"tfperf: {side} runs in the harness's own environment: its TensorFlow is no "
            "distribution the index has, so the sides may differ in the harness's packages too")
        return "current"
    say(f"tfperf: {side} is this session's TensorFlow, {found}, built as the other side is "
        "(what training needs, at this session's versions)")
    return found
