"""A GGUF file as a transformers model directory, converted once and kept in the cache.

transformers reads a GGUF (``from_pretrained(gguf_file=...)``) into float32
weights but keeps the model marked as quantised, and then refuses
``save_pretrained``; so the converter builds a plain model from the same
config, loads the dequantised state dict into it and saves that, with the
tokenizer. The result lives under ``<cache>/converted/<sha256 of the GGUF>``,
so a changed file is converted again and an unchanged one never is.

Converted directories are cache files, hence untrusted: a manifest records
the sha256 of every file, and a directory whose files do not match it is
converted again rather than loaded.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

from ..errors import MissingDependencyError, ModelLoadError
from ..paths import cache_dir, file_sha256
from .gguf import check_gguf_file

__all__ = ["MANIFEST", "converted_dir"]

logger = logging.getLogger(__name__)

MANIFEST = "localjudge-conversion.json"
FORMAT = 1
_lock = threading.Lock()


def converted_dir(gguf_path: str | os.PathLike[str]) -> Path:
    """The transformers directory for ``gguf_path``, converting it on first use."""
    source = check_gguf_file(gguf_path)
    sha256 = file_sha256(source)
    target = cache_dir() / "converted" / sha256[:32]
    with _lock:
        if _intact(target, sha256):
            return target
        if target.exists():
            logger.warning("The converted copy of %s in %s is damaged; converting again", source, target)
            shutil.rmtree(target, ignore_errors=True)
        _convert(source, sha256, target)
    return target


def _intact(target: Path, sha256: str) -> bool:
    """Whether ``target`` holds a finished conversion of this GGUF whose files all match the manifest."""
    try:
        manifest = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("source_sha256") != sha256:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return False
    present = {p.name for p in target.iterdir() if p.name != MANIFEST}
    if present != set(files):
        return False
    return all(file_sha256(target / name) == digest for name, digest in files.items())


def _convert(source: Path, sha256: str, target: Path) -> None:
    try:
        import gguf  # noqa: F401  (transformers reads GGUF through it)
        import torch
        import transformers
    except ImportError as exc:
        raise MissingDependencyError("Loading a GGUF with transformers", "gguf", "transformers") from exc
    logger.warning("Converting %s for transformers, once (a few minutes for a small model)", source)
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(dir=target.parent, prefix=".building-"))
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
        plain.save_pretrained(building)
        tokenizer.save_pretrained(building)
        files = {p.name: file_sha256(p) for p in sorted(building.iterdir()) if p.is_file()}
        manifest = {"format": FORMAT, "source": str(source), "source_sha256": sha256, "files": files}
        manifest.update(transformers=transformers.__version__, torch=torch.__version__)
        (building / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        try:
            os.rename(building, target)
        except OSError:  # another process finished first: keep its copy if it is sound
            if not _intact(target, sha256):
                raise
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(building)
