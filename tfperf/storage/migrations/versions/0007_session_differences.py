"""What differs between an A/B session's two sides: each package at another version
or on one side only, each variable a side adds, the workloads folder; kept with the session, so
that the dashboard's A/B page says what else changed besides what the user named. Sessions
kept before have none (NULL): nothing was recorded then.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("differences", sa.JSON, nullable=True))
