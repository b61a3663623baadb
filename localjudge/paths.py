"""Files on disk: the one cache directory localjudge keeps, and the sha256 that names and checks what is in it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["cache_dir", "file_sha256"]


def cache_dir() -> Path:
    """``$LOCALJUDGE_HOME``, else ``$XDG_CACHE_HOME/localjudge``, else ``~/.cache/localjudge``."""
    home = os.environ.get("LOCALJUDGE_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "localjudge"


def file_sha256(path: Path) -> str:
    """The file's sha256, read in blocks (a model file does not fit comfortably in memory twice)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()
