"""The worker environment of a TensorFlow the user names: built once per spec, cached, probed.

A spec is `current` (the session's own environment), the path of an existing Python
interpreter, a wheel file (`*.whl`), or a pip requirement (`tensorflow-cpu==2.20.0`,
`tensorflow==2.22.0rc1`, `tf-nightly`). A wheel or a requirement gets a virtual environment of
its own under the cache folder, keyed by the spec (a wheel by its content), built with uv under
a file lock so that two sessions never build one twice, and marked complete only at the end:
a build that was interrupted is built again. The harness's worker side is made importable there
by a `.pth` path entry to this harness (as an editable install is), never by copying it, so the
side always runs this checkout's worker code; an interpreter named by path gets the entry in its
workers' PYTHONPATH instead. Nothing here imports TensorFlow: the probe does it, in the environment's Python.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from filelock import FileLock
from packaging.requirements import InvalidRequirement, Requirement

from tfperf.processes import held_install, warm_start
from tfperf.processes.runtime import CURRENT, HARNESS_PATH_ENV, Runtime, without_secrets

READY_MARK = ".tfperf-ready"
RELEASED = ".tfperf-released"  # the packages it could not hold at the reference's versions
INSTALL_TIMEOUT_S = 1800.0
PROBE_TIMEOUT_S = 300.0
# Says which TensorFlow an environment imports and what else it holds; it imports what every
# worker imports first.
_PROBE = "tfperf.worker.environment_probe"


class SpecError(ValueError):
    """A spec that cannot be used; its message is the one line the user sees."""


def kind(spec: str) -> str:
    """current, python, wheel or requirement; a SpecError for anything else. A wheel or a
    requirement may be followed by more requirements, space-separated ("tensorflow-cpu==2.22.0rc0
    keras==3.15.1"), installed with it."""
    first, *extras = spec.split() or [spec]
    found = _kind(first)
    if extras and found in ("current", "python"):
        raise SpecError(f"{spec!r}: more requirements go with a requirement or a wheel, not "
                        f"with {first!r}")
    for extra in extras:
        if _kind(extra) != "requirement":
            raise SpecError(f"{spec!r}: {extra!r} is not a pip requirement")
    return found


def _kind(spec: str) -> str:
    if spec == "current":
        return "current"
    path = Path(spec).expanduser()
    if spec.endswith(".whl"):
        if not path.is_file():
            raise SpecError(f"no wheel file {spec!r}")
        return "wheel"
    if os.sep in spec or spec.startswith("."):
        if path.is_file() and os.access(path, os.X_OK):
            return "python"
        raise SpecError(f"{spec!r} is not an executable Python interpreter")
    try:
        Requirement(spec)
    except InvalidRequirement as error:
        raise SpecError(f"{spec!r} is not a pip requirement, a wheel file or a Python "
                        f"interpreter ({str(error).splitlines()[0]})") from None
    return "requirement"


def _folder_name(spec: str, kind_: str, held: Mapping[str, str] | None) -> str:
    """The environment's folder: named by the spec (a wheel by its content, each requirement
    as parsed), the Python, and what is held (None: nothing, it floats)."""
    first, *extras = spec.split()
    if kind_ == "wheel":
        digest = hashlib.sha256()
        with Path(first).expanduser().open("rb") as wheel:
            for block in iter(lambda: wheel.read(1 << 20), b""):
                digest.update(block)
        identity = f"wheel:{digest.hexdigest()}"
    else:
        identity = f"requirement:{Requirement(first)}"
    identity += "".join(f"+{Requirement(extra)}" for extra in extras)
    identity += f":py{sys.version_info.major}.{sys.version_info.minor}"
    identity += ":float" if held is None else ":held:" + hashlib.sha256(
        json.dumps(sorted(held.items())).encode()).hexdigest()
    if held_install.nightlies(spec, kind_):  # since a nightly replaces its release
        # (held_install.nightly_over_release), such environments are named apart
        identity += ":nightly-over-release"
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", Path(first).name if kind_ == "wheel" else spec)[:40]
    return f"{slug}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


def uv() -> str:
    """The uv beside the running interpreter (or on PATH): a SpecError where there is none."""
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.exists() else shutil.which("uv")
    if found is None:
        raise SpecError("uv is not installed in the suite's environment (./run installs it)")
    return found


def _last_error(text: str) -> str:
    """The message of an installer's output that says why, in one line: uv ends with its
    reason, wrapped over indented lines."""
    said: list[str] = []
    for line in text.splitlines():
        words = re.sub(r"^[\s\u00d7\u2570\u2500\u25b6\u2502]+", "", line).strip()
        if not words or words.startswith(("Using ", "Resolved ")):
            continue
        if said and line[:1].isspace() and not words.startswith(("cause:", "hint:", "help:")):
            said[-1] += " " + words  # a wrapped line
        else:
            said.append(words)
    return re.sub(r"^(cause|error): ", "", said[-1]) if said else "no output"


def _targets(spec: str, kind_: str) -> list[str]:
    first, *extras = spec.split()
    return [str(Path(first).expanduser().resolve()) if kind_ == "wheel" else first, *extras]


def _build(spec: str, kind_: str, folder: Path, cache: Path, log_path: Path,
           held: dict[str, str] | None) -> None:
    """The environment: a virtual environment, the spec's parts installed with everything else
    held to `held`'s versions where the resolver allows (None: resolved afresh), what had to be
    released kept beside it."""
    shutil.rmtree(folder, ignore_errors=True)
    installer = uv()
    python = folder / "bin" / "python"
    # An sdist's build runs code from the index: it gets no store URL or CI token.
    run = held_install.run_command(without_secrets(os.environ, suffixes=False),
                                   INSTALL_TIMEOUT_S, log_path)
    released: list[str] = []
    try:
        status, output = run([installer, "venv", "--quiet", "--python", sys.executable, str(folder)])
        if status == 0:
            command = [installer, "pip", "install", "--python", str(python), *_targets(spec, kind_)]
            if held is None:
                status, output = run(command)
            else:
                status, output, released = held_install.install(run, command, held, folder)
        if status == 0:
            status, output = held_install.nightly_over_release(run, installer, python, spec, kind_)
    except subprocess.TimeoutExpired:
        raise SpecError(f"cannot install {spec!r}: no end within {INSTALL_TIMEOUT_S:g} s "
                        f"(log: {log_path})") from None
    if status != 0:
        raise SpecError(f"cannot install {spec!r}: {_last_error(output)} (log: {log_path})")
    (folder / RELEASED).write_text(json.dumps(released))
    # The harness's worker side, installed as an editable install is: a path entry to it.
    (site_packages(python) / "tfperf-harness.pth").write_text(harness_path(cache) + "\n")
    (folder / READY_MARK).write_text(spec + "\n")


def site_packages(python: Path) -> Path:
    done = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=True)
    return Path(done.stdout.strip())


