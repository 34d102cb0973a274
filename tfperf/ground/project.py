"""Where a project keeps the suite's tests, its shared baselines and its results: today's layout
(perf/, baselines/, .perf-results/) unless the project's pyproject.toml (`[tool.tfperf]`) or
pytest.ini (`[tfperf]`) says otherwise. The plugin and every command read it here, so that
all of them agree where the baselines are."""

from __future__ import annotations

import configparser
import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULTS = {"tests": "perf", "baselines": "baselines", "results": ".perf-results"}
# What a command's help says of the defaults.
LAYOUT = ("pyproject.toml [tool.tfperf] or pytest.ini [tfperf] tests, baselines, results; "
          "else perf/, baselines/, .perf-results/")


class ProjectError(ValueError):
    """A layout setting that cannot be used; its message is one line."""


@dataclass(frozen=True)
class Project:
    root: Path
    tests: Path  # the folder `pytest` runs for the suite (tfperf-refresh's sessions)
    baselines: Path  # the shared baselines: pytest-benchmark's storage and baselines/gate.toml
    results: Path  # generated: history, reports, logs, caches, A/B session files
    declared: bool = False  # the project names its layout (else today's defaults)

    @property
    def history(self) -> Path:
        return self.results / "history"

    @property
    def reports(self) -> Path:
        return self.results / "reports"


def _declared(root: Path) -> tuple[dict[str, str], str] | None:
    """The settings and where they were found, if the folder declares any."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            table = tomllib.loads(pyproject.read_text()).get("tool", {}).get("tfperf")
        except tomllib.TOMLDecodeError as error:
            raise ProjectError(f"{pyproject}: not TOML ({error})") from None
        if table is not None:
            return {str(k): v for k, v in table.items()}, f"{pyproject} [tool.tfperf]"
    ini = root / "pytest.ini"
    if ini.is_file():
        parser = configparser.ConfigParser()
        parser.read(ini)
        if parser.has_section("tfperf"):
            return dict(parser.items("tfperf")), f"{ini} [tfperf]"
    return None


def load(root: Path) -> Project:
    """The layout of the project whose root is `root` (pytest's rootdir)."""
    found = _declared(root)
    settings, where = found if found else ({}, "")
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise ProjectError(f"{where}: no setting {unknown[0]!r}; valid: {', '.join(DEFAULTS)}")
    folders = {}
    for key, default in DEFAULTS.items():
        value = settings.get(key, default)
        if not isinstance(value, str) or not value.strip():
            raise ProjectError(f"{where}: {key} = {value!r} is not a folder path")
        folders[key] = root / value
    return Project(root, folders["tests"], folders["baselines"], folders["results"],
                   found is not None)


def find(start: Path | None = None) -> Project:
    """The layout of the project the command runs in: the nearest folder, from `start` (the
    current one) up, that has a pyproject.toml or a pytest.ini; else `start` itself."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() or (folder / "pytest.ini").is_file():
            return load(folder)
    return load(here)

