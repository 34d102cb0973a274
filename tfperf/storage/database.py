"""Opening the results store: which database (a URL, else the environment's, else SQLite in
the results folder), reaching it, and bringing its schema forward to this tfperf's newest.

Everything that can stop a session here does so before its first case, with one line: a URL
that is not one, a server that cannot be reached, a store written by a newer tfperf.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from tfperf.storage.errors import StoreUnavailable

# Alembic is imported where a store is opened, not with this module: every pytest process loads
# the plugin, which reads the store's URL, and most never open a store.
if TYPE_CHECKING:
    from alembic.config import Config

URL_ENV = "TFPERF_STORE_URL"  # how a workflow names the team's store (a secret, say)
FILE_NAME = "store.sqlite3"
VALID = "sqlite:///PATH, or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
# Two sessions creating a new PostgreSQL store at once: one wins, the other's CREATE fails on
# the winner's tables and finds them on its next try.
_MIGRATE_TRIES = 5
_MIGRATIONS = Path(__file__).parent / "migrations"  # alembic's scripts, one file a revision


def default_url(history: Path) -> str:
    """The SQLite file beside the session files it indexes, so that a history folder of its own
    (a benchmark's, a refresh's) is a store of its own too."""
    return f"sqlite:///{history / FILE_NAME}"


def never_made(url: str, history: Path) -> bool:
    """Whether `url` is the history folder's own store and there is none yet: a reader then
    reads nothing from it (where a store a user named must be there)."""
    return url == default_url(history) and not (history / FILE_NAME).is_file()


def chosen_url(given: str | None, history: Path) -> str:
    """The option's URL, else the environment's (TFPERF_STORE_URL), else the history folder's
    SQLite file."""
    return given or os.environ.get(URL_ENV) or default_url(history)



def shown(url: str | sa.URL) -> str:
    """The URL as messages print it: never with its password, nor the driver we chose."""
    try:
        parsed = sa.make_url(url)
        return parsed.set(drivername=parsed.get_backend_name()).render_as_string(
            hide_password=True)
    except sa.exc.ArgumentError:
        return "<not a database URL>"


# user:password@ in any URL of a text: what a kept log or message must never hold.
_PASSWORD_IN_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]+:)[^@\s]+@")


def without_passwords(text: str) -> str:
    """`text` with every URL's password shown as ***, as `shown` shows one URL's."""
    return _PASSWORD_IN_URL.sub(r"\g<scheme>***@", text)


def check_url(url: str) -> None:
    """StoreUnavailable, one line, for a URL that names no SQLite file or PostgreSQL database."""
    _parsed(url)


def _parsed(url: str) -> sa.URL:
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise StoreUnavailable(f"results store: {url!r} is not a database URL; valid: {VALID}"
                               ) from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreUnavailable(f"results store: {shown(parsed)} is neither SQLite nor "
                               f"PostgreSQL; valid: {VALID}")
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3, not psycopg2
    if parsed.get_backend_name() == "sqlite" and not parsed.database:
        raise StoreUnavailable(f"results store: {shown(parsed)} names no file (an in-memory "
                               f"store would keep nothing); valid: {VALID}")
    return parsed


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    Path(str(url.database)).parent.mkdir(parents=True, exist_ok=True)
    # Sessions of one machine write to one file at once: each waits up to a minute for another's
    # write, and the write-ahead log lets readers go on meanwhile.
    engine = sa.create_engine(url, connect_args={"timeout": 60})

    @sa.event.listens_for(engine, "connect")
    def _connect(connection: Any, _record: Any) -> None:
        connection.isolation_level = None  # we say when a transaction begins, below
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA foreign_keys=ON")

    @sa.event.listens_for(engine, "begin")
    def _begin(connection: sa.Connection) -> None:
        # Take the write lock when the transaction starts, not at its first write: a
        # read-then-write transaction could otherwise fail at once on another's commit.
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _none_at(url: sa.URL | str) -> StoreUnavailable:
    return StoreUnavailable(f"results store: there is none at {shown(url)} (nothing was "
                            "created: a pytest perf/ session or tfperf-store import makes one)")


def connect(url: str, create: bool = True) -> sa.Engine:
    """An engine that reached the database; without `create`, an SQLite file must exist."""
    parsed = _parsed(url)
    if parsed.get_backend_name() == "sqlite":
        if not create and not Path(str(parsed.database)).is_file():
            raise _none_at(parsed)
        engine = _sqlite_engine(parsed)
    else:
        engine = sa.create_engine(parsed, connect_args={"connect_timeout": 10},
                                  pool_pre_ping=True)
    try:
        with engine.connect():
            pass
    except sa.exc.SQLAlchemyError as error:
        engine.dispose()
        reason = (str(getattr(error, "orig", None) or error).strip().splitlines() or [""])[0]
        raise StoreUnavailable(f"results store {shown(parsed)} cannot be reached: {reason}"
                               ) from None
    return engine


def _config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    return config


_REVISION_FILE = re.compile(r"^(\d{4})_\w+\.py$")
_VERSION_TABLE = "alembic_version"  # alembic's own table of the revision a store is at


def head() -> str:
    """The newest revision this tfperf knows. Migrations are files named by their revision
    (0007_session_differences.py is 0007, down from 0006), so the newest is the highest
    number: read from the names, not by loading alembic's scripts, which every process that
    opens a store would pay for (0.2 s, a hundred times in the self-tests). That the names
    give alembic's own head: tests/fast/test_results_store.py."""
    return max(m.group(1) for f in (_MIGRATIONS / "versions").iterdir()
               if (m := _REVISION_FILE.match(f.name)))