def harness_path(cache_dir: Path) -> str:
    """A folder holding only a link to this harness's package, for another interpreter's
    path: it sees tfperf and nothing else of the suite's environment."""
    package = Path(__file__).resolve().parents[1]
    folder = cache_dir / "harness"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "tfperf"
    if not (link.is_symlink() and link.resolve() == package):
        temporary = folder / f"tfperf.{os.getpid()}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(package, target_is_directory=True)
        temporary.replace(link)
    return str(folder)


def _forked_probe(runtime: Runtime, log_path: Path) -> dict[str, Any] | None:
    """The probe forked from the runtime's zygote, which the session's workers of this side
    use anyway: its import is the probe's (shared between sessions: shared_zygotes). None
    where no zygote serves (outside a session, or one that could not import): spawned then."""
    with log_path.open("ab") as log:
        log.write(f"$ {runtime.python} -m {_PROBE} (forked)\n".encode())
        log.flush()
        forked = warm_start.start(_PROBE, (), runtime.environ(dict(os.environ)), log, runtime)
    if forked is None:
        return None
    assert forked.stdin is not None and forked.stdout is not None
    forked.stdin.close()
    try:
        if not select.select([forked.stdout], [], [], PROBE_TIMEOUT_S)[0]:
            os.killpg(forked.pid, signal.SIGKILL)  # hung: the spawned probe says why
        line = forked.stdout.readline()
        code = forked.wait(timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        forked.stdout.close()
    found: dict[str, Any] | None = json.loads(line) if code == 0 and line.strip() else None
    return found


def probe(runtime: Runtime, base_env: dict[str, str], log_path: Path) -> dict[str, Any]:
    """What TensorFlow the runtime's Python imports, or a SpecError saying why it cannot."""
    found = _forked_probe(runtime, log_path)
    if found is not None:
        return found
    try:
        done = subprocess.run([runtime.python, "-m", _PROBE], capture_output=True, text=True,
                              env=runtime.environ(base_env), timeout=PROBE_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SpecError(f"cannot run {runtime.python}: {error}") from None
    with log_path.open("a") as log:
        log.write(f"$ {runtime.python} -m {_PROBE}\n{done.stdout}{done.stderr}")
    if done.returncode != 0:
        raise SpecError(f"TensorFlow cannot be imported by {runtime.python}: "
                        f"{_last_error(done.stderr)} (log: {log_path})")
    spawned: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return spawned


def _built(spec: str, kind_: str, cache_dir: Path, log_path: Path,
           reference: Mapping[str, str] | None) -> tuple[str, tuple[str, ...]]:
    """The Python of the spec's environment, built if it is not ready yet, and the packages
    it could not hold at the reference's versions."""
    held = None if reference is None else held_install.constraints(reference,
                                                                   _targets(spec, kind_))
    folder = cache_dir / "environments" / _folder_name(spec, kind_, held)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not (folder / READY_MARK).exists():
            _build(spec, kind_, folder, cache_dir, log_path, held)
    harness_path(cache_dir)  # the link its .pth names, made again if it was removed
    released = folder / RELEASED
    return (str(folder / "bin" / "python"),
            tuple(json.loads(released.read_text())) if released.exists() else ())


def prepare(spec: str, extra_env: dict[str, str], cache_dir: Path, log_path: Path,
            reference: Mapping[str, str] | None = None) -> Runtime:
    """The runtime for `spec`, built if need be and probed; SpecError if it cannot be. A
    requirement or a wheel is installed with every other package held to `reference`'s
    versions where the resolver allows (None: each resolved afresh)."""
    kind_ = kind(spec)
    added = tuple(sorted(extra_env.items()))
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if kind_ == "current":
        if not added:
            return CURRENT
        runtime = Runtime(spec, sys.executable, added)
    elif kind_ == "python":
        # Another interpreter, not ours to install into: the path entry goes in its workers'
        # environment instead.
        paths = [harness_path(cache_dir), *filter(None, [os.environ.get(HARNESS_PATH_ENV)])]
        runtime = Runtime(spec, str(Path(spec).expanduser().absolute()),
                          ((HARNESS_PATH_ENV, os.pathsep.join(paths)), *added))
    else:
        python, released = _built(spec, kind_, cache_dir, log_path, reference)
        runtime = Runtime(spec, python, added, released=released)
    found = probe(runtime, dict(os.environ), log_path)
    return replace(runtime, tensorflow=found["tensorflow"],
                   packages=tuple(sorted(found["packages"].items())))
