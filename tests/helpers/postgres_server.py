"""A real PostgreSQL server for the store's self-tests, started by the tests themselves: Debian's
`postgresql` package (./run installs it), initdb into a temporary folder, pg_ctl on a free
loopback port. As root, the server runs as the `postgres` user, since PostgreSQL refuses root.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

_USER = "tfperf"


def _bin_dir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                   key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class NoServer(RuntimeError):
    """No PostgreSQL server is installed on this machine."""


@dataclass(frozen=True)
class Server:
    port: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{_USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self, name: str) -> str:
        engine = sa.create_engine(self.url().replace("postgresql://", "postgresql+psycopg://"),
                                  isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        engine.dispose()
        return self.url(name)


@contextlib.contextmanager
def running_server() -> Iterator[Server]:
    """A fresh server in a temporary folder, stopped and removed on exit. NoServer when none is
    installed; RuntimeError, with the server's log, when it does not start."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        raise NoServer("no PostgreSQL server installed (./run test installs Debian's "
                           "postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="tfperf-postgres-"))
    data, sockets = folder / "data", folder / "sockets"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        shutil.chown(sockets, "postgres")
    subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", _USER,
                                    "-A", "trust", "--no-sync", "-E", "UTF8"]),
                   check=True, capture_output=True, timeout=120)
    log = folder / "server.log"
    for attempt in range(3):
        # A free port is only free until someone takes it (another test session starting its
        # own server, say): a port taken meanwhile is tried again with another.
        port = _free_port()
        # fsync off: the tests kill clients, not the server, and a durable disk write per
        # commit would only slow them.
        options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
        started = subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data),
                                                  "-o", options, "-l", str(log), "-w",
                                                  "start"]), capture_output=True, timeout=180)
        if started.returncode == 0:
            break
        said = log.read_text(errors="replace") if log.exists() else started.stderr.decode()
        if "could not bind" not in said or attempt == 2:
            raise RuntimeError(f"PostgreSQL did not start (pg_ctl exit {started.returncode}):\n"
                               f"{said[-2000:]}")
    try:
        yield Server(port)
    finally:
        subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m",
                                        "immediate", "stop"]), capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Server]:
    try:
        with running_server() as server:
            yield server
    except NoServer as error:
        if os.environ.get("CI"):
            pytest.fail(str(error))  # CI must test the real server, never skip it
        pytest.skip(str(error))
