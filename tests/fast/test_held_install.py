"""Sides that differ only in what the user names: what a spec names, what is held,
which held packages a resolver's error blames, and environments keyed by all of it. (The
installs themselves, through uv and the package index: tests/real/test_ab.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tfperf.processes import environments, held_install


def test_everything_but_what_the_spec_names_and_the_harness_is_held() -> None:
    reference = {"tensorflow-cpu": "2.21.0", "keras": "3.15.1", "numpy": "2.4.6",
                 "tfperf": "0.1", "ml-dtypes": "0.5.4"}
    assert held_install.constraints(reference, ["tensorflow-cpu==2.22.0rc0", "Keras>=3"]) == {
        "ml-dtypes": "0.5.4", "numpy": "2.4.6"}
    wheel = "/tmp/dist/tensorflow_cpu-2.22.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    assert "tensorflow-cpu" not in held_install.constraints(reference, [wheel])


def test_a_resolver_error_releases_the_held_packages_it_names_and_no_others() -> None:
    # uv's words (0.13) when a held version cannot be had, as its log kept them.
    said = ("error: No solution found when resolving dependencies\n"
            "  cause: Because pytest==8.3.5 depends on pluggy>=1.5,<2 and pluggy==1.0.0, we can "
            "conclude that pytest==8.3.5 cannot be used.\n"
            "         And because you require pytest==8.3.5, we can conclude that your "
            "requirements are unsatisfiable.\n")
    held = {"pluggy": "1.0.0", "iniconfig": "2.0.0", "py": "1.11.0", "ml-dtypes": "0.5.4"}
    assert held_install._mentioned(said, held) == {"pluggy"}
    assert held_install._mentioned("because ml_dtypes==0.6.0 is required", held) == {"ml-dtypes"}


def test_an_environment_is_keyed_by_every_part_of_its_spec_and_what_it_holds() -> None:
    names = {environments._folder_name(spec, "requirement", held) for spec, held in [
        ("tensorflow-cpu==2.22.0rc0", {"keras": "3.15.1"}),
        ("tensorflow-cpu==2.22.0rc0", {"keras": "3.16.0"}),
        ("tensorflow-cpu==2.22.0rc0", None),
        ("tensorflow-cpu==2.22.0rc0 keras==3.15.1", {"keras": "3.15.1"})]}
    assert len(names) == 4


@pytest.mark.parametrize(("spec", "said"), [
    ("tensorflow-cpu==2.22.0rc0 keras==3.15.1", None),
    ("current keras==3.15.1", "more requirements go with a requirement or a wheel, not with "
                              "'current'"),
    ("tensorflow-cpu==2.22.0rc0 keras>>3", "'keras>>3' is not a pip requirement")])
def test_more_requirements_may_follow_a_requirement(spec: str, said: str | None) -> None:
    if said is None:
        assert environments.kind(spec) == "requirement"
        return
    with pytest.raises(environments.SpecError, match=said):
        environments.kind(spec)


def test_a_nightly_beside_tensorflow_replaces_the_release_it_ships_the_package_of() -> None:
    # keras-nightly's files are keras's, and TensorFlow 2.21 requires keras: both would be
    # installed, one over the other. The environment removes the release and writes the nightly
    # again, and is named apart from one built before it did.
    spec = "tensorflow-cpu==2.21.0 keras-nightly==3.16.0.dev2026102704"
    assert held_install.nightlies(spec, "requirement") == [
        ("keras-nightly==3.16.0.dev2026102704", "keras")]
    assert held_install.nightlies("tf-nightly==2.22.0.dev20260615", "requirement") == []
    assert held_install.nightlies("tensorflow-cpu==2.21.0 keras==3.15.1", "requirement") == []
    calls: list[list[str]] = []

    def run(command: list[str]) -> tuple[int, str]:
        calls.append(command)
        return 0, ""

    assert held_install.nightly_over_release(run, "uv", Path("/env/bin/python"),
                                              spec, "requirement") == (0, "")
    assert [c[1:3] for c in calls] == [["pip", "show"], ["pip", "uninstall"], ["pip", "install"]]
    assert calls[1][-1] == "keras" and calls[2][-3:] == ["--python", "/env/bin/python",
                                                         "keras-nightly==3.16.0.dev2026102704"]
    assert "--no-deps" in calls[2] and "--reinstall" in calls[2]
