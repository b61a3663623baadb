"""Modules a reader can hold in mind: at most 450 lines each, or a named reason.

A module past the bound is split along its seams into modules with one job each, or listed in
``LONG`` with why it stays whole: a list that can only shrink, since a module that got short again
must leave it.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "localjudge"
MOST_LINES = 450

#: module (path under localjudge/) -> why it is still longer than the bound
LONG = {}


def long_modules() -> dict[str, int]:
    """Each module over the bound, with its line count."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MOST_LINES:
            found[path.relative_to(PACKAGE).as_posix()] = lines
    return found


def test_every_long_module_is_named_with_its_reason_and_none_got_short_unnoticed():
    found = long_modules()
    assert set(found) - set(LONG) == set(), f"over {MOST_LINES} lines: split them, or name why in LONG: {found}"
    assert set(LONG) - set(found) == set(), "no longer over the bound: take them out of LONG"


def test_the_check_reads_real_modules():
    assert len(list(PACKAGE.rglob("*.py"))) > 50
    assert "__init__.py" in {path.name for path in PACKAGE.rglob("*.py")}
