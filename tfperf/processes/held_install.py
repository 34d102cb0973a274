"""Install what a spec names into a worker environment with everything else held to another
environment's versions: a side that differs only in what the user named.

The reference's packages (side A's, or the session's own) go to the installer as constraints,
less the packages the spec names and the harness. Where the named packages need other versions
of some (a TensorFlow release needs its own tensorboard), the resolver says so: the packages its
error names are released from the constraints and it tries again, until it resolves or nothing
it names is held. What was released is what had to change anyway, and is said."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from packaging.requirements import Requirement

from tfperf.processes.packages import normalise

HARNESS = frozenset({"tfperf"})  # both sides run this checkout's, by a path entry
ROUNDS = 20  # a resolver error names a few packages at a time


def named(targets: Sequence[str]) -> set[str]:
    """The distributions a spec's parts name: each requirement's, each wheel's (its file name's
    first field, as the wheel format defines it)."""
    found = set()
    for target in targets:
        if target.endswith(".whl"):
            found.add(normalise(Path(target).name.split("-")[0]))
        else:
            found.add(normalise(Requirement(target).name))
    return found


def constraints(reference: Mapping[str, str], targets: Sequence[str]) -> dict[str, str]:
    """What to hold: every reference package but those the targets name and the harness."""
    free = named(targets) | HARNESS
    return {name: version for name, version in sorted(reference.items()) if name not in free}


def _mentioned(output: str, held: Mapping[str, str]) -> set[str]:
    """The held packages a resolver's error names (as `name` or `name_`, any case)."""
    text = output.lower()
    return {name for name in held if re.search(
        r"(?<![\w.-])" + "[-_.]".join(map(re.escape, name.split("-"))) + r"(?![\w-])", text)}


Run = Callable[[list[str]], tuple[int, str]]  # a command's exit status and its output


def install(run: Run, command: list[str], held: dict[str, str], folder: Path
            ) -> tuple[int, str, list[str]]:
    """Run the installer (`command`, which takes `-c FILE`) with `held` as constraints, each
    round releasing the held packages its error names; its last status and output, and what was
    released, by name."""
    released: list[str] = []
    path = folder / "held-constraints.txt"
    for _ in range(ROUNDS):
        path.write_text("".join(f"{name}=={version}\n" for name, version in held.items()))
        status, output = run([*command, "-c", str(path)])
        if status == 0:
            return status, output, released
        blocking = sorted(_mentioned(output, held))
        if not blocking:
            return status, output, released
        released += blocking
        held = {name: version for name, version in held.items() if name not in blocking}
    return status, output, released


def run_command(env: Mapping[str, str], timeout_s: float, log: Path) -> Run:
    """A Run that logs each command and its output to `log`."""
    def run(command: list[str]) -> tuple[int, str]:
        with log.open("a") as out:
            out.write(f"$ {' '.join(command)}\n")
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout_s, check=False, env=dict(env))
        with log.open("a") as out:
            out.write(done.stdout)
        return done.returncode, done.stdout
    return run


def nightlies(spec: str, kind_: str) -> list[tuple[str, str]]:
    """(the nightly's requirement, the release whose package it ships too) for each nightly of
    a package beside TensorFlow the spec names: keras-nightly's is keras, which TensorFlow
    requires. (tf-nightly's release is not one anything here requires.)"""
    if kind_ != "requirement":
        return []
    found = []
    for part in spec.split():
        name = normalise(Requirement(part).name)
        if name.endswith("-nightly") and not name.startswith("tf-"):
            found.append((part, name.removesuffix("-nightly")))
    return found


def nightly_over_release(run: Run, installer: str, python: Path, spec: str,
                          kind_: str) -> tuple[int, str]:
    """Where the spec names a nightly and a dependency brought its release in too (TensorFlow
    2.21 requires keras, beside keras-nightly), both wrote the same package's files in whatever
    order the installer took: the release is removed and the nightly, which was asked for,
    written again."""
    status, output = 0, ""
    for nightly, release in nightlies(spec, kind_):
        shown, _ = run([installer, "pip", "show", "--quiet", "--python", str(python), release])
        if shown != 0:
            continue  # not installed: nothing overwrote the nightly
        status, output = run([installer, "pip", "uninstall", "--python", str(python), release])
        if status == 0:
            status, output = run([installer, "pip", "install", "--reinstall", "--no-deps",
                                  "--python", str(python), nightly])
        if status != 0:
            break
    return status, output
