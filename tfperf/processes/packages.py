"""What an environment has installed: each distribution's name (normalised as PEP 503 says, so
that `Keras` and `keras` are one) and version. The session's own is read here; another
interpreter's by the same code, run in it (PROBE)."""

from __future__ import annotations

import importlib.metadata
import re

# The expression another interpreter evaluates to the same mapping (environments.py's probe).
# A name found twice on the path is the first one's, as an import would find it: reversed, so
# that the first one is written last.
PROBE = ("dict(reversed([(__import__('re').sub(r'[-_.]+', '-', d.metadata['Name']).lower(), "
         "d.version) for d in __import__('importlib.metadata').metadata.distributions() "
         "if d.metadata['Name']]))")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed() -> dict[str, str]:
    """This interpreter's distributions, by normalised name (the first on the path of each)."""
    found: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        name = distribution.metadata["Name"]
        if name:
            found.setdefault(normalise(name), distribution.version)
    return dict(sorted(found.items()))
