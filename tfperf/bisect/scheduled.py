"""The TensorFlow a scheduled night compares with the pinned one, when nobody named one.

The newest final release when it is newer than the pinned TensorFlow (a release a team is about
to move to), else the newest nightly (what will become the next release), else none: an A/B of
the pinned build against itself spends GPU-hours to say `same`, so a night without a candidate
says so in one line and runs no A/B. Nightlies are ordered by the date their version carries
(tf-nightly's major version has jumped between dates), then by version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.version import Version

from tfperf.bisect.candidates import is_version, nightly_date

RELEASE_PACKAGE = "tensorflow[and-cuda]"
NIGHTLY_PACKAGE = "tf-nightly[and-cuda]"


@dataclass(frozen=True)
class Choice:
    spec: str | None  # the requirement side B installs; None: no A/B tonight
    line: str  # why, in one line


def _versions(texts: Sequence[str]) -> list[Version]:
    return [Version(text) for text in texts if is_version(text)]


def choose(pinned: str, releases: Sequence[str], nightlies: Sequence[str],
           release_package: str = RELEASE_PACKAGE,
           nightly_package: str = NIGHTLY_PACKAGE) -> Choice:
    """The candidate for a night whose pinned TensorFlow is `pinned`, from the versions the
    package index lists for the release package and the nightly package."""
    base = Version(pinned)
    finals = [v for v in _versions(releases) if not (v.is_prerelease or v.is_devrelease)]
    newer = [v for v in finals if v > base]
    if newer:
        newest = max(newer)
        return Choice(f"{release_package}=={newest}",
                      f"candidate: {release_package}=={newest}, the newest release, newer than "
                      f"the pinned {base}")
    found = newest_nightly(nightlies, nightly_package)
    if found.spec is not None:
        return Choice(found.spec, f"candidate: {found.spec}, {found.line}; no release is newer "
                                  f"than the pinned {base}")
    return Choice(None, f"no candidate: no release of {Requirement(release_package).name} is "
                        f"newer than the pinned {base}, and the index has no "
                        f"{Requirement(nightly_package).name}: no A/B tonight")


def newest_nightly(nightlies: Sequence[str], nightly_package: str = NIGHTLY_PACKAGE) -> Choice:
    """Tonight's nightly: the newest the index lists, by the date its version carries (the
    build a night that follows tf-nightly runs, whatever the releases)."""
    dated = [(day, v) for v in _versions(nightlies) if (day := nightly_date(str(v))) is not None]
    if not dated:
        return Choice(None, f"no nightly: the index has no dated {Requirement(nightly_package).name}")
    day, newest = max(dated)
    return Choice(f"{nightly_package}=={newest}", f"the newest nightly ({day})")
