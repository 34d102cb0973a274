"""One GitHub issue per culprit: a bisection that named one opens an issue titled by it, or, if
an open issue of that title exists (another case, another night), adds its report as a comment.
Through the `gh` CLI, whose token needs issues write and nothing else. A bisection that named
no culprit opens nothing: its report is in the job's summary and artifact.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfperf.bisect import report
from tfperf.ground import gh_cli
from tfperf.ground.gh_cli import GitHubError
from tfperf.ground.vocabulary import FOLLOWED_WORDS

LABEL = "perf-regression"


def title(doc: dict[str, Any]) -> str:
    culprit = doc["candidates"][doc["culprit"]]
    worse = FOLLOWED_WORDS.get(doc.get("followed", "slower"), FOLLOWED_WORDS["slower"])
    return f"tfperf: {worse} since {culprit['label']}"


def _gh(args: Sequence[str], repo: str) -> str:
    return gh_cli.run([*args, "--repo", repo])


def open_or_update(doc: dict[str, Any], repo: str) -> str:
    """Open the culprit's issue or comment on the open one; a line saying which. A document
    with no culprit opens nothing."""
    if doc.get("culprit") is None:
        return f"no issue: the bisection of {doc['case_id']} named no culprit ({doc['outcome']})"
    wanted = title(doc)
    listed = json.loads(_gh(["issue", "list", "--state", "open", "--label", LABEL, "--limit",
                             "500", "--json", "number,title"], repo) or "[]")
    found = next((i["number"] for i in listed if i["title"] == wanted), None)
    with tempfile.NamedTemporaryFile("w", suffix=".md") as body:
        body.write(report.markdown(doc) + f"\n<sub>bisection {doc['id']}</sub>\n")
        body.flush()
        if found is not None:
            _gh(["issue", "comment", str(found), "--body-file", body.name], repo)
            return f"commented on issue #{found}: {wanted}"
        _gh(["label", "create", LABEL, "--force", "--color", "c44e52",
             "--description", "a slowdown or a cost tfperf-bisect traced"], repo)
        made = _gh(["issue", "create", "--title", wanted, "--label", LABEL, "--body-file",
                    body.name], repo)
    return f"opened {made.strip()}: {wanted}"


def run(reports: Sequence[Path], repo: str) -> int:
    """`tfperf-bisect issue`: each report's issue; 2 and one line at the first failure."""
    for path in reports:
        try:
            print(open_or_update(json.loads(path.read_text()), repo))
        except (OSError, ValueError, GitHubError) as error:
            print(f"tfperf-bisect: {path}: {error}", file=sys.stderr)
            return 2
    return 0
