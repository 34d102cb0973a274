"""A night's new findings as one webhook post: Slack's (incoming webhooks: a fallback `text`
and Block Kit sections) or a generic JSON document for any other receiver."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from tfperf.storage.findings import Finding

Format = Literal["slack", "json"]
FORMATS: tuple[Format, ...] = ("slack", "json")
# Slack takes at most 50 blocks a message: a header, the findings, a line for the rest, the link.
SHOWN = 40
# Slack's limit on a section's text is 3,000 characters; a detail is cut well before it.
DETAIL_CHARS = 1500


def headline(found: Sequence[Finding]) -> str:
    counts = Counter(f.kind for f in found)
    said = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in counts.items())
    return f"tfperf: {len(found)} new finding{'s' if len(found) > 1 else ''} ({said})"


def _slack_text(text: str) -> str:
    # Slack's mrkdwn reads &, < and > as markup; these three escapes are all it wants.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS - 1] + "…"


def slack(found: Sequence[Finding], link: str | None) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": headline(found)[:150]}}]
    for finding in found[:SHOWN]:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": (
            f"*{_slack_text(finding.summary)}*\n{_slack_text(_cut(finding.detail))}")}})
    if len(found) > SHOWN:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": (
            f"and {len(found) - SHOWN} more: the dashboard lists every one")}]})
    if link:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn",
                                                        "text": f"<{link}|the run>"}]})
    return {"text": headline(found), "blocks": blocks}


def generic(found: Sequence[Finding], link: str | None) -> dict[str, Any]:
    return {"source": "tfperf", "summary": headline(found), "link": link, "findings": [
        {"key": f.key, "kind": f.kind, "case_id": f.case_id, "machine_key": f.machine_key,
         "began": f.when.isoformat(), "sessions": f.sessions, "summary": f.summary,
         "detail": f.detail} for f in found]}


def payload(found: Sequence[Finding], form: Format, link: str | None) -> dict[str, Any]:
    return slack(found, link) if form == "slack" else generic(found, link)
