"""What the notifier has sent, kept in the store: a finding reaches each destination once.

A destination is a digest of its address (a webhook's URL holds its token, so the address is
never kept). The notifier remembers a finding only after its destination took it: a post that
failed is tried again on the next run.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa

from tfperf.storage import tables


@dataclass(frozen=True)
class Sent:
    finding: str  # the finding's key (tfperf.notify.findings.Finding.key)
    destination: str  # destination(address)
    kind: str
    sent: datetime.datetime


def destination(address: str) -> str:
    """A destination's name in the store: 16 hex digits of its address's SHA-256."""
    return hashlib.sha256(address.encode()).hexdigest()[:16]


def sent_to(engine: sa.Engine, where: str) -> set[str]:
    """The findings already sent to a destination (its `destination()` name)."""
    n = tables.notifications.c
    with engine.connect() as connection:
        return set(connection.execute(sa.select(n.finding).where(n.destination == where))
                   .scalars())


def remember(engine: sa.Engine, sent: Iterable[Sent]) -> int:
    """Keep what was sent, in one transaction; rows kept already are left as they were. How many
    were new."""
    n = tables.notifications.c
    added = 0
    with engine.begin() as connection:
        for row in sent:
            if connection.execute(sa.select(n.finding).where(
                    n.finding == row.finding, n.destination == row.destination)).first() is None:
                connection.execute(tables.notifications.insert().values(**vars(row)))
                added += 1
    return added


def every(engine: sa.Engine) -> list[Sent]:
    """Everything sent, oldest first."""
    n = tables.notifications.c
    with engine.connect() as connection:
        return [Sent(*row) for row in connection.execute(
            sa.select(n.finding, n.destination, n.kind, n.sent).order_by(n.sent, n.finding))]
