"""Alembic's entry: the store's own connection (tfperf.storage.database opens it) is migrated
in one transaction, so a migration killed mid-way leaves the schema it started from."""

from __future__ import annotations

from alembic import context

from tfperf.storage import tables

context.configure(connection=context.config.attributes["connection"],
                  target_metadata=tables.metadata)
with context.begin_transaction():
    context.run_migrations()
