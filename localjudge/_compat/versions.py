"""The versions of each library whose internals localjudge relies on that the hook tests passed with.

Kept equal to the pins in ``pyproject.toml`` (a test compares them), so the
error a hook raises names the range an install would get.
"""

from __future__ import annotations

from importlib import metadata

from ..errors import IncompatibleDependencyError

__all__ = ["TESTED", "installed_version", "require"]

#: distribution name -> the versions tests/_compat passed on (oldest and newest tested: httpx 0.25.0 with httpcore
#: 0.18.0, and 0.29.0 with 1.0.9; uvicorn 0.24.0 and 0.55.0; jinja2 3.1.5 and 3.1.6; llama-cpp-python 0.3.36)
TESTED = {
    "httpx": ">=0.25,<0.30",
    "httpcore": ">=0.18,<1.1",
    "uvicorn": ">=0.24,<0.56",
    "jinja2": ">=3.1.5,<3.2",
    "llama-cpp-python": "==0.3.36",
}


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``unknown`` (a copy on the path that pip did not install)."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def require(distribution: str, present: bool, *, missing: str, needed_for: str) -> None:
    """Raise :class:`IncompatibleDependencyError` unless ``present``: the internal ``missing`` is not there."""
    if not present:
        raise IncompatibleDependencyError(
            distribution,
            installed_version(distribution),
            TESTED[distribution],
            missing=missing,
            needed_for=needed_for,
        )
