"""An async factory made from its sync twin: one signature, one body, two evaluators.

Each ``create_*`` factory is written once, for the sync evaluator. Its async
twin takes exactly the same options (an editor and a type checker read them
from the sync factory through :class:`~typing.ParamSpec`) and turns what the
sync one builds into the async evaluator over the same core: the two differ
only in how the client is called, which the evaluator, not the factory, does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import ParamSpec, TypeVar, get_type_hints

__all__ = ["async_twin"]

Options = ParamSpec("Options")
Sync = TypeVar("Sync")
Async = TypeVar("Async")


def async_twin(
    factory: Callable[Options, Sync], make_async: Callable[[Sync], Async], name: str
) -> Callable[Options, Async]:
    """``factory``'s async twin called ``name``: its options, its checks, and ``make_async`` of what it builds."""

    @functools.wraps(factory)
    def twin(*args: Options.args, **kwargs: Options.kwargs) -> Async:
        return make_async(factory(*args, **kwargs))

    returns = get_type_hints(make_async).get("return", inspect.Signature.empty)
    twin.__signature__ = inspect.signature(factory).replace(return_annotation=returns)  # type: ignore[attr-defined]
    twin.__name__ = twin.__qualname__ = name
    twin.__doc__ = f"The async twin of :func:`{factory.__name__}`: the same options, its client awaited."
    del twin.__wrapped__  # its signature is set above; help() shows the twin's name
    return twin
