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
