"""The one error type of everything tfperf keeps: a caller that reads or writes stored results
catches StorageError, and prints its one line."""

from __future__ import annotations

from tfperf.ground import vocabulary
from tfperf.ground.vocabulary import T, Vocabulary


class StorageError(Exception):
    """A stored file that cannot be read, or a write that would overwrite one."""


class StoreUnavailable(StorageError):
    """The results store cannot be used: a bad URL, a server not reached, a newer schema."""


def known(kind: Vocabulary[T], text: object, where: str) -> T:
    """A verdict, status, cause or outcome read back from the store or a kept file, as its
    vocabulary's value (vocabulary.read); StorageError, one line naming it, where it was read
    and the valid values, if it is none of them."""
    try:
        return vocabulary.read(kind, text, where)
    except vocabulary.UnknownValue as error:
        raise StorageError(str(error)) from None
