"""Alembic's migrations of the results store, oldest first in versions/."""
