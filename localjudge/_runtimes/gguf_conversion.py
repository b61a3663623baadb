"""A GGUF file as a transformers model directory, converted once and kept in the cache.

transformers reads a GGUF (``from_pretrained(gguf_file=...)``) into float32
weights but keeps the model marked as quantised, and then refuses
``save_pretrained``; so the converter builds a plain model from the same
config, loads the dequantised state dict into it and saves that, with the
tokenizer. The result lives under ``<cache>/converted/<sha256 of the GGUF>``,
so a changed file is converted again and an unchanged one never is.

Converted directories are cache files: a manifest records every file's
sha256, size and mtime. A load checks sizes and mtimes and hashes only a file
whose stamp changed (hashing 4 bytes per parameter on every load would double
the load time of a large model); ``verify`` hashes everything, as
``localjudge doctor`` does. A directory that fails is converted again, never
loaded.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from .._paths import cache_dir, file_sha256
from ..errors import MissingDependencyError, ModelLoadError
from .gguf import check_gguf_file

__all__ = ["MANIFEST", "converted_dir", "converted_location", "verify"]

logger = logging.getLogger(__name__)

MANIFEST = "localjudge-conversion.json"
FORMAT = 2
STALE_BUILD_SECONDS = 6 * 3600  # a half-built directory this old was left by a killed conversion
_lock = threading.Lock()


def converted_location(gguf_path: str | os.PathLike[str]) -> tuple[Path, str]:
    """Where the conversion of this GGUF lives (whether or not it exists yet), and the file's sha256."""
    source = check_gguf_file(gguf_path)
    sha256 = file_sha256(source)
    return cache_dir() / "converted" / sha256[:32], sha256


def converted_dir(gguf_path: str | os.PathLike[str]) -> Path:
    """The transformers directory for ``gguf_path``, converting it on first use."""
    target, sha256 = converted_location(gguf_path)
    with _lock:
        if _intact(target, sha256, full=False):
            return target
        if target.exists():
            logger.warning("The converted copy of %s in %s is damaged; converting again", gguf_path, target)
            shutil.rmtree(target, ignore_errors=True)
        _convert(Path(gguf_path).expanduser(), sha256, target)
    return target


def verify(gguf_path: str | os.PathLike[str]) -> tuple[Path, bool | None]:
    """Where this GGUF's conversion lives, and whether every file matches its manifest (None: never converted)."""
    target, sha256 = converted_location(gguf_path)
    return target, (_intact(target, sha256, full=True) if target.exists() else None)


def _intact(target: Path, sha256: str, *, full: bool) -> bool:
    """Whether ``target`` holds a finished conversion of this GGUF whose files match the manifest."""
    try:
        manifest = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("source_sha256") != sha256:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return False
    if {p.name for p in target.iterdir() if p.name != MANIFEST} != set(files):
        return False
    return all(_file_matches(target / name, entry, full=full) for name, entry in files.items())


def _file_matches(path: Path, entry: object, *, full: bool) -> bool:
    if not isinstance(entry, dict):
        return False
    try:
        stat = path.stat()
    except OSError:
        return False
    if stat.st_size != entry.get("size"):
        return False
    if not full and stat.st_mtime_ns == entry.get("mtime_ns"):
        return True
    return file_sha256(path) == entry.get("sha256")


def _convert(source: Path, sha256: str, target: Path) -> None:
    try:
        import gguf  # noqa: F401  (transformers reads GGUF through it)
        import torch
        import transformers
    except ImportError as exc:
        raise MissingDependencyError("Loading a GGUF with transformers", "gguf", "transformers") from exc
    logger.warning("Converting %s for transformers, once (a few minutes for a small model)", source)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_builds(target.parent)
        building = Path(tempfile.mkdtemp(dir=target.parent, prefix=".building-"))
    except OSError as exc:
        raise ModelLoadError(
            f"Cannot write the converted model under {target.parent}: {exc}", path=str(source)
        ) from exc
    try:
        options = {"gguf_file": source.name, "local_files_only": True}
        try:
            config = transformers.AutoConfig.from_pretrained(source.parent, **options)
            tokenizer = transformers.AutoTokenizer.from_pretrained(source.parent, **options)
            quantised = transformers.AutoModelForCausalLM.from_pretrained(source.parent, dtype=torch.float32, **options)
            plain = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
            plain.load_state_dict(quantised.state_dict(), strict=True)
        except Exception as exc:  # transformers raises ValueError/KeyError/RuntimeError for what it cannot read
            raise ModelLoadError(
                f"transformers could not convert {source}: {type(exc).__name__}: {exc}. "
                "Use the llama.cpp engine for this file (drop the hf: prefix).",
                path=str(source),
                backend="transformers",
            ) from exc
        del quantised
        try:
            plain.save_pretrained(building)
            tokenizer.save_pretrained(building)
            _write_manifest(building, source, sha256, transformers.__version__, torch.__version__)
            os.rename(building, target)
        except OSError as exc:
            if not (target.exists() and _intact(target, sha256, full=True)):  # another process may have won
                raise ModelLoadError(f"Cannot write the converted model to {target}: {exc}", path=str(source)) from exc
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(building)


def _write_manifest(directory: Path, source: Path, sha256: str, *versions: str) -> None:
    files = {}
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        stat = path.stat()
        files[path.name] = {"sha256": file_sha256(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    manifest = {"format": FORMAT, "source": str(source), "source_sha256": sha256, "files": files}
    manifest["built_with"] = {"transformers": versions[0], "torch": versions[1]}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _remove_stale_builds(parent: Path) -> None:
    for leftover in parent.glob(".building-*"):
        with contextlib.suppress(OSError):
            if time.time() - leftover.stat().st_mtime > STALE_BUILD_SECONDS:
                shutil.rmtree(leftover)
