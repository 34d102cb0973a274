"""Bisections (tfperf-bisect): one row each, with its whole report.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    # Spelled out rather than taken from tables.py: a migration is history, and must not
    # change when the current schema does.
    op.create_table(
        "bisects",
        sa.Column("id", sa.String(120), primary_key=True),
        sa.Column("when", sa.String(40), nullable=False),
        sa.Column("machine_key", sa.String(200), nullable=False),
        sa.Column("case_id", sa.String(400), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("outcome", sa.String(40), nullable=False),
        sa.Column("culprit", sa.Text),
        sa.Column("last_good", sa.Text),
        sa.Column("document", sa.JSON, nullable=False),
    )
    op.create_index("bisects_by_case", "bisects", ["case_id", "when"])
