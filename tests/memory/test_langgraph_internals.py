"""The one module using LangGraph's private API refuses versions it was not tested with, and the
ranges it accepts are those pyproject.toml installs."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from threadsage.memory.langgraph_internals import TESTED, UntestedLangGraph, refuse_untested

INSTALLED = {
    "langgraph-checkpoint": "4.3.2",
    "langgraph-checkpoint-postgres": "3.2.0",
    "langgraph-checkpoint-sqlite": "3.1.2",
}


def test_the_versions_it_was_tested_with_are_accepted() -> None:
    refuse_untested(INSTALLED.__getitem__)


@pytest.mark.parametrize(
    ("package", "found"),
    [
        ("langgraph-checkpoint-postgres", "3.3.0"),
        ("langgraph-checkpoint", "4.2.0"),
        ("langgraph-checkpoint-sqlite", "4.0.0"),
    ],
)
def test_another_version_is_refused_with_what_to_install(package: str, found: str) -> None:
    with pytest.raises(UntestedLangGraph) as refused:
        refuse_untested({**INSTALLED, package: found}.__getitem__)
    assert f"{package} {found} is installed" in str(refused.value)
    assert f"pip install '{package}{TESTED[package]}'" in str(refused.value)


def test_the_tested_ranges_are_those_pyproject_installs() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    ranges = {r.name: str(r.specifier) for r in map(Requirement, project["project"]["dependencies"])}
    assert {package: ranges.get(package) for package in TESTED} == {
        package: str(Requirement(f"{package}{tested}").specifier) for package, tested in TESTED.items()
    }
