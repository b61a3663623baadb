"""Warnings that point at the caller's line, however deep in the package they are raised.

A fixed ``stacklevel`` is right for one path only: the same check is reached
from a factory, from its async twin (one frame deeper) and from the command
line. Python 3.12's ``skip_file_prefixes`` does this; until 3.10 is dropped,
the first frame outside the package is found here.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import FrameType

__all__ = ["warn_caller"]

_PACKAGE = str(Path(__file__).resolve().parent)


def warn_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn with ``message``, shown at the first line outside localjudge that led here."""
    frame: FrameType | None = sys._getframe(1)
    level = 2  # warn's own count: 1 is this function, 2 the one that called it
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)
