"""POST a JSON document to a webhook. Its URL holds its token: no message, error or log line
says it (errors name the host at most)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

TIMEOUT_S = 30.0
SCHEMES = ("https", "http")


class WebhookError(RuntimeError):
    """The post did not reach the receiver, or it refused it; one line, without the URL."""


def check(url: str) -> str:
    """The URL's host, or ValueError, one line, naming what is wrong but not the URL."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise ValueError(f"the webhook URL is not an {' or '.join(SCHEMES)} URL with a host")
    return parts.hostname


def post(url: str, document: dict[str, Any], timeout_s: float = TIMEOUT_S) -> int:
    """Send the document; the receiver's HTTP status (2xx), or WebhookError."""
    host = check(url)
    request = urllib.request.Request(url, data=json.dumps(document).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "User-Agent": "tfperf-notify"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        said = error.read(200).decode("utf-8", "replace").strip().splitlines()
        raise WebhookError(f"the webhook at {host} answered HTTP {error.code}"
                           f"{': ' + said[0] if said else ''}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise WebhookError(f"the webhook at {host} was not reached: {reason}") from None
