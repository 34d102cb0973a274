"""The real lane: small suites built with pytester and run for real (real workers, real TF)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import alembic.command  # noqa: F401
import keras  # noqa: F401
import pytest
import tensorflow  # noqa: F401

from tests.helpers.ab_sessions import AB, CASE, SessionRun
from tests.helpers.suites import REPO, SESSION_MARKER, MakeSuite, copy_suite
from tfperf.cases import catalog, catalog_cache
from tfperf.processes import shared_zygotes
from tfperf.workload import discover

# pytester's in-process runs restore sys.modules after each run, and TensorFlow cannot be
# imported twice in one process: importing it here keeps it out of those snapshots. Alembic
# (which the store opens in a session) too: imported again, its SQLAlchemy dialects would
# register their functions twice, with a warning each.


@pytest.fixture
def make_suite(pytester: pytest.Pytester) -> MakeSuite:
    """A copy of the real suite (ini, conftest, perf/) with the chosen workloads.

    Names are looked up in tests/workloads first, then in the project's workloads/.
    """

    def make(*workloads: str, perf_files: tuple[str, ...] = ("test_training.py",)
             ) -> pytest.Pytester:
        copy_suite(pytester.path, *workloads, perf_files=perf_files)
        return pytester

    return make


# pytest-xdist marks its worker processes by these variables, and pytest-benchmark turns itself
# off where it sees them. The suites a self-test starts are sessions of their own, which must
# record their benchmarks as a user's do.
for _name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
    os.environ.pop(_name, None)

# pytester points HOME at each test's own folder. The caches keyed by what they hold (uv's
# wheels, the workload catalog: tfperf.cases.catalog_cache) stay the machine's, as a user's do,
# so that each test does not fill them again; a test of a cache points it elsewhere.
os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))

os.environ[SESSION_MARKER[0]] = SESSION_MARKER[1]

# Every session a self-test starts, in this process (pytester's in-process runs) or as a process
# of its own (a bisection's steps, the other project's sessions), shares the zygotes that import
# TensorFlow, one per settings (tfperf.processes.shared_zygotes): importing again was most of the
# self-tests' CPU. One folder per pytest-xdist worker, as the SESSION_MARKER each carries
# differs. test_warm_start leaves it out of a session's environment to see its own zygote end.
_ZYGOTES = Path(tempfile.mkdtemp(prefix="tfperf-z-"))
os.environ[shared_zygotes.FOLDER_ENV] = str(_ZYGOTES)
# Also where the session's teardown does not run (a run pytest-xdist interrupts): its zygotes
# end once their folder is gone.
atexit.register(shutil.rmtree, _ZYGOTES, True)


@pytest.fixture(scope="session", autouse=True)
def _shared_zygotes_end_with_the_self_tests() -> Iterator[None]:
    yield
    shared_zygotes.end_all(_ZYGOTES)


@pytest.fixture(scope="session", autouse=True)
def _the_project_workloads_catalog_is_kept() -> None:
    """The project's workloads read here, where TensorFlow is imported already, and kept as a
    worker would keep them (tfperf.cases.catalog_cache): on a fresh clone the suites, plans
    and bisections this lane starts would otherwise each start a worker to read them until
    one had kept them (two plans at once spent 50 s so). Reading through a worker, cold:
    test_selection_and_options.py."""
    workloads = REPO / "workloads"
    if catalog_cache.load(workloads) is None:
        catalog_cache.keep(workloads, [catalog.info_json(i) for i in discover(workloads).values()])


@pytest.fixture(scope="session")
def a_a_session(tmp_path_factory: pytest.TempPathFactory) -> SessionRun:
    """One A/A session of tinycnn at the A/B tests' settings (numerics on), run once for the
    tests that only read what it kept: its verdict, costs, numerics, files and store. (A
    session fixture is one per pytest-xdist worker: its readers are marked long, so that they
    start first, one after another in one worker's share, and it runs once.)"""
    folder = tmp_path_factory.mktemp("a_a_session")
    copy_suite(folder, "tinycnn")
    # A floor of 45%, not 20%: what its readers check is the session's files, not how close a
    # call the verdict makes (that is the simulations' of test_ab_verdict.py). Beside the other
    # self-tests' workers an A/A's pairs spread 10-40%, and once 0.6-3.0 (early in a fresh
    # clone's run, at 923a34e): at 20% it ran to 64-96 pairs (155 s, the real lane's longest
    # item); at 30% it once stayed undecided at 32 pairs, [1.002, 1.316], and took 71 s and
    # 131 s in two whole runs on one day. 45% holds that interval. Alone it says `same` at 16.
    # Looks at 16 and 32 pairs, with a duet relayed every 2: 16 pairs are 8 duets (t on 7
    # degrees of freedom, with a quarter of the alpha), where at 8:96 and a relay every 4 its
    # first looks had 4 and every session ran to 32 pairs (32 more pairs of 1.9 s beside the
    # other self-tests, for the same 4 relays); at 32 pairs it has 16 duets. A third look at 64
    # is left for a machine busier still.
    # Turns of 0.25 s, not 0.5: the turns are the session's CPU (16 pairs of two 0.5 s turns
    # and their bursts were 25 of its 31 s alone, and 83 s of the whole run once); tinycnn's
    # millisecond steps still make a turn of dozens of rounds.
    return SessionRun.run(folder, *CASE, *AB, "--perf-ab-floor=45", "--perf-ab-pairs=16:64",
                          "--perf-ab-relay=2", "--perf-ab-yardstick-every=1",
                          "--perf-ab-turn=0.25")
