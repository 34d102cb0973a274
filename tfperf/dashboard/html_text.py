"""Text as the dashboard's pages hold it: escaped, and names made file names."""

from __future__ import annotations

import datetime
import html
import re


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def escape(text: object) -> str:
    return html.escape(str(text))


def when(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")
