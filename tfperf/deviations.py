"""Known XLA numerical deviations: wider tolerances for one workload and precision, each with a
reason, a link and an expiry date, read from `baselines/xla_deviations.json`.

A deviation is a decision someone made and must revisit: when it expires the default tolerance
applies again and the check fails until the deviation is fixed upstream or renewed.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE_NAME = "xla_deviations.json"
_FIELDS = {"workload": str, "precision": str, "loss": float, "gradients": float,
           "weights": float, "reason": str, "link": str, "expires": str}


class DeviationError(Exception):
    """The deviations file is unreadable or malformed; the message names it and the problem."""


@dataclass(frozen=True)
class Deviation:
    workload: str
    precision: str
    loss: float
    gradients: float
    weights: float
    reason: str
    link: str
    expires: datetime.date

    def active(self, today: datetime.date) -> bool:
        return today <= self.expires


def _entry(path: Path, index: int, raw: Any) -> Deviation:
    where = f"{path}: deviation {index + 1}"
    if not isinstance(raw, dict):
        raise DeviationError(f"{where} is not an object")
    if set(raw) != set(_FIELDS):
        raise DeviationError(f"{where} must have exactly the fields {', '.join(_FIELDS)}; "
                             f"has {', '.join(sorted(raw))}")
    for name, kind in _FIELDS.items():
        value = raw[name]
        if kind is float and not (isinstance(value, int | float) and value > 0):
            raise DeviationError(f"{where}: {name} must be a positive number, not {value!r}")
        if kind is str and not (isinstance(value, str) and value):
            raise DeviationError(f"{where}: {name} must be a non-empty string")
    try:
        expires = datetime.date.fromisoformat(raw["expires"])
    except ValueError:
        raise DeviationError(f"{where}: expires must be a date like 2027-05-31, not "
                             f"{raw['expires']!r}") from None
    return Deviation(raw["workload"], raw["precision"], float(raw["loss"]),
                     float(raw["gradients"]), float(raw["weights"]), raw["reason"], raw["link"],
                     expires)


def load(folder: Path) -> list[Deviation]:
    path = folder / FILE_NAME
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise DeviationError(f"{path} is not readable JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("deviations"), list):
        raise DeviationError(f'{path} must be an object with a "deviations" list')
    return [_entry(path, i, raw) for i, raw in enumerate(data["deviations"])]


def find(deviations: list[Deviation], workload: str, precision: str) -> Deviation | None:
    for deviation in deviations:
        if deviation.workload == workload and deviation.precision == precision:
            return deviation
    return None
