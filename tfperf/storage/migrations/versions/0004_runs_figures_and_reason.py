"""Each run's gated figures, the reason for its verdict and the figures its sanity checks flagged
as columns, filled for the runs kept before from their documents: the dashboard
reads columns only, and a verdict is shown with its reason and every figure it judged.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"

FIGURES = ("scaling_efficiency", "peak_memory_bytes", "compile_cpu_s", "mfu")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _flagged(value: Any) -> str:
    return "; ".join(map(str, value)) if isinstance(value, list) else str(value or "")


def upgrade() -> None:
    # Spelled out rather than taken from tables.py: a migration is history, and must not
    # change when the current schema does.
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("reason", sa.Text, nullable=False, server_default=""))
        batch.add_column(sa.Column("flagged", sa.Text, nullable=False, server_default=""))
        for name in FIGURES:
            batch.add_column(sa.Column(name, sa.Float, nullable=True))
    runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("document", sa.JSON),
                    sa.column("reason", sa.Text), sa.column("flagged", sa.Text),
                    *(sa.column(n, sa.Float) for n in FIGURES))
    connection = op.get_bind()
    for row in connection.execute(sa.select(runs.c.id, runs.c.document)).all():
        document = row.document if isinstance(row.document, dict) else json.loads(row.document)
        figures = document.get("figures") or {}
        connection.execute(runs.update().where(runs.c.id == row.id).values(
            reason=str(document.get("reason") or ""),
            flagged=_flagged(figures.get("figures_flagged")),
            scaling_efficiency=_number(document.get("scaling_efficiency")),
            peak_memory_bytes=_number(document.get("peak_memory_bytes")),
            compile_cpu_s=_number(document.get("compile_cpu_s")),
            mfu=_number(figures.get("mfu"))))
