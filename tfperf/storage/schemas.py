"""JSON Schemas of the stored files: session files (the kept runs) and baseline entries.

Every stored file is validated against its schema before anything is built from it, and a file
that does not match stops the run naming the file, the place in it and the problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema

from tfperf.storage.errors import StorageError

_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_OPTIONAL_NUMBER = {"type": ["number", "null"]}
_RATES = {"type": "array", "items": _POSITIVE}

RUN: dict[str, Any] = {
    "type": "object",
    "required": ["case_id", "fingerprint", "when", "session", "examples_per_sec",
                 "round_examples_per_sec"],
    "properties": {
        "case_id": {"type": "string", "minLength": 1},
        "fingerprint": {
            "type": "object", "required": ["hard"],
            "properties": {"hard": {"type": "object"}, "soft": {"type": "object"}},
        },
        "when": {"type": "string", "minLength": 1},
        "session": {"type": "string"},
        "commit": {"type": "string"},
        "examples_per_sec": _POSITIVE,
        "round_examples_per_sec": {**_RATES, "minItems": 1},
        "scaling_efficiency": _OPTIONAL_NUMBER,
        "peak_memory_bytes": _OPTIONAL_NUMBER,
        "compile_cpu_s": _OPTIONAL_NUMBER,
        "verdict": {"type": "string"},
        "reason": {"type": "string"},
        "rerun_round_examples_per_sec": _RATES,
        "wall_s": _OPTIONAL_NUMBER,
        "rerun": {"type": "object", "additionalProperties": _OPTIONAL_NUMBER},
        # The case's single-valued reported figures (MFU, step times...), as the store keeps
        # them (stored_runs.keep_runs): a session file exported from a store carries them.
        "figures": {"type": "object"},
    },
}

# A case that failed before the gate judged it (stored_runs.failure_json), kept beside the runs:
# optional, so that files kept without failures are read as they were.
FAILURE: dict[str, Any] = {
    "type": "object",
    "required": ["case_id", "when", "cause", "message"],
    "properties": {
        "case_id": {"type": "string", "minLength": 1},
        "when": {"type": "string", "minLength": 1},
        "cause": {"type": "string", "minLength": 1},
        "phase": {"type": "string"},
        "message": {"type": "string"},
        "log_path": {"type": "string"},
        "log_tail": {"type": "string"},
    },
}

SESSION: dict[str, Any] = {
    "type": "object",
    "required": ["format", "session", "machine_key", "runs"],
    "properties": {
        "format": {"const": "tfperf-session/1"},
        "session": {"type": "string"},
        # It names a folder under baselines/: one plain name, never a path.
        "machine_key": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]*$"},
        "tier": {"type": "string"},
        "runs": {"type": "array", "items": RUN},
        "failures": {"type": "array", "items": FAILURE},
    },
}

ENTRY: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version", "who", "when", "reason", "kind", "cases"],
    "properties": {
        "format": {"const": "tfperf-baseline/1"},
        "version": {"type": "integer", "minimum": 1},
        "who": {"type": "string"},
        "when": {"type": "string"},
        "commit": {"type": "string"},
        "reason": {"type": "string", "minLength": 1},
        "kind": {"enum": ["refresh", "rollback"]},
        "marked": {"type": "array", "items": {"type": "string"}},
        "rollback_of": {"type": ["integer", "null"]},
        "cases": {
            "type": "object",
            "additionalProperties": {
                "type": "object", "required": ["runs", "history_since"],
                "properties": {"runs": {"type": "array", "items": RUN},
                               "history_since": {"type": "string"},
                               "kept_spread": _OPTIONAL_NUMBER},
            },
        },
    },
}


def validate(data: Any, schema: dict[str, Any], path: Path, what: str) -> None:
    """Raise StorageError, one line naming the file and the first problem, unless valid."""
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise StorageError(f"{path} is not a valid {what}: at {where}: {error.message}")
