"""A case's series across builds by one index: each run's machine kind (its machine key without
the TensorFlow) and series key (its hard fingerprint's key without the build), filled for the
runs kept before from their rows and documents, and an index on (case, kind, time).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import hashlib
import json
import re

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"

# Spelled out rather than imported: a migration is history, and must not change when the code
# that computes these for new runs does (tfperf.ground.machine, tfperf.storage.fingerprint).
TENSORFLOW_PART = re.compile(r"-tf\d[\w.+]*?(?:-(?:dev|rc|a|b)\d+)?(?=-)")
BUILD_FIELDS = ("tensorflow", "tensorflow_git", "cuda", "cudnn")


def _series_key(hard: dict[str, object]) -> str:
    text = json.dumps({k: v for k, v in hard.items() if k not in BUILD_FIELDS}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("machine_kind", sa.String(200), nullable=False,
                                   server_default=""))
        batch.add_column(sa.Column("series_key", sa.String(40), nullable=False,
                                   server_default=""))
    runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("machine_key", sa.String),
                    sa.column("document", sa.JSON), sa.column("machine_kind", sa.String),
                    sa.column("series_key", sa.String))
    connection = op.get_bind()
    for row in connection.execute(sa.select(runs.c.id, runs.c.machine_key,
                                            runs.c.document)).all():
        document = row.document if isinstance(row.document, dict) else json.loads(row.document)
        hard = (document.get("fingerprint") or {}).get("hard") or {}
        connection.execute(runs.update().where(runs.c.id == row.id).values(
            machine_kind=TENSORFLOW_PART.sub("", row.machine_key, count=1),
            series_key=_series_key(hard)))
    op.create_index("runs_by_case_and_kind", "runs", ["case_id", "machine_kind", "when"])
