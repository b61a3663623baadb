"""``view`` and ``report``: a run's results as a page, served on this machine or written as one HTML file."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any, Optional

import click

from ..errors import MissingDependencyError
from .output import handle_errors
from .serve import listen

__all__ = ["report", "view"]

RESULTS = click.argument(
    "results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
LABELS = click.option(
    "--labels",
    "labels_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The data file that was judged (its label column and its rows, shown with each verdict), or ids and labels.",
)
LABEL_FIELD = click.option("--label-field", default="label", show_default=True, help="The labels' column.")
ID_FIELD = click.option("--id-field", default="id", show_default=True, help="The labels' id column.")


def _runs(
    results: tuple[Path, ...], labels_file: Optional[Path], label_field: str, id_field: str, background: bool = False
) -> list[Any]:
    from .._view.sources import open_runs, read_data

    labels, values = read_data(labels_file, label_field=label_field, id_field=id_field) if labels_file else ({}, {})
    runs = open_runs(results, labels, values, background=background)
    for index in runs:
        if index.invalid_lines:
            click.echo(
                f"warning: {index.invalid_lines} lines of {index.path} are not records; they are left out", err=True
            )
    return runs


@click.command()
@RESULTS
@LABELS
@LABEL_FIELD
@ID_FIELD
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0: any free port.")
@click.option(
    "--token",
    envvar="LOCALJUDGE_VIEW_TOKEN",
    help="Require this token on every request (default off loopback: a new one, printed in the address). "
    "Prefer $LOCALJUDGE_VIEW_TOKEN: a command line is visible in ps.",
)
@handle_errors
def view(
    results: tuple[Path, ...],
    labels_file: Optional[Path],
    label_field: str,
    id_field: str,
    host: str,
    port: int,
    token: Optional[str],
) -> None:
    """A page over results files: the run's figures, its rows (filtered, sorted, paged), one row, two runs compared.

    It follows a file a run is still writing. It listens on 127.0.0.1 unless
    --host says otherwise; on any other address every request needs a token.
    Stop it with Ctrl-C.

    \b
    localjudge view data.results.jsonl --labels data.jsonl
    localjudge view old.results.jsonl new.results.jsonl --labels data.jsonl --port 0
    localjudge view runs/answers.results.jsonl --host 0.0.0.0
    """
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise MissingDependencyError("localjudge view", exc.name or "uvicorn", extra="server") from None
    from .._view.app import LOOPBACK, Viewer, create_app

    runs = _runs(results, labels_file, label_field, id_field, background=True)
    loopback = host in LOOPBACK
    if not loopback and not token:
        token = secrets.token_urlsafe(24)
    listening = listen(host, port)  # bound here, so --port 0 can say which port it got
    bound_host, bound_port = listening.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    address = f"http://{shown}:{bound_port}/" + (f"?token={token}" if token else "")
    app = create_app(Viewer(runs), token=token, allowed_hosts=LOOPBACK if loopback else None)
    click.echo(f"viewing {len(runs)} run{'s' if len(runs) > 1 else ''} on {address}", err=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[listening])


@click.command()
@RESULTS
@LABELS
@LABEL_FIELD
@ID_FIELD
@click.option(
    "--output",
    "-o",
    "target",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The HTML file to write.",
)
@click.option(
    "--rows",
    "row_limit",
    type=click.IntRange(min=1),
    default=20000,
    show_default=True,
    help="Rows of each run the report holds whole, to browse (its figures count them all).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing file at --output that localjudge did not write.")
@handle_errors
def report(
    results: tuple[Path, ...],
    labels_file: Optional[Path],
    label_field: str,
    id_field: str,
    target: Path,
    row_limit: int,
    overwrite: bool,
) -> None:
    """The page over results files as one self-contained HTML file: no network, nothing to install to open it.

    \b
    localjudge report data.results.jsonl --labels data.jsonl -o report.html
    localjudge report old.results.jsonl new.results.jsonl --labels data.jsonl -o compared.html
    """
    from .._output_plan import Input, Output, check_outputs
    from .._view.report import is_report, write_report

    given = [Input("the results file", path) for path in results]
    if labels_file is not None:
        given.append(Input("{labels_file}", labels_file))
    check_outputs(given, [Output("{target}", target, "a report", is_report)], overwrite=overwrite)
    runs = _runs(results, labels_file, label_field, id_field)
    for index in runs:
        if index.count() > row_limit:
            click.echo(
                f"warning: {index.path} has {index.count()} rows; the report holds the first {row_limit} whole "
                "(its figures count them all; --rows for more); localjudge view pages through any number",
                err=True,
            )
    click.echo(f"written to {write_report(runs, target, limit=row_limit)}", err=True)
