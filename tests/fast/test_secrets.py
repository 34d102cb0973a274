"""What the code under test is never handed, in pure Python: a worker's environment
less the secrets, and a logged line less its URLs' passwords. End to end, with a planted
password through a real bisection and PostgreSQL: tests/real/test_secrets.py."""

from __future__ import annotations

from tfperf.processes.runtime import Runtime, without_secrets
from tfperf.storage.database import without_passwords

SESSION = {"PATH": "/usr/bin", "HOME": "/home/ci", "TFPERF_STORE_URL": "postgresql://u:pw@db/p",
           "PGPASSWORD": "pw", "GH_TOKEN": "ghs_x", "GITHUB_TOKEN": "ghs_y",
           "ACTIONS_RUNTIME_TOKEN": "z", "HF_TOKEN": "hf", "db_password": "p", "APP_SECRET": "s",
           "TOKENIZERS_PARALLELISM": "false", "CUDA_VISIBLE_DEVICES": "0"}


def test_a_worker_gets_the_session_s_environment_less_its_secrets() -> None:
    assert without_secrets(SESSION) == {"PATH": "/usr/bin", "HOME": "/home/ci",
                                        "TOKENIZERS_PARALLELISM": "false",
                                        "CUDA_VISIBLE_DEVICES": "0"}
    # A variable the user names for a side's workers reaches them, whatever its name.
    side = Runtime(env=(("HF_TOKEN", "given"), ("TF_XLA_FLAGS", "--x")))
    environ = side.environ(SESSION)
    assert environ["HF_TOKEN"] == "given" and environ["TF_XLA_FLAGS"] == "--x"
    assert "TFPERF_STORE_URL" not in environ and "GH_TOKEN" not in environ


def test_a_logged_line_shows_no_url_s_password() -> None:
    line = ("$ python -m pytest --perf-store=postgresql://bob:s3cr%40t@db:5432/perf "
            "--perf-workloads=/w sqlite:////tmp/store.sqlite3 https://x-access-token:t0k@h/r.git")
    assert without_passwords(line) == (
        "$ python -m pytest --perf-store=postgresql://bob:***@db:5432/perf "
        "--perf-workloads=/w sqlite:////tmp/store.sqlite3 https://x-access-token:***@h/r.git")
    assert without_passwords("postgresql://bob@db/perf") == "postgresql://bob@db/perf"


def test_an_installer_keeps_a_private_index_s_credentials() -> None:
    kept = without_secrets({**SESSION, "UV_INDEX_PRIVATE_PASSWORD": "p"}, suffixes=False)
    assert kept["UV_INDEX_PRIVATE_PASSWORD"] == "p" and kept["HF_TOKEN"] == "hf"
    assert "TFPERF_STORE_URL" not in kept and "GH_TOKEN" not in kept
