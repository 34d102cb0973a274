"""The store's rows as plain files for the tools a team already has, and back.

One file per table, rows in the order of their key: JSON lines (every column, a document as an
object) or CSV (a header of the columns; a document as JSON text, no value as an empty field).
Either loads into an empty store as it was: the same ids, sessions, values and documents, so
that export, load and export again gives the same files. Parquet would need pyarrow, which
tfperf does not depend on; pandas and DuckDB read both formats.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import sqlalchemy as sa

from tfperf.ground.machine import kind_of_key
from tfperf.ground.vocabulary import current_status
from tfperf.storage import files, tables
from tfperf.storage.errors import StorageError
from tfperf.storage.fingerprint import series_key

Format = Literal["jsonl", "csv"]
FORMATS: tuple[Format, ...] = ("jsonl", "csv")
# Parents before the rows that name them (each per-case row names its session).
TABLES = (tables.sessions, tables.runs, tables.failures, tables.ab_cases, tables.bisects,
          tables.notifications)
# Tables an export made before them lacks: such an export loads, with none of their rows.
NEWER = {tables.notifications.name}
# Columns an export made before them lacks: such an export loads, with none of their values.
NEWER_COLUMNS = {tables.sessions.name: {"differences"},
                 tables.runs.name: {"machine_kind", "series_key"}}


def _is_json(column: sa.Column[Any]) -> bool:
    return isinstance(column.type, sa.JSON)


def _rows(connection: sa.Connection, table: sa.Table) -> Iterator[dict[str, Any]]:
    """The table's rows, each time as ISO 8601 text with its zone (+00:00), as loading reads it."""
    query = sa.select(table).order_by(*table.primary_key.columns)
    for row in connection.execution_options(stream_results=True).execute(query):
        yield {name: value.isoformat() if isinstance(value, datetime.datetime) else value
               for name, value in row._mapping.items()}


def _jsonl(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n"


def _csv(table: sa.Table, rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    names = [c.name for c in table.columns]
    as_json = {c.name for c in table.columns if _is_json(c)}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow(["" if row[n] is None else json.dumps(row[n], sort_keys=True)
                         if n in as_json else row[n] for n in names])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()  # the header of an empty table


def export(engine: sa.Engine, folder: Path, form: Format) -> dict[str, int]:
    """Write every table to `folder` (TABLE.jsonl or TABLE.csv), never over a file there; the
    rows written per table."""
    paths = {table.name: folder / f"{table.name}.{form}" for table in TABLES}
    taken = [str(path) for path in paths.values() if path.exists()]
    if taken:
        raise StorageError(f"{taken[0]} exists: export into a folder of its own")
    counts: dict[str, int] = {}
    with engine.connect() as connection:
        for table in TABLES:
            counted = _counting(_rows(connection, table), counts, table.name)
            files.write_new_lines(paths[table.name], _jsonl(counted) if form == "jsonl"
                                  else _csv(table, counted))
    return counts


def _counting(rows: Iterator[dict[str, Any]], counts: dict[str, int], name: str
              ) -> Iterator[dict[str, Any]]:
    counts[name] = 0
    for row in rows:
        counts[name] += 1
        yield row


def _typed(table: sa.Table, row: dict[str, str]) -> dict[str, Any]:
    """A CSV row's text as the column types hold it."""
    found: dict[str, Any] = {}
    for column in table.columns:
        if column.name not in row and column.name in NEWER_COLUMNS.get(table.name, set()):
            found[column.name] = None
            continue
        text = row[column.name]
        if text == "" and column.nullable:
            found[column.name] = None
        elif _is_json(column):
            found[column.name] = json.loads(text)
        elif isinstance(column.type, sa.Integer):
            found[column.name] = int(text)
        elif isinstance(column.type, sa.Float):
            found[column.name] = float(text)
        else:
            found[column.name] = text
    return found


def read(folder: Path) -> tuple[Format, dict[str, list[dict[str, Any]]]]:
    """An export folder's rows by table, checked before anything is written: StorageError, one
    line, for a folder that holds no export or a file that does not fit its table."""
    for form in FORMATS:
        paths = {table.name: folder / f"{table.name}.{form}" for table in TABLES}
        if all(path.exists() for name, path in paths.items() if name not in NEWER):
            break
    else:
        raise StorageError(f"{folder} holds no export (valid: {', '.join(t.name for t in TABLES)}"
                           f" as .{' or .'.join(FORMATS)}, written by tfperf-store export)")
    found: dict[str, list[dict[str, Any]]] = {}
    for table in TABLES:
        path = paths[table.name]
        if table.name in NEWER and not path.exists():
            found[table.name] = []
            continue
        try:
            with path.open(encoding="utf-8", newline="") as lines:
                found[table.name] = ([json.loads(line) for line in lines if line.strip()]
                                     if form == "jsonl" else
                                     [_typed(table, row) for row in csv.DictReader(lines)])
        except (ValueError, KeyError) as error:
            raise StorageError(f"{path} is not a {table.name} export: {error}") from None
        names = {c.name for c in table.columns}
        newer = NEWER_COLUMNS.get(table.name, set())
        for row in found[table.name]:
            for name in newer - set(row):
                row[name] = None
            if table is tables.runs:
                _fill_series(row)
        if any(set(row) != names for row in found[table.name]):
            raise StorageError(f"{path} is not a {table.name} export: its columns are not "
                               f"{', '.join(sorted(names))}")
    return form, found


def _fill_series(row: dict[str, Any]) -> None:
    """A run of an export made before 0009: its series columns, from what they are made of."""
    if row["machine_kind"] is None:
        row["machine_kind"] = kind_of_key(row["machine_key"])
    if row["series_key"] is None:
        document = row["document"] if isinstance(row["document"], dict) else {}
        row["series_key"] = series_key((document.get("fingerprint") or {}).get("hard") or {})


def load(engine: sa.Engine, found: dict[str, list[dict[str, Any]]]) -> dict[str, int]:
    """Add an export's rows to a store that holds none (its ids are kept), in one transaction;
    the rows per table."""
    with engine.begin() as connection:
        held = sum(int(connection.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())
                   for t in TABLES)
        if held:
            raise StorageError(f"the store holds {held} rows: an export loads into an empty "
                               "store (tfperf-store import adds kept session files to any)")
        for row in found.get("runs", []):  # an export made before statuses lost their reasons
            row["verdict"] = current_status(str(row["verdict"]))
            if isinstance(row.get("document"), dict) and "verdict" in row["document"]:
                row["document"] = {**row["document"],
                                   "verdict": current_status(str(row["document"]["verdict"]))}
        for table in TABLES:
            if found[table.name]:
                connection.execute(table.insert(), found[table.name])
            if connection.dialect.name == "postgresql" and "id" in table.c \
                    and isinstance(table.c.id.type, sa.Integer):
                # The ids came with the rows: the next row a session adds takes the next one.
                connection.execute(sa.text(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                    f"COALESCE((SELECT MAX(id) FROM {table.name}), 0) + 1, false)"))
    return {name: len(rows) for name, rows in found.items()}
