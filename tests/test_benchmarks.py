"""The benchmarks still import: they run only behind their own make targets, so nothing else would notice."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("script", sorted(BENCHMARKS.glob("*.py")), ids=lambda path: path.stem)
def test_each_benchmark_imports_what_it_uses(script, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # as `python benchmarks/NAME.py` has it
    namespace = runpy.run_path(str(script), run_name="imported")  # defines everything, runs no main()
    assert callable(namespace.get("main")), f"{script.name} has no main()"


@pytest.mark.parametrize("flag", [None, "self_reference", "likelihood", "checklist"])
def test_the_shipped_calibrations_are_fitted_with_the_way_each_flag_asks(flag, monkeypatch):
    """`make calibrations` runs this script once per way: its judge options are made before any model loads."""
    import argparse

    from localjudge._judges.ways import WAYS

    monkeypatch.syspath_prepend(str(BENCHMARKS))
    script = runpy.run_path(str(BENCHMARKS / "fit_shipped_calibration.py"), run_name="imported")
    flags = {name: name == flag for name in ("self_reference", "likelihood", "checklist")}
    settings = script["base_settings"](argparse.Namespace(model="default", **flags))
    asked = settings.judging_way()
    assert (asked.self_reference, asked.pairs == "likelihood", asked.checklist) == (
        flags["self_reference"], flags["likelihood"], flags["checklist"],
    )  # fmt: skip
    assert (settings.way == WAYS["plain"]) == (flag is None)  # no flag: the plain way, not the question's default
