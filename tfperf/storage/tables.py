"""The store's tables, as SQLAlchemy Core describes them: the schema the newest migration
(migrations/versions/) leaves. Each row keeps the whole document it came from (`document`, JSON)
beside the columns a query filters or sorts by, so nothing a session wrote is lost to the
choice of columns. Times are instants (timestamps.py, since 0005), compared by the database."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from tfperf.storage.timestamps import UtcDateTime

metadata = sa.MetaData()


def _row_of_a_session() -> list[sa.Column[Any]]:
    """The columns every per-case table starts with: its own id, its session, its case."""
    return [sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("session_id", sa.String(120), sa.ForeignKey("sessions.id"), nullable=False),
            sa.Column("case_id", sa.String(400), nullable=False)]


# One `pytest perf/` session (kind "measured" or "ab"), or a file the importer read.
sessions = sa.Table(
    "sessions", metadata,
    sa.Column("id", sa.String(120), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("tier", sa.String(16), nullable=False),
    sa.Column("machine_key", sa.String(200), nullable=False),
    sa.Column("commit", sa.String(60), nullable=False),
    sa.Column("started", UtcDateTime, nullable=False),
    sa.Column("source", sa.Text, nullable=False),  # "session" or the imported file's path
    # Since 0007: an A/B session's differences between its sides (tfperf.ab.differences).
    sa.Column("differences", sa.JSON),
)

# A measured case's run, as the gate reads it (tfperf.storage.session_files.Run's JSON).
runs = sa.Table(
    "runs", metadata, *_row_of_a_session(),
    sa.Column("machine_key", sa.String(200), nullable=False),
    sa.Column("when", UtcDateTime, nullable=False),
    sa.Column("tensorflow", sa.String(80), nullable=False),
    sa.Column("git_hash", sa.String(80), nullable=False),
    sa.Column("examples_per_sec", sa.Float, nullable=False),
    sa.Column("verdict", sa.String(40), nullable=False),
    sa.Column("document", sa.JSON, nullable=False),
    # Since 0004: why the verdict (gate.case_verdict.reason) and the other gated figures.
    sa.Column("reason", sa.Text, nullable=False, server_default=""),
    sa.Column("flagged", sa.Text, nullable=False, server_default=""),  # a disturbed yardstick...
    sa.Column("scaling_efficiency", sa.Float),
    sa.Column("peak_memory_bytes", sa.Float),
    sa.Column("compile_cpu_s", sa.Float),
    sa.Column("mfu", sa.Float),
    # Since 0009: the case's series across builds (build_series.py): the machine key without its
    # TensorFlow, and the hard fingerprint's key without the build.
    sa.Column("machine_kind", sa.String(200), nullable=False, server_default=""),
    sa.Column("series_key", sa.String(40), nullable=False, server_default=""),
    sa.UniqueConstraint("session_id", "case_id", name="one_run_per_case_and_session"),
    sa.Index("runs_by_case_and_machine", "case_id", "machine_key", "when"),
    sa.Index("runs_by_case_and_kind", "case_id", "machine_kind", "when"),
    sa.Index("runs_by_machine", "machine_key", "when"),
)

# A case that did not finish (or failed a check): its cause, the phase it was in, its log.
failures = sa.Table(
    "failures", metadata, *_row_of_a_session(),
    sa.Column("machine_key", sa.String(200), nullable=False),
    sa.Column("when", UtcDateTime, nullable=False),
    sa.Column("cause", sa.String(40), nullable=False),
    sa.Column("phase", sa.String(80), nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("log_path", sa.Text, nullable=False),
    sa.Column("log_tail", sa.Text, nullable=False),
    sa.UniqueConstraint("session_id", "case_id", name="one_failure_per_case_and_session"),
    sa.Index("failures_by_case", "case_id", "when"),
)

# An A/B session's case: its verdict and interval, and the whole case with its pairs.
ab_cases = sa.Table(
    "ab_cases", metadata, *_row_of_a_session(),
    sa.Column("when", UtcDateTime, nullable=False),
    sa.Column("verdict", sa.String(40), nullable=False),
    sa.Column("ratio", sa.Float),
    sa.Column("low", sa.Float),
    sa.Column("high", sa.Float),
    sa.Column("pairs", sa.Integer, nullable=False),
    sa.Column("document", sa.JSON, nullable=False),
    sa.UniqueConstraint("session_id", "case_id", name="one_ab_case_per_session"),
)

# A bisection (tfperf-bisect): what it followed, how it ended, and its whole report. Its steps'
# A/B sessions are kept as every A/B session is (sessions, ab_cases).
bisects = sa.Table(
    "bisects", metadata,
    sa.Column("id", sa.String(120), primary_key=True),
    sa.Column("when", UtcDateTime, nullable=False),
    sa.Column("machine_key", sa.String(200), nullable=False),
    sa.Column("case_id", sa.String(400), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),  # "tensorflow" or "commits"
    sa.Column("outcome", sa.String(40), nullable=False),
    sa.Column("culprit", sa.Text),
    sa.Column("last_good", sa.Text),
    sa.Column("document", sa.JSON, nullable=False),
    sa.Index("bisects_by_case", "case_id", "when"),
)

# What the notifier has sent (tfperf-notify; since 0006): a finding reaches a destination once.
# A destination is named by a digest of its address, never the address: a webhook's URL is a
# secret.
notifications = sa.Table(
    "notifications", metadata,
    sa.Column("finding", sa.String(700), primary_key=True),
    sa.Column("destination", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("sent", UtcDateTime, nullable=False),
)
