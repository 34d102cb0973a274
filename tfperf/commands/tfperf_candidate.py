"""Name the TensorFlow a scheduled night compares with the pinned one.

    tfperf-candidate [--pinned VERSION] [--release-package REQ] [--nightly-package REQ]
    tfperf-candidate --nightly [--nightly-package REQ]

Prints the requirement to install as side B on stdout: the newest release when it is newer than
the pinned TensorFlow, else the newest nightly (tfperf.bisect.scheduled); prints nothing when
there is none. With --nightly, the newest nightly whatever the releases: the build a night that
follows tf-nightly runs (follow-nightly.yml). One line on stderr says which and why. Exit 0
either way; 2: bad input or a package index that cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib import metadata

from packaging.requirements import Requirement

from tfperf.bisect import candidates, scheduled
from tfperf.commands import arguments

# The distributions the pinned TensorFlow is installed as (./run: CUDA's, or the CPU build).
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu")


def _installed() -> str | None:
    for name in TENSORFLOW_DISTRIBUTIONS:
        try:
            return metadata.version(name)  # read from its metadata: TensorFlow is not imported
        except metadata.PackageNotFoundError:
            continue
    return None


def _package(option: str) -> Callable[[str], str]:
    """A package name with its extras, no version (candidates.package), as the text given."""
    return arguments.typed(option, lambda text: str(candidates.package(text)))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfperf-candidate",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--pinned", type=arguments.typed(
                            "--pinned", lambda text: str(candidates.version(text, "--pinned"))),
                        help="the pinned TensorFlow's version (default: the installed one's, "
                             f"{' or '.join(TENSORFLOW_DISTRIBUTIONS)})")
    parser.add_argument("--release-package", type=_package("--release-package"),
                        default=scheduled.RELEASE_PACKAGE,
                        help=f"what a release is installed as (default: {scheduled.RELEASE_PACKAGE})")
    parser.add_argument("--nightly-package", type=_package("--nightly-package"),
                        default=scheduled.NIGHTLY_PACKAGE,
                        help=f"what a nightly is installed as (default: {scheduled.NIGHTLY_PACKAGE})")
    parser.add_argument("--nightly", action="store_true",
                        help="name the newest nightly, whatever the releases")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.nightly:
        try:
            nightlies = candidates.index_versions(Requirement(args.nightly_package).name)
        except candidates.BadRange as error:
            print(f"tfperf-candidate: {error}", file=sys.stderr)
            return 2
        choice = scheduled.newest_nightly(nightlies, args.nightly_package)
        said = f"following {choice.spec}, {choice.line}" if choice.spec else choice.line
        print(said, file=sys.stderr)
        if choice.spec is not None:
            print(choice.spec)
        return 0
    pinned = args.pinned or _installed()
    if pinned is None:
        parser.error(f"--pinned: no TensorFlow is installed here "
                     f"({', '.join(TENSORFLOW_DISTRIBUTIONS)}); name its version")
    try:
        releases = candidates.index_versions(Requirement(args.release_package).name)
        try:
            nightlies = candidates.index_versions(Requirement(args.nightly_package).name)
        except candidates.BadRange:
            nightlies = []  # an index without nightlies: releases alone decide
    except candidates.BadRange as error:
        print(f"tfperf-candidate: {error}", file=sys.stderr)
        return 2
    choice = scheduled.choose(pinned, releases, nightlies, args.release_package,
                              args.nightly_package)
    print(choice.line, file=sys.stderr)
    if choice.spec is not None:
        print(choice.spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
