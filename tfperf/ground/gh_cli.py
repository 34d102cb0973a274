"""The `gh` CLI, GitHub's boundary: its token is the job's (GH_TOKEN), never an argument."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

TIMEOUT_S = 120.0


class GitHubError(RuntimeError):
    """gh failed; the message is one line."""


def run(args: Sequence[str]) -> str:
    """gh's output, or GitHubError naming the command's first two words and gh's last line."""
    try:
        done = subprocess.run(["gh", *args], capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False)
    except FileNotFoundError:
        raise GitHubError("no gh on PATH (the GitHub CLI)") from None
    except subprocess.TimeoutExpired:
        raise GitHubError(f"gh {' '.join(args[:2])}: no answer in {TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise GitHubError(f"gh {' '.join(args[:2])}: {said}")
    return done.stdout
