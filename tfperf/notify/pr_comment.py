"""A pull request's A/B as one comment, kept current: the first run posts it, each later run
(a new push) edits that comment in place, so the review reads one table, the newest, and the
thread is not buried under one comment a push. The comment is found by a marker it starts with;
through `gh api`, whose token needs pull-requests (or issues) write and nothing else."""

from __future__ import annotations

import json
import tempfile
from typing import Any

from tfperf.ab import session_report
from tfperf.ground import gh_cli

MARKER = "<!-- tfperf-ab: this comment is edited by each run of the pull request's A/B -->"


def body(data: dict[str, Any], run_link: str | None) -> str:
    """The comment: the marker, the A/B session's report, and the run it came from."""
    text = session_report.markdown(data, session_report.settings_of(data))
    source = f"[this run]({run_link}), " if run_link else ""
    return (f"{MARKER}\n{text}\n<sub>From {source}session {data['session']}; each new run "
            "edits this comment.</sub>\n")


def _pages(text: str) -> list[Any]:
    """gh api --paginate prints one JSON array a page, back to back: every item of them."""
    decoder, items, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        page, at = decoder.raw_decode(text, at)
        items.extend(page)
    return items


def ours(repo: str, number: int) -> int | None:
    """The id of the pull request's comment that starts with the marker (the newest, if an
    earlier run raced another), or None."""
    listed = _pages(gh_cli.run(["api", "--paginate",
                                f"repos/{repo}/issues/{number}/comments?per_page=100"]))
    found = [c["id"] for c in listed if str(c.get("body", "")).startswith(MARKER)]
    return found[-1] if found else None


def post_or_update(text: str, repo: str, number: int) -> str:
    """Edit the pull request's A/B comment, or post it; a line saying which."""
    found = ours(repo, number)
    with tempfile.NamedTemporaryFile("w", suffix=".md", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        if found is None:
            made = json.loads(gh_cli.run(["api", "--method", "POST",
                                          f"repos/{repo}/issues/{number}/comments",
                                          "-F", f"body=@{file.name}"]))
            return f"posted the A/B comment on #{number}: {made.get('html_url', made['id'])}"
        gh_cli.run(["api", "--method", "PATCH", f"repos/{repo}/issues/comments/{found}",
                    "-F", f"body=@{file.name}"])
    return f"updated the A/B comment on #{number} (comment {found})"
