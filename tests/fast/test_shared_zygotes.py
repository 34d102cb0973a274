"""Where shared zygotes live (tfperf.processes.shared_zygotes): a folder the user names, checked
before any session starts, and one socket name per settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfperf.processes import shared_zygotes
from tfperf.processes.shared_zygotes import FOLDER_ENV, FolderError


def test_no_folder_named_means_a_zygote_per_session() -> None:
    assert shared_zygotes.folder({}) is None
    assert shared_zygotes.folder({FOLDER_ENV: ""}) is None


def test_a_folder_that_cannot_hold_the_sockets_is_refused_with_one_line(tmp_path: Path) -> None:
    assert shared_zygotes.folder({FOLDER_ENV: str(tmp_path)}) == tmp_path.resolve()
    with pytest.raises(FolderError, match=r"TFPERF_ZYGOTES=.*missing: no such folder; name an "
                                          r"existing folder"):
        shared_zygotes.folder({FOLDER_ENV: str(tmp_path / "missing")})
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    with pytest.raises(FolderError, match=r"too long for a socket's path; name a folder of at "
                                          r"most 77 characters"):
        shared_zygotes.folder({FOLDER_ENV: str(deep)})


def test_one_name_per_python_and_environment() -> None:
    env = {"PATH": "/bin", "TF_CPP_MIN_LOG_LEVEL": "2"}
    name = shared_zygotes.name("/usr/bin/python3", env)
    assert name == shared_zygotes.name("/usr/bin/python3", dict(reversed(env.items())))
    assert len(name) == 24 and name.isalnum()
    assert name != shared_zygotes.name("/other/python3", env)
    assert name != shared_zygotes.name("/usr/bin/python3", {**env, "TF_CPP_MIN_LOG_LEVEL": "0"})
