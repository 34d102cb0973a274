"""Every time column holds an instant, not text: each row's ISO string is read and
written back as its time in UTC, so that filters and ORDER BY compare times. PostgreSQL's
columns become TIMESTAMP WITH TIME ZONE. SQLite has no time type (a declared type is only an
affinity): its values become the UTC time as SQLAlchemy's DateTime writes it there, fixed-width
text whose order is time order. In the one transaction database.migrate runs: a value that is
not a time stops the migration, naming its row, and leaves the store as it was.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

from tfperf.storage.errors import StoreUnavailable

revision = "0005"
down_revision = "0004"

# table: (its key, its time column). Spelled out rather than taken from tables.py: a migration
# is history, and must not change when the schema does.
TIMES = {"sessions": ("id", "started"), "runs": ("id", "when"), "failures": ("id", "when"),
         "ab_cases": ("id", "when"), "bisects": ("id", "when")}


def _instant(table: str, key: Any, text: Any) -> str:
    try:
        moment = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise StoreUnavailable(f"results store: {table} row {key!r} has time {text!r}, not an ISO "
                               "8601 time; nothing was changed") from None
    # Kept without a zone: UTC, the only zone the harness has written.
    moment = (moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)).astimezone(
        datetime.UTC)
    return moment.isoformat(sep=" ", timespec="microseconds")


def upgrade() -> None:
    connection = op.get_bind()
    sqlite = connection.dialect.name == "sqlite"
    for table, (key, column) in TIMES.items():
        rows = sa.table(table, sa.column(key), sa.column(column, sa.Text))
        found = connection.execute(sa.select(rows.c[key], rows.c[column])).all()
        if found:
            # SQLite's DateTime text is the UTC time without its zone ("+00:00" cut off).
            connection.execute(
                rows.update().where(rows.c[key] == sa.bindparam("row_key")).values(
                    {column: sa.bindparam("instant")}),
                [{"row_key": k, "instant": _instant(table, k, text)[:26 if sqlite else None]}
                 for k, text in found])
        if not sqlite:
            # Its indexes are rebuilt by the ALTER; every value now names its zone.
            op.alter_column(table, column, type_=sa.DateTime(timezone=True),
                            existing_type=sa.String(40), existing_nullable=False,
                            postgresql_using=f'"{column}"::timestamp with time zone')
