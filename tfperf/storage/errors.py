"""The one error type of everything tfperf keeps: a caller that reads or writes stored results
catches StorageError, and prints its one line."""

from __future__ import annotations


class StorageError(Exception):
    """A stored file that cannot be read, or a write that would overwrite one."""


class StoreUnavailable(StorageError):
    """The results store cannot be used: a bad URL, a server not reached, a newer schema."""
