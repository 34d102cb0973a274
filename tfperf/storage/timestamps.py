"""Times in the store: timezone-aware, and compared by the database, not as text.

Before 0005 every time was an ISO 8601 string, so a filter or an ORDER BY compared text: a time
kept with another offset (+02:00), or without microseconds, sorted out of place. Now a column
holds the instant, in UTC: PostgreSQL's TIMESTAMP WITH TIME ZONE; SQLite, which has no time
type, the UTC time as SQLAlchemy's fixed-width text (YYYY-MM-DD HH:MM:SS.ffffff), whose text
order is time order, so the database's own comparisons hold there too.
"""

from __future__ import annotations

import datetime
from typing import Any

import sqlalchemy as sa


def utc(value: str | datetime.datetime) -> datetime.datetime:
    """An ISO 8601 time or date (as every kept file and session writes them), or a datetime, as
    an aware UTC datetime. One without a zone was UTC: the harness has only ever written UTC."""
    moment = value if isinstance(value, datetime.datetime) else \
        datetime.datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.astimezone(datetime.UTC)


class UtcDateTime(sa.types.TypeDecorator[datetime.datetime]):
    """A time column: takes an ISO string or a datetime, gives back an aware UTC datetime."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> datetime.datetime | None:
        if value is None:
            return None
        moment = utc(value)
        # SQLite's DateTime writes the wall time and drops the zone: give it the UTC one.
        return moment.replace(tzinfo=None) if dialect.name == "sqlite" else moment

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> datetime.datetime | None:
        if value is None:
            return None
        if isinstance(value, datetime.datetime) and value.tzinfo is None:
            # SQLite's, written in UTC: the dashboard reads a few hundred thousand of them.
            return value.replace(tzinfo=datetime.UTC)
        return utc(value)


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)
