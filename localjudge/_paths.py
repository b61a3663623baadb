"""Files on disk: the one cache directory localjudge keeps, and the sha256 that names and checks what is in it."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

__all__ = ["cache_dir", "file_sha256", "model_identity"]


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


def model_identity(path: Path) -> str:
    """What names a model's weights: a file's sha256, or for a directory the sha256 of its files' names, sizes and times.

    Hashed once per process for each file as it is (path, size, modification time).
    """
    path = Path(path).resolve()
    if path.is_file():
        stat = path.stat()
        return _hashed(str(path), stat.st_size, stat.st_mtime_ns)
    listing = sorted(
        f"{entry.relative_to(path)}|{entry.stat().st_size}|{entry.stat().st_mtime_ns}"
        for entry in path.rglob("*")
        if entry.is_file()
    )
    return hashlib.sha256("\n".join(listing).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=64)
def _hashed(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(Path(path))
