"""Parsers of option values shared by the option modules: each returns the value or raises
ValueError with one line that names the option, the text and what is valid."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
ON_OFF = ("on", "off")


def positive_int(option: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{option}: {text!r} is not a whole number of at least 1")
    return value


def positive_float(option: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise ValueError(f"{option}: {text!r} is not a number greater than 0")
    return value


def percent(option: str, text: str) -> float:
    """A fraction from a percentage, `5` or `5%`, strictly between 0 and 100."""
    value = positive_float(option, text.strip().rstrip("%"))
    if value >= 100:
        raise ValueError(f"{option}: {text!r} must be a percentage between 0 and 100")
    return value / 100


def one_of(option: str, noun: str, text: str, valid: Iterable[str]) -> str:
    valid = tuple(valid)
    if text not in valid:
        raise ValueError(f"{option}: no {noun} {text!r}; valid: {', '.join(valid)}")
    return text


def number(option: str, text: str | None, default: T, convert: Callable[[str], T],
           valid: Callable[[T], bool], says: str) -> T:
    """The option's value, the default when not given; a bad one raises with one line."""
    if not text:
        return default
    return _checked(option, text, convert, valid, says)


def _checked(option: str, text: str, convert: Callable[[str], T], valid: Callable[[T], bool],
             says: str) -> T:
    """The value `text` gives; a bad one, an empty one among them, raises with one line."""
    try:
        value: T | None = convert(text)
    except ValueError:
        value = None
    if value is None or not valid(value):
        raise ValueError(f"{option}: {text!r} is not {says}")
    return value


def percent_below(option: str, text: str, high: float) -> float:
    """A fraction from a percentage, `5` or `5%`, above 0 and below `high` (a fraction)."""
    return _checked(option, text, lambda t: float(t.strip().rstrip("%")) / 100,
                    lambda v: 0 < v < high, f"a percentage above 0 and below {high * 100:g}")


def min_max(option: str, text: str, least: int) -> tuple[int, int]:
    """(MIN, MAX) from `MIN:MAX` (or `N`: both), least <= MIN <= MAX."""
    def pair(t: str) -> tuple[int, int]:
        low, _, high = t.partition(":")
        return int(low), int(high or low)
    return _checked(option, text, pair, lambda v: least <= v[0] <= v[1],
                    f"MIN:MAX with {least} <= MIN <= MAX")
