"""What the notifier has sent: one row a finding and destination, so that a
regression, a failure or a culprit reaches people once, however many nights it stays open and
however often the notifier runs.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    # Spelled out rather than taken from tables.py: a migration is history, and must not
    # change when the current schema does.
    op.create_table(
        "notifications",
        sa.Column("finding", sa.String(700), primary_key=True),
        sa.Column("destination", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("sent", sa.DateTime(timezone=True), nullable=False),
    )
