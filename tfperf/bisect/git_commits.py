"""The git commits of a workloads folder as bisection candidates: `GOOD..BAD` in a repository,
each commit checked out (once, kept) into a worktree of its own, so a team can find the commit
of its own model code that slowed its workload.

The candidates are GOOD, then the commits from GOOD to BAD on BAD's first-parent line (the
order a merge-based history was made in), BAD last. GOOD must be an ancestor of BAD.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from filelock import FileLock

from tfperf.bisect.candidates import BadRange, Candidate, Commit

GIT_TIMEOUT_S = 300.0


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          timeout=GIT_TIMEOUT_S, check=False)


def _resolve(repo: Path, name: str, which: str) -> str:
    done = _git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    if done.returncode != 0:
        raise BadRange(f"the {which} end {name!r} is not a commit of {repo}")
    return done.stdout.strip()


def commits(repo: Path, text: str, folder: str, tensorflow: str) -> list[Candidate]:
    """GOOD, the commits between, BAD: each with the workloads folder `folder` (relative to
    the repository's root) of its own worktree, made when the step first needs it."""
    if not (repo / ".git").exists() and _git(repo, "rev-parse", "--git-dir").returncode != 0:
        raise BadRange(f"{repo} is not a git repository")
    good_name, sep, bad_name = text.partition("..")
    if not sep or not good_name or not bad_name or bad_name.startswith("."):
        raise BadRange(f"{text!r} is not a range of commits: give GOOD..BAD, e.g. v1.2..main")
    good, bad = _resolve(repo, good_name, "good"), _resolve(repo, bad_name, "bad")
    if good == bad:
        raise BadRange(f"{text!r}: the good and the bad end are the same commit")
    if _git(repo, "merge-base", "--is-ancestor", good, bad).returncode != 0:
        raise BadRange(f"{text!r}: the good end {good[:12]} is not an ancestor of the bad end")
    between = _git(repo, "rev-list", "--reverse", "--first-parent", f"{good}..{bad}")
    shas = [good, *between.stdout.split()]
    if shas[-1] != bad:
        raise BadRange(f"{text!r}: the bad end is not on its own first-parent line")
    if _git(repo, "cat-file", "-e", f"{bad}:{folder}").returncode != 0:
        raise BadRange(f"the bad end {bad[:12]} has no folder {folder!r} (--folder names the "
                       "workloads folder, relative to the repository's root)")
    return [Candidate(_short(repo, sha), tensorflow, Path(folder), _commit(repo, sha))
            for sha in shas]


def _short(repo: Path, sha: str) -> str:
    return _git(repo, "rev-parse", "--short=10", sha).stdout.strip()


def _commit(repo: Path, sha: str) -> Commit:
    subject, author = _git(repo, "log", "-1", "--format=%s%x00%an <%ae>, %ad", "--date=iso",
                           sha).stdout.rstrip("\n").split("\0")
    return Commit(sha, subject, author)


def checkout(repo: Path, candidate: Candidate, worktrees: Path) -> Path:
    """The candidate's workloads folder in its worktree (added once, detached, then reused)."""
    assert candidate.commit is not None and candidate.workloads is not None
    sha = candidate.commit.sha
    tree = (worktrees / sha).resolve()
    worktrees.mkdir(parents=True, exist_ok=True)
    with FileLock(str(tree) + ".lock"):
        if not (tree / ".git").exists():
            _git(repo, "worktree", "prune")
            done = _git(repo, "worktree", "add", "--detach", "--force", str(tree), sha)
            if done.returncode != 0:
                raise BadRange(f"cannot check out {sha[:12]}: "
                               f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return tree / candidate.workloads
