"""What a kept A/B session file must hold: tfperf-ab judges it again, tfperf-store imports it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfperf.ground.vocabulary import CAUSE, COST_STATUS, NUMERICS_STATUS, SIDES
from tfperf.options.ab_settings import LOOK_RULES
from tfperf.storage import formats, schemas
from tfperf.storage.errors import known

_PAIR = {"type": "object", "required": ["duet", "order", "a_rate", "b_rate", "at_s"],
         "properties": {"order": {"enum": ["AB", "BA"]},
                        "a_rate": {"type": "number", "exclusiveMinimum": 0},
                        "b_rate": {"type": "number", "exclusiveMinimum": 0}}}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "session", "machine_key", "tier", "settings", "sides", "cases"],
    "properties": {
        "format": {"const": formats.AB_FORMAT},
        "settings": {"type": "object", "required": ["floor", "alpha", "min_pairs", "max_pairs"],
                     "properties": {"look_rule": {"enum": list(LOOK_RULES)}}},
        "sides": {"type": "object", "required": list(SIDES)},
        "cases": {"type": "array", "items": {
            "type": "object", "required": ["case_id", "sides", "pairs", "failure", "order_effect"],
            "properties": {"pairs": {"type": "array", "items": _PAIR}}}},
    },
}


def validate(data: Any, path: Path) -> None:
    """StorageError, one line naming the file and the problem, unless `data` is a kept A/B
    session file: its schema, and each case's failure cause, numerics verdict and cost verdicts
    each a value of its vocabulary."""
    schemas.validate(data, SCHEMA, path, "tfperf A/B session file")
    for case in data["cases"]:
        where = f"{path}: case {case['case_id']}"
        if case["failure"]:
            known(CAUSE, case["failure"].get("cause"), f"{where}: its failure's cause")
        if case.get("numerics"):
            known(NUMERICS_STATUS, case["numerics"].get("status"), f"{where}: its numerics")
        for key, kept in ((case.get("costs") or {}).get("verdicts") or {}).items():
            known(COST_STATUS, kept.get("status"), f"{where}: its {key} verdict")
