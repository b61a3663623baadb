"""``serve``: the judge model behind an OpenAI-compatible HTTP API."""

from __future__ import annotations

import socket
from typing import Optional

import click

from ..errors import MissingDependencyError, UsageError
from .commands.settings import JudgeSettings
from .options import model_options
from .output import handle_errors

__all__ = ["listen", "serve"]


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="0: any free port.")
@click.option(
    "--api-key",
    envvar="LOCALJUDGE_SERVER_KEY",
    help="Require this key (Authorization: Bearer KEY). Prefer $LOCALJUDGE_SERVER_KEY: a command line is visible in ps.",
)
@click.option(
    "--max-body-bytes", type=click.IntRange(min=1024), default=1 << 20, show_default=True, help="Largest request."
)
@click.option(
    "--max-tokens-limit",
    type=click.IntRange(min=1),
    default=4096,
    show_default=True,
    help="The most max_tokens a request may ask for.",
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds a connection may take to send a request's headers; a slower one is closed.",
)
@click.option(
    "--graceful-timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="On SIGTERM or Ctrl-C, seconds for requests in flight to finish; the rest get a 503 (a second signal: now).",
)
@model_options
@handle_errors
def serve(
    host: str,
    port: int,
    api_key: Optional[str],
    max_body_bytes: int,
    max_tokens_limit: int,
    header_timeout: float,
    graceful_timeout: float,
    settings: JudgeSettings,
) -> None:
    """Serve the judge model over an OpenAI-compatible API (/v1/chat/completions, /v1/models, /health).

    Every JSON answer is decoded under the request's schema and checked: it is
    schema-valid JSON, or an error in OpenAI's shape. Stop it with Ctrl-C or SIGTERM.

    \b
    localjudge serve                                  # the default model on 127.0.0.1:8000
    localjudge serve --model tiny --port 0            # any free port, printed
    LOCALJUDGE_SERVER_KEY=secret localjudge serve --host 0.0.0.0 --model judge.gguf
    """
    from .._serving import Limits, create_app, run
    from .commands.judging import judge_from_settings

    if settings.ensemble_specs:
        raise UsageError("serve serves one model (or a --fallback chain), not an --ensemble")
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("localjudge serve", exc.name or "uvicorn", extra="server") from None

    client = judge_from_settings(settings)
    model_id = settings.model_spec
    limits = Limits(max_body_bytes, max_tokens_limit, header_seconds=header_timeout)
    app = create_app(client, model_id=model_id, api_key=api_key, limits=limits)
    if not api_key and host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: serving on {host} without --api-key: anyone who can reach it can use the model", err=True)
    listening = listen(host, port)  # bound here, so --port 0 can say which port it got
    bound_host, bound_port = listening.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    click.echo(f"serving {model_id} on http://{shown}:{bound_port}/v1", err=True)
    run(app, listening, limits=limits, graceful_timeout=graceful_timeout)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: any free port); an address in use is a clear error."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listening = socket.socket(family, kind, proto)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address)
        listening.listen(128)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return listening
