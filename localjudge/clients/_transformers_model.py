"""A transformers model directory as a ``LogitsBackend`` for :mod:`localjudge.decoding.loop`.

The decode loop needs four things from a backend: the vocabulary as bytes per
token id, prompt tokenization that parses special tokens only in template
markup, and ``start``/``extend`` returning the logits after the last token.
Here ``extend`` reuses a KV cache, so each step costs one token, not the whole
sequence. Model directories are untrusted input: nothing is fetched from a
hub (``local_files_only``) and no code from the directory runs
(``trust_remote_code=False``).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..decoding.guide import TokenVocabulary
from ..errors import ContextOverflowError, MissingDependencyError, ModelError, ModelLoadError
from .local import TokenizedModel

__all__ = ["TransformersModel", "check_model_dir", "import_transformers", "token_pieces"]

BACKEND = "transformers"
DEFAULT_N_CTX = 4096
_vocab_cache: dict[str, TokenVocabulary] = {}
_vocab_lock = threading.Lock()


def import_transformers():
    """``(torch, transformers)``, or the error that names the extra to install."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise MissingDependencyError("The transformers backend", "transformers", "transformers") from exc
    return torch, transformers


def check_model_dir(path: str | os.PathLike[str]) -> Path:
    """Refuse what is not a saved transformers model before transformers turns it into a hub lookup."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelLoadError(f"Model directory not found: {p}", path=str(p), backend=BACKEND)
    if not p.is_dir():
        raise ModelLoadError(
            f"{p} is not a directory: the transformers backend loads a save_pretrained directory "
            "(a .gguf file goes to the llama.cpp backend)",
            path=str(p),
        )
    if not (p / "config.json").is_file():
        raise ModelLoadError(
            f"{p} has no config.json: it is not a transformers model directory", path=str(p), backend=BACKEND
        )
    return p


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet reversed: the printable stand-in character -> the byte it encodes."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = list(printable)
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def _decoder_kind(tokenizer: Any) -> str:
    """Which token spelling: "byte_level" (GPT-2 style ``Ġ``) or "sentencepiece" (``▁`` and ``<0xNN>`` byte fallback)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return "sentencepiece"
    decoder = json.loads(backend.to_str()).get("decoder") or {}
    return "byte_level" if "ByteLevel" in json.dumps(decoder) else "sentencepiece"


def token_pieces(tokenizer: Any, n_vocab: int) -> list[bytes | None]:
    """The bytes each token id writes; None for special tokens and ids the tokenizer does not know.

    Added non-special tokens are stored as plain text, not in the model's
    byte alphabet, so they are read as UTF-8.
    """
    kind = _decoder_kind(tokenizer)
    byte_of = _byte_decoder() if kind == "byte_level" else {}
    added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    size = min(n_vocab, len(tokenizer))
    names = tokenizer.convert_ids_to_tokens(list(range(size)))
    pieces: list[bytes | None] = [None] * n_vocab
    for token_id, name in enumerate(names):
        entry = added.get(token_id)
        if token_id in special or name is None or (entry is not None and entry.special):
            continue
        if entry is not None:
            piece: bytes | None = entry.content.encode("utf-8")
        elif kind == "byte_level":
            try:
                piece = bytes(byte_of[c] for c in name)
            except KeyError:
                piece = None
        elif len(name) == 6 and name.startswith("<0x") and name.endswith(">"):
            piece = bytes([int(name[3:5], 16)])
        else:
            piece = name.replace("\u2581", " ").encode("utf-8")
        pieces[token_id] = piece or None
    return pieces


def _ids(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]


def _dir_key(path: Path) -> str:
    stamps = [f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(path.iterdir()) if f.is_file()]
    return hashlib.sha1("|".join([str(path.resolve()), *stamps]).encode()).hexdigest()


