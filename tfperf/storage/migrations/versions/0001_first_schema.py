"""The first schema: sessions, runs, failures and A/B cases.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    # Written out, not taken from tables.py: a migration is history and must not change when
    # the current schema does.
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(120), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("machine_key", sa.String(200), nullable=False),
        sa.Column("commit", sa.String(60), nullable=False),
        sa.Column("started", sa.String(40), nullable=False),
        sa.Column("source", sa.Text, nullable=False))
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(120), sa.ForeignKey("sessions.id"), nullable=False),
        sa.Column("case_id", sa.String(400), nullable=False),
        sa.Column("machine_key", sa.String(200), nullable=False),
        sa.Column("when", sa.String(40), nullable=False),
        sa.Column("tensorflow", sa.String(80), nullable=False),
        sa.Column("git_hash", sa.String(80), nullable=False),
        sa.Column("examples_per_sec", sa.Float, nullable=False),
        sa.Column("verdict", sa.String(40), nullable=False),
        sa.Column("document", sa.JSON, nullable=False),
        sa.UniqueConstraint("session_id", "case_id", name="one_run_per_case_and_session"))
    op.create_index("runs_by_case", "runs", ["case_id", "when"])
    op.create_index("runs_by_machine", "runs", ["machine_key", "when"])
    op.create_table(
        "failures",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(120), sa.ForeignKey("sessions.id"), nullable=False),
        sa.Column("case_id", sa.String(400), nullable=False),
        sa.Column("machine_key", sa.String(200), nullable=False),
        sa.Column("when", sa.String(40), nullable=False),
        sa.Column("cause", sa.String(40), nullable=False),
        sa.Column("phase", sa.String(80), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("log_path", sa.Text, nullable=False),
        sa.Column("log_tail", sa.Text, nullable=False),
        sa.UniqueConstraint("session_id", "case_id", name="one_failure_per_case_and_session"))
    op.create_index("failures_by_case", "failures", ["case_id", "when"])
    op.create_table(
        "ab_cases",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(120), sa.ForeignKey("sessions.id"), nullable=False),
        sa.Column("case_id", sa.String(400), nullable=False),
        sa.Column("when", sa.String(40), nullable=False),
        sa.Column("verdict", sa.String(40), nullable=False),
        sa.Column("ratio", sa.Float),
        sa.Column("low", sa.Float),
        sa.Column("high", sa.Float),
        sa.Column("pairs", sa.Integer, nullable=False),
        sa.Column("document", sa.JSON, nullable=False),
        sa.UniqueConstraint("session_id", "case_id", name="one_ab_case_per_session"))
