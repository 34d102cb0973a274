"""Everything tfperf keeps, in one place with one error type (errors.StorageError): files written
whole or not at all, their schemas and formats, the session files and the runs they hold, the
versioned shared baselines, and the results store (SQLite or PostgreSQL, its schema migrated by
Alembic). Judging is elsewhere (tfperf.gate, tfperf.ab); this package only reads and writes."""