class TransformersModel(TokenizedModel):
    """One transformers causal LM with one KV cache. Not thread-safe: hold ``lock`` around every use."""

    backend = BACKEND

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        n_ctx: int | None = None,
        torch_dtype: Any = "float32",
        threads: int | None = None,
    ) -> None:
        self.path = check_model_dir(path)
        torch, transformers = import_transformers()
        self._torch = torch
        self.lock = threading.Lock()
        if threads:
            torch.set_num_threads(threads)
        self.threads = torch.get_num_threads()
        dtype = getattr(torch, torch_dtype) if isinstance(torch_dtype, str) else torch_dtype
        if not isinstance(dtype, torch.dtype):
            raise ModelLoadError(f"Unknown torch_dtype {torch_dtype!r}", path=str(self.path), backend=BACKEND)
        self.dtype = dtype
        options = {"local_files_only": True, "trust_remote_code": False}
        try:
            self.config = transformers.AutoConfig.from_pretrained(self.path, **options)
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.path, **options)
            self._model = transformers.AutoModelForCausalLM.from_pretrained(self.path, dtype=dtype, **options)
        except Exception as exc:
            raise ModelLoadError(
                f"transformers could not load {self.path}: {exc}", path=str(self.path), backend=BACKEND
            ) from exc
        self._model.eval()
        self.model_type = str(getattr(self.config, "model_type", "") or "")
        trained = getattr(self.config, "max_position_embeddings", None) or DEFAULT_N_CTX
        self.n_ctx_train = int(trained)
        self.n_ctx = min(int(n_ctx), self.n_ctx_train) if n_ctx else self.n_ctx_train
        self.n_vocab = int(self._model.get_output_embeddings().out_features)
        self.bos_id = self.tokenizer.bos_token_id
        self.add_bos = self.bos_id is not None and self.tokenizer("a")["input_ids"][:1] == [self.bos_id]
        self._cache_arg = "cache" if "cache" in inspect.signature(self._model.forward).parameters else "past_key_values"
        self._cache: Any = None
        self._n_past = 0
        self._closed = False
        self.vocab = self._load_vocabulary()

    # --- vocabulary ----------------------------------------------------------

    def _load_vocabulary(self) -> TokenVocabulary:
        key = _dir_key(self.path)
        with _vocab_lock:
            cached = _vocab_cache.get(key)
        if cached is not None:
            return cached
        pieces = token_pieces(self.tokenizer, self.n_vocab)
        generation = getattr(self._model, "generation_config", None)
        stops = _ids(self.tokenizer.eos_token_id) + _ids(getattr(generation, "eos_token_id", None))
        stops += _ids(getattr(self.config, "eos_token_id", None))
        stops = [t for t in dict.fromkeys(stops) if 0 <= t < self.n_vocab]
        if not stops:
            raise ModelLoadError(f"{self.path} names no end-of-sequence token", path=str(self.path), backend=BACKEND)
        vocab = TokenVocabulary(pieces, eos_id=stops[0], stop_ids=stops, key=f"hf:{key}")
        with _vocab_lock:
            _vocab_cache[key] = vocab
        return vocab

    def token_text(self, token: int | None) -> str:
        if token is None or token < 0:
            return ""
        return self.tokenizer.convert_ids_to_tokens(int(token)) or ""

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False, split_special_tokens=not special)["input_ids"])

    def tokenize_fragment(self, data: bytes) -> list[int]:
        try:
            return self.tokenize(data.decode("utf-8"), special=False)
        except UnicodeDecodeError:
            return []  # the guide then falls back to single-byte tokens

    # --- evaluation (the LogitsBackend protocol of decoding.loop) -------------

    def require_open(self) -> None:
        if self._closed:
            raise ModelError(f"The model {self.path} was closed", backend=BACKEND, retryable=False)

    def start(self, prompt_tokens: Sequence[int]) -> np.ndarray:
        from transformers import DynamicCache

        self.require_open()
        self._cache = DynamicCache()
        self._n_past = 0
        return self.extend(prompt_tokens)

    def extend(self, tokens: Sequence[int]) -> np.ndarray:
        if self._n_past + len(tokens) > self.n_ctx:
            raise ContextOverflowError(f"Generation ran past the context of {self.n_ctx} tokens", backend=BACKEND)
        torch = self._torch
        try:
            with torch.inference_mode():
                output = self._model(
                    input_ids=torch.tensor([list(tokens)], dtype=torch.long),
                    use_cache=True,
                    logits_to_keep=1,
                    **{self._cache_arg: self._cache},
                )
        except (RuntimeError, ValueError, IndexError) as exc:
            raise ModelError(f"transformers failed to evaluate the model: {exc}", backend=BACKEND) from exc
        self._n_past += len(tokens)
        return output.logits[0, -1].float().numpy()

    # --- diagnostics -----------------------------------------------------------

    def load_info(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "architecture": self.model_type,
            "n_ctx": self.n_ctx,
            "n_threads": self.threads,
            "n_vocab": self.n_vocab,
            "dtype": str(self.dtype).removeprefix("torch."),
        }

    def close(self) -> None:
        self._closed = True
        self._cache = None
        self._model = None
