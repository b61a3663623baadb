"""GGUF files as untrusted input: refuse what llama.cpp (or a converter) should not be handed."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from ..errors import ModelLoadError, ModelNotFoundError

__all__ = ["GGUF_MAGIC", "check_gguf_file"]

GGUF_MAGIC = b"GGUF"
_MIN_GGUF_BYTES = 1024


def check_gguf_file(path: str | os.PathLike[str]) -> Path:
    """Refuse a file llama.cpp should not be handed: missing, not GGUF, or clearly cut short.

    llama.cpp checks tensor bounds itself; this catches the cases that reach
    it as confusing messages (or worse) before it touches the file.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelNotFoundError(
            f"Model file not found: {p} (a card name works too: localjudge models list)", path=str(p)
        )
    if not p.is_file():
        raise ModelLoadError(f"Model path is not a file: {p}", path=str(p))
    size = p.stat().st_size
    try:
        with p.open("rb") as fh:
            header = fh.read(24)
    except OSError as exc:
        raise ModelLoadError(f"Cannot read model file {p}: {exc}", path=str(p)) from exc
    if header[:4] != GGUF_MAGIC:
        raise ModelLoadError(
            f"{p} is not a GGUF file (it starts with {header[:4]!r}, not b'GGUF'). "
            "Convert the model to GGUF, or use a transformers directory with the hf: spec.",
            path=str(p),
        )
    if size < _MIN_GGUF_BYTES or len(header) < 24:
        raise ModelLoadError(f"{p} is truncated ({size} bytes): download it again", path=str(p))
    version, n_tensors, n_kv = struct.unpack("<IQQ", header[4:24])
    if version not in (2, 3) or n_tensors == 0 or n_tensors > 1_000_000 or n_kv > 1_000_000:
        raise ModelLoadError(
            f"{p} has an unreadable GGUF header (version {version}, {n_tensors} tensors, {n_kv} keys)",
            path=str(p),
        )
    return p
