"""Findings that reach people: the store's open regressions, failures, slower A/B cases and
culprits, posted once each to a webhook, and a pull request's A/B as one comment kept current."""
