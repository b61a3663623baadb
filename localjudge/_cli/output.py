"""What every command shares at its end: errors as one line on stderr and an exit code, JSON on stdout.

The library's errors name options by their keywords (a
:class:`~localjudge.errors.Message`); here they are shown as the flags the
user typed, read from the command's own options (and, for an option the
command lacks, another command's).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import click

from .._text import lone_surrogate, surrogate_message
from ..errors import LocalJudgeError, ModelNotFoundError, UsageError

__all__ = ["echo_json", "flag_names", "handle_errors", "not_utf8"]


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def _flags_of(command: click.Command, names: dict[str, str]) -> None:
    for param in command.params:
        if isinstance(param, click.Option) and param.name:
            flag = max(param.opts, key=len)  # the long form: --output, not -o
            keys = [param.name, *(opt.lstrip("-").replace("-", "_") for opt in param.opts)]
            for key in keys:  # "model_specs" and "model" both name --model
                names.setdefault(key, flag)


def flag_names(context: click.Context) -> dict[str, str]:
    """Option keyword -> flag: this command's flags first, then those of every other command."""
    names: dict[str, str] = {}
    _flags_of(context.command, names)
    root = context.find_root().command
    if isinstance(root, click.Group):
        for command in root.commands.values():
            for sub in [command, *(command.commands.values() if isinstance(command, click.Group) else ())]:
                _flags_of(sub, names)
    return names


def not_utf8(values: dict[str, Any], names: dict[str, str]) -> str | None:
    """Why a value given on the command line (or read through ``-`` or ``@FILE``) is not UTF-8 text, naming its flag.

    An argument that is not UTF-8 reaches Python as lone surrogates
    (``surrogateescape``); a path may hold them (a file's name is bytes),
    any text to judge or option may not. The judge's options are walked field by field.
    """
    for name, value in values.items():
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            found = not_utf8({field.name: getattr(value, field.name) for field in dataclasses.fields(value)}, names)
            if found is not None:
                return found
            continue
        where = lone_surrogate(value, name)
        if where is not None:
            flag = names.get(name, name)
            return surrogate_message((flag + where[0][len(name) :], where[1], where[2]))
    return None


def handle_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Library and OS errors become one line on stderr: exit 2 for misuse, 1 for runtime failures.

    A model path with nothing there is misuse too, though a fallback chain may move past it to its next model.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        context = click.get_current_context()
        debug = context.find_root().params.get("debug", False)
        refused = not_utf8(kwargs, flag_names(context))
        if refused is not None:
            click.echo(f"error: {refused}", err=True)
            sys.exit(2)
        try:
            return command(*args, **kwargs)
        except LocalJudgeError as exc:
            if debug:
                raise
            click.echo(f"error: {exc.render(flag_names(context))}", err=True)
            sys.exit(2 if isinstance(exc, (UsageError, ModelNotFoundError)) else 1)
        except OSError as exc:  # a file we could not read or write: what and why, not a traceback
            if debug:
                raise
            where = f" {exc.filename}" if exc.filename else ""
            click.echo(f"error:{where}: {exc.strerror or exc} (--debug shows the traceback)", err=True)
            sys.exit(1)

    return wrapper
