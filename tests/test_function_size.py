"""Functions a reader can hold in mind: at most 60 lines of code each (docstrings aside), or a named reason.

Complexity is ruff's rule (C90, 15, in pyproject); length is checked here, from the source with ``ast``.
A function past the bound is split, or listed in ``LONG`` with why it stays whole: a list that can only
shrink, since a function that got short again must leave it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "localjudge"
MOST_LINES = 60

#: function (path:name) -> why it stays longer than the bound
LONG = {
    "_view/app.py:create_app": "the page's routes, nested to close over the viewer; each route is small",
    "_serving/app.py:create_app": "the server's routes, nested to close over the client; each route is small",
    "_runtimes/template_sandbox.py:sandboxed_environment": "Jinja's overrides, nested to close over the budget",
    "_cli/commands/runs.py:plan_batch": "to split: a batch's options checked, then its judge, rows and results planned",
    "_cli/commands/runs.py:plan_calibration": "to split: as plan_batch, for a calibration",
    "_clients/remote_plan.py:__init__": "to split: each setting checked where it is stored",
    "_cli/trust_text.py:describe_check": "to split: one check set's figures, as a table's columns",
    "_cli/trust.py:check_judge": "to split: the command's options read into one run",
    "_runtimes/llamacpp.py:__init__": "to split: the model loaded, then each setting checked against it",
}


def code_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Its lines, less its docstring's."""
    lines = function.end_lineno - function.lineno + 1  # type: ignore[operator]
    first = function.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1  # type: ignore[operator]
    return lines


def long_functions() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and code_lines(node) > MOST_LINES:
                found[f"{path.relative_to(PACKAGE).as_posix()}:{node.name}"] = code_lines(node)
    return found


def test_every_long_function_is_named_with_its_reason_and_none_got_short_unnoticed():
    found = long_functions()
    assert set(found) - set(LONG) == set(), f"over {MOST_LINES} lines: split them, or name why in LONG"
    assert set(LONG) - set(found) == set(), "no longer long: take them out of LONG"


def test_the_count_counts_code_not_the_docstring():
    source = 'def f():\n    """Doc.\n\n    More.\n    """\n    return 1\n'
    (function,) = ast.parse(source).body
    assert isinstance(function, ast.FunctionDef) and code_lines(function) == 2