def current(connection: sa.Connection) -> str | None:
    """The revision the store is at; None for a store with no schema yet."""
    if not sa.inspect(connection).has_table(_VERSION_TABLE):
        return None
    found = connection.execute(sa.text(f"SELECT version_num FROM {_VERSION_TABLE}")).scalars()
    return next(iter(found), None)


def readable(engine: sa.Engine) -> None:
    """StoreUnavailable, one line, where a reader cannot read the store as it is: none there
    (no schema yet), or a schema at another revision than this tfperf's. A reader never
    migrates: moving a team's store forward would lock out every runner still on the tfperf
    before, so that is `tfperf-store upgrade`'s, or a session's, to do."""
    with engine.connect() as connection:
        found = current(connection)
    if found is None:
        raise _none_at(engine.url)
    newest = head()
    if found < newest:
        raise StoreUnavailable(f"results store {shown(engine.url)} is at schema revision "
                               f"{found}, older than this tfperf's {newest}: `tfperf-store "
                               "upgrade` brings it forward (a session does too)")
    if found > newest:
        raise StoreUnavailable(f"results store {shown(engine.url)} is at schema revision "
                               f"{found}, newer than this tfperf's {newest}: upgrade tfperf "
                               "to use it")


def migrate(engine: sa.Engine, to: str = "head") -> str:
    """Bring the schema to this tfperf's newest (or `to`), in one transaction; its revision. A
    store at a revision this tfperf does not know was written by a newer one: never touched."""
    newest = head()
    target = newest if to == "head" else to
    for attempt in range(_MIGRATE_TRIES):
        try:
            with engine.begin() as connection:
                found = current(connection)
                if found == target:  # most opens: nothing to do, and no alembic to load
                    return target
                from alembic import command
                from alembic.script import ScriptDirectory

                known = {script.revision for script in
                         ScriptDirectory.from_config(_config()).walk_revisions()}
                if found is not None and found not in known:
                    raise StoreUnavailable(
                        f"results store {shown(engine.url)} is at schema revision {found}, "
                        f"newer than this tfperf's {newest}: upgrade tfperf to use it")
                config = _config()
                config.attributes["connection"] = connection
                command.upgrade(config, target)
            return target
        except sa.exc.DBAPIError as error:
            if attempt == _MIGRATE_TRIES - 1:
                reason = (str(error.orig).strip().splitlines() or [""])[0]
                raise StoreUnavailable(f"results store {shown(engine.url)}: its schema could "
                                       f"not be brought to {newest}: {reason}") from None
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")
