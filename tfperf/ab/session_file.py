"""What a kept A/B session file must hold: tfperf-ab judges it again, tfperf-store imports it."""

from __future__ import annotations

from typing import Any

from tfperf.options.ab_settings import LOOK_RULES
from tfperf.storage import formats

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
        "sides": {"type": "object", "required": ["A", "B"]},
        "cases": {"type": "array", "items": {
            "type": "object", "required": ["case_id", "sides", "pairs", "failure", "order_effect"],
            "properties": {"pairs": {"type": "array", "items": _PAIR}}}},
    },
}
