"""The results store: every session's runs, failures and A/B cases in one database (SQLite in
the results folder by default, a team's PostgreSQL by URL), its schema versioned by Alembic."""
