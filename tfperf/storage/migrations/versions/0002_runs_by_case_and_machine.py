"""The gate's history query (one case on one machine key) by one index: with the two indexes
of 0001, SQLite chose the machine's, and read every run of that machine for one case (52 ms for
a year of 150 cases on one runner; benchmarks/store_scale.py).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_index("runs_by_case_and_machine", "runs", ["case_id", "machine_key", "when"])
    op.drop_index("runs_by_case", "runs")  # the new index's first column serves its queries
