"""The tested ranges are the pins, and a missing internal is an error that names the library, its version and the range."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from localjudge._compat.versions import TESTED, installed_version, require
from localjudge.errors import IncompatibleDependencyError, MissingDependencyError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def pins() -> dict[str, set[str]]:
    """Every specifier pyproject.toml gives each distribution, in the dependencies and the extras."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    requirements = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    found: dict[str, set[str]] = {}
    for requirement in requirements:
        name, specifier = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^]]*\])?(.*)", requirement).groups()  # type: ignore[union-attr]
        found.setdefault(name.lower(), set()).add(specifier.split(";")[0].strip())
    return found


@pytest.mark.parametrize("distribution", sorted(TESTED))
def test_each_library_is_pinned_to_the_range_its_hooks_were_tested_with(distribution):
    assert pins()[distribution] == {TESTED[distribution]}


def test_a_missing_internal_names_the_library_the_version_found_and_the_range_tested():
    require("jinja2", True, missing="anything", needed_for="nothing")  # present: no error
    with pytest.raises(IncompatibleDependencyError) as caught:
        require("jinja2", False, missing="Namespace.__attrs", needed_for="a chat template's budget")
    message = str(caught.value)
    assert f"jinja2 {installed_version('jinja2')} is installed" in message
    assert "Namespace.__attrs" in message and "a chat template's budget" in message
    assert f"tested with jinja2{TESTED['jinja2']}" in message
    assert f"pip install 'jinja2{TESTED['jinja2']}'" in message
    assert isinstance(caught.value, MissingDependencyError) and isinstance(caught.value, ImportError)
    assert (caught.value.package, caught.value.found, caught.value.tested) == (
        "jinja2",
        installed_version("jinja2"),
        TESTED["jinja2"],
    )


def test_a_library_pip_did_not_install_has_an_unknown_version():
    assert installed_version("no-such-distribution-here") == "unknown"
