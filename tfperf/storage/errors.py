"""The one error type of everything tfperf keeps: a caller that reads or writes stored results
catches StoreError, and prints its one line."""

from __future__ import annotations


class StoreError(Exception):
    """A stored file that cannot be read, or a write that would overwrite one."""


class StoreUnavailable(StoreError):
    """The results store cannot be used: a bad URL, a server not reached, a newer schema."""
