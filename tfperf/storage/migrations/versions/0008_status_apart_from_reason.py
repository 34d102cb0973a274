"""A gate status is one word and its reason is kept apart: the runs kept as
`faster: baseline stale` are `faster`, their reason (already in `reason`) says the baseline is
stale. Their documents keep the old text; session_files.Run.from_json reads it as `faster`.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.execute("UPDATE runs SET verdict = 'faster' WHERE verdict = 'faster: baseline stale'")
