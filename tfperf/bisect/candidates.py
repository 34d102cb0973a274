"""What a bisection runs through: TensorFlow specs, in order, the good end first.

Three ways to name them, each checked before anything runs (a BadRange says what is wrong
and what is valid, in one line):
- an explicit list of specs (requirements, wheels, interpreters; tfperf.processes.environments);
- a package and a range of its releases, `LOW..HIGH`: every final release between them that
  the package index serves, as the installer lists them (`pip index versions`);
- a package and a range of dates, `YYYY-MM-DD..YYYY-MM-DD`: its nightlies of those dates (a
  version's `.devYYYYMMDD...` part), the newest of each date.
The git commits of a workloads folder are the other kind of candidate (git_commits.py).
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from tfperf.processes import environments, packages

INDEX_TIMEOUT_S = 120.0


class BadRange(ValueError):
    """Candidates that cannot be bisected; the message is one line."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    author: str  # "Name <email>, date"


@dataclass(frozen=True)
class Candidate:
    label: str  # what the report calls it
    tensorflow: str  # the spec of the TensorFlow its side runs
    workloads: Path | None = None  # its workloads folder, for a commit (else the session's)
    commit: Commit | None = None


def specs(given: Sequence[str]) -> list[Candidate]:
    """An explicit list, good end first."""
    if len(given) < 2:
        raise BadRange(f"{len(given)} spec given: name the good end first and the bad end last, "
                       "with the candidates between them in order")
    for number, spec in enumerate(given, 1):
        try:
            environments.kind(spec)
        except environments.SpecError as error:
            raise BadRange(f"spec {number} of {len(given)}: {error}") from None
    if len(set(given)) != len(given):
        twice = next(s for s in given if given.count(s) > 1)
        raise BadRange(f"{twice!r} is named twice: each candidate once, in order")
    return [Candidate(spec, spec) for spec in given]


# The distributions TensorFlow is published as: any other package is bisected beside one.
TENSORFLOW = re.compile(r"^(tensorflow|tf-nightly|intel-tensorflow)([-_.]|$)", re.IGNORECASE)


def is_tensorflow(name: str) -> bool:
    return bool(TENSORFLOW.match(name))


def installed_tensorflow() -> str:
    """The requirement of the session's own TensorFlow (tensorflow-cpu==2.21.0)."""
    found = packages.installed()
    for name in ("tensorflow", "tensorflow-cpu", "tf-nightly", "tf-nightly-cpu"):
        if name in found:
            return f"{name}=={found[name]}"
    raise BadRange("no TensorFlow is installed here to run beside the package: name one "
                   "with --tensorflow")


def beside(found: Sequence[Candidate], tensorflow: str) -> list[Candidate]:
    """A package other than TensorFlow (keras, numpy, a CUDA library's wheel) bisected: each
    candidate runs `tensorflow` with that version of the package, every other package held
    equal. The label stays the package's."""
    try:
        if len(tensorflow.split()) != 1 or environments.kind(tensorflow) not in ("requirement",
                                                                                 "wheel"):
            raise environments.SpecError("not one")
    except environments.SpecError:
        raise BadRange(f"--beside: {tensorflow!r} is not a TensorFlow requirement or wheel "
                       "(e.g. tensorflow-cpu==2.21.0)") from None
    return [replace(c, tensorflow=f"{tensorflow} {c.tensorflow}") for c in found]


def package(text: str) -> Requirement:
    """A package name, with extras if any (tensorflow[and-cuda]), and no version."""
    try:
        found = Requirement(text)
    except InvalidRequirement:
        found = None
    if found is None or found.specifier or found.url or found.marker:
        raise BadRange(f"{text!r} is not a package name (e.g. tensorflow-cpu, "
                       "tensorflow[and-cuda], tf-nightly)")
    return found


def _ends(text: str, what: str, example: str) -> tuple[str, str]:
    low, sep, high = text.partition("..")
    if not sep or not low.strip() or not high.strip():
        raise BadRange(f"{text!r} is not a range of {what}: give LOW..HIGH, e.g. {example}")
    return low.strip(), high.strip()


def index_versions(name: str) -> list[str]:
    """Every version of `name` the package index serves, pre-releases included, as pip (the
    installer, with this machine's index settings) lists them."""
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "--pre", name],
                              capture_output=True, text=True, timeout=INDEX_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        raise BadRange(f"the package index did not list {name!r} within "
                       f"{INDEX_TIMEOUT_S:g} s") from None
    listed = re.search(r"^Available versions: (.*)$", done.stdout, re.MULTILINE)
    if done.returncode != 0 or listed is None:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BadRange(f"the package index has no {name!r} ({said})")
    return [v.strip() for v in listed.group(1).split(",") if v.strip()]


def version(text: str, option: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise BadRange(f"{option}: {text!r} is not a version (e.g. 2.16.2)") from None


def releases(name: Requirement, text: str, versions: Sequence[str]) -> list[Candidate]:
    """Every final release of `versions` from LOW to HIGH, both included, in order."""
    low_text, high_text = _ends(text, "releases", "2.16.2..2.21.0")
    low, high = version(low_text, "the good end"), version(high_text, "the bad end")
    parsed = sorted({Version(v) for v in versions if is_version(v)})
    for end, which in ((low, "good"), (high, "bad")):
        if end not in parsed:
            near = ", ".join(str(v) for v in parsed if v.release[:2] == end.release[:2]) or \
                ", ".join(str(v) for v in parsed[-5:])
            raise BadRange(f"the {which} end {end} is not a version of {name.name} on the "
                           f"package index (it has {near or 'none'})")
    if not low < high:
        raise BadRange(f"{text!r}: the good end must be the older version, before the bad end")
    chosen = [v for v in parsed if (low <= v <= high and not (v.is_prerelease or v.is_devrelease))
              or v in (low, high)]
    return [Candidate(f"{name}=={v}", f"{name}=={v}") for v in chosen]


def is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _date(text: str, which: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise BadRange(f"the {which} end {text!r} is not a date (YYYY-MM-DD)") from None


def nightly_date(version: str) -> datetime.date | None:
    """The date a nightly's version carries (2.21.0.dev20250801, 3.12.0.dev2025100703)."""
    if not is_version(version):
        return None
    dev = Version(version).dev
    if dev is None or len(str(dev)) < 8:
        return None
    try:
        return datetime.datetime.strptime(str(dev)[:8], "%Y%m%d").date()
    except ValueError:
        return None


def nightlies(name: Requirement, text: str, versions: Sequence[str]) -> list[Candidate]:
    """The newest nightly of each date from FROM to TO, both included, in order of date."""
    low_text, high_text = _ends(text, "dates", "2026-11-01..2026-11-24")
    low, high = _date(low_text, "good"), _date(high_text, "bad")
    if not low < high:
        raise BadRange(f"{text!r}: the good end's date must come before the bad end's")
    newest: dict[datetime.date, Version] = {}
    for version in versions:
        day = nightly_date(version)
        if day is not None and low <= day <= high:
            newest[day] = max(newest.get(day, Version(version)), Version(version))
    if len(newest) < 2:
        raise BadRange(f"the package index has {len(newest)} nightly of {name.name} from {low} "
                       f"to {high}: a bisection needs two (versions with .devYYYYMMDD)")
    return [Candidate(f"{name}=={newest[d]}", f"{name}=={newest[d]}") for d in sorted(newest)]
