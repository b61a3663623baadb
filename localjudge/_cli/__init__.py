"""The ``localjudge`` command: each command parses its options, calls the library, and prints.

One module per command group; the options several commands share are
declared once in :mod:`.options`, and :mod:`.output` turns the library's
errors into a line on stderr and an exit code. Nothing below this package
imports click or names a flag.
"""

from __future__ import annotations

import warnings

import click

from .batch import batch
from .calibrate import calibrate
from .choose import choose
from .info import doctor, evaluators, grammar, models
from .judging import compare, score
from .serve import serve
from .trust import agreement, check_judge
from .view import report, view

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.version_option(package_name="localjudge")
def main(debug: bool) -> None:
    """An offline LLM-as-a-judge.

    \b
    localjudge score --inputs "What is 2+2?" --outputs 4
    localjudge batch data.jsonl -j 4
    localjudge compare --output-a "Paris." --output-b "Lyon."
    localjudge COMMAND --help
    """
    if not debug:  # the library's warnings as one line each, as the commands' notes are
        warnings.showwarning = _warning_line


def _warning_line(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
    click.echo(f"warning: {message}", err=True)


for _command in (
    compare,
    score,
    batch,
    calibrate,
    agreement,
    choose,
    check_judge,
    serve,
    view,
    report,
    grammar,
    evaluators,
    models,
    doctor,
):
    main.add_command(_command)
