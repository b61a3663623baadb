"""A loaded GGUF model on llama.cpp: file checks, loading, vocabulary, evaluation.

We drive llama.cpp's context directly (not through ``llama_cpp.Llama``) because
the decode loop needs the raw logits after each batch, and because ``Llama``
offers no way to set the model parameter ``use_extra_bufts``: with it on, the
source build of llama-cpp-python 0.3.36 segfaults on the first decode on CPUs
with AMX while repacking weights. It is off by default here and reported by
:meth:`LlamaModel.load_info` so ``localjudge doctor`` can say what is active.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import struct
import sys
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..decoding import disk_cache
from ..decoding.guide import TokenVocabulary
from ..errors import ContextOverflowError, MissingDependencyError, ModelError, ModelLoadError
from .local import TokenizedModel

__all__ = ["GGUF_MAGIC", "LlamaModel", "check_gguf_file", "cpu_features", "import_llama_cpp"]

GGUF_MAGIC = b"GGUF"
_MIN_GGUF_BYTES = 1024
_vocab_cache: dict[str, TokenVocabulary] = {}
_vocab_lock = threading.Lock()


_log_lines: deque[str] = deque(maxlen=200)
_log_state: dict[str, Any] = {"callback": None, "echo": False}


def import_llama_cpp():
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependencyError("The local GGUF judge", "llama-cpp-python") from exc
    if _log_state["callback"] is None:
        _install_log_callback(llama_cpp)
    return llama_cpp


def _install_log_callback(llama_cpp: Any) -> None:
    """Keep llama.cpp's log in memory (quoted in load errors) instead of on stderr.

    llama-cpp-python's own callback maps the log levels of this llama.cpp
    version one step off and prints warnings as errors.
    """

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: Any) -> None:
        line = text.decode("utf-8", "replace")
        _log_lines.append(line)
        if _log_state["echo"]:
            sys.stderr.write(line)

    _log_state["callback"] = callback  # a reference, so ctypes does not free it
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


def _recent_log(since: int) -> str:
    lines = list(_log_lines)[since:] if since < len(_log_lines) else []
    text = "".join(lines).strip()
    return text[-1500:]


def check_gguf_file(path: str | os.PathLike[str]) -> Path:
    """Refuse a file llama.cpp should not be handed: missing, not GGUF, or clearly cut short.

    llama.cpp checks tensor bounds itself; this catches the cases that reach
    it as confusing messages (or worse) before it touches the file.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelLoadError(f"Model file not found: {p}", path=str(p))
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


def _usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _default_threads() -> int:
    """Decode threads: every CPU on small machines; half (about the physical cores) on larger ones."""
    cpus = _usable_cpus()
    return cpus if cpus <= 4 else cpus // 2


@contextlib.contextmanager
def without_extra_bufts() -> Iterator[None]:
    """Make ``llama_cpp.Llama`` (and its server) load with use_extra_bufts=False.

    For code that builds ``Llama`` itself, which has no parameter for it: the
    AMX crash workaround, applied to llama-cpp-python's own defaults.
    """
    lib = import_llama_cpp()
    original = lib.llama_model_default_params

    def defaults_without_repacking() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = defaults_without_repacking
    try:
        yield
    finally:
        lib.llama_model_default_params = original


def cpu_features() -> dict[str, Any]:
    """What llama.cpp reports about the CPU, and whether it has AMX."""
    from ..doctor import cpu_features as kernel_cpu_flags

    info = import_llama_cpp().llama_print_system_info().decode("utf-8", "replace")
    has_amx = any(flag.startswith("amx") for flag in kernel_cpu_flags()) or "AMX_INT8 = 1" in info
    return {"system_info": info.strip(), "amx": has_amx}


def _cached_pieces(parts: tuple[str, ...], n_vocab: int) -> list[bytes | None] | None:
    data = disk_cache.load("pieces", parts)
    if data is None:
        return None
    try:
        pieces = disk_cache.decode_pieces(data)
    except (ValueError, IndexError):
        return None
    return pieces if len(pieces) == n_vocab else None


class LlamaModel(TokenizedModel):
    """One GGUF model with one context. Not thread-safe: hold ``lock`` around every use."""

    backend = "llama.cpp"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        n_ctx: int = 4096,
        n_batch: int = 512,
        n_threads: int | None = None,
        use_extra_bufts: bool = False,
        verbose: bool = False,
    ) -> None:
        self.path = check_gguf_file(path)
        llama_cpp = import_llama_cpp()
        from llama_cpp import _internals

        _log_state["echo"] = verbose
        self._llama_cpp = llama_cpp
        self.lock = threading.Lock()
        self.n_threads = n_threads or _default_threads()
        self.use_extra_bufts = use_extra_bufts
        model_params = llama_cpp.llama_model_default_params()
        model_params.use_extra_bufts = use_extra_bufts
        _log_lines.clear()
        try:
            self._model = _internals.LlamaModel(path_model=str(self.path), params=model_params, verbose=True)
        except Exception as exc:
            log = _recent_log(0)
            detail = f"\nllama.cpp said:\n{log}" if log else ""
            raise ModelLoadError(f"llama.cpp could not load {self.path}: {exc}{detail}", path=str(self.path)) from exc
        self.metadata: dict[str, str] = self._model.metadata()
        self.n_ctx_train = self._model.n_ctx_train()
        ctx_params = llama_cpp.llama_context_default_params()
        ctx_params.n_ctx = n_ctx
        ctx_params.n_batch = n_batch
        ctx_params.n_ubatch = n_batch
        ctx_params.n_threads = self.n_threads
        ctx_params.n_threads_batch = max(self.n_threads, n_threads or _usable_cpus())
        ctx_params.no_perf = True
        try:
            self._ctx = _internals.LlamaContext(model=self._model, params=ctx_params, verbose=True)
            self._batch = _internals.LlamaBatch(n_tokens=n_batch, embd=0, n_seq_max=1, verbose=True)
        except Exception as exc:
            self._model.close()
            raise ModelLoadError(
                f"llama.cpp could not create a context for {self.path}: {exc}", path=str(self.path)
            ) from exc
        self.n_ctx = self._ctx.n_ctx()
        self.n_batch = n_batch
        self.n_vocab = self._model.n_vocab()
        self.bos_id = self._model.token_bos()
        self.add_bos = bool(self._model.add_bos_token())
        self._n_past = 0
        self.vocab = self._load_vocabulary()

    # --- vocabulary ----------------------------------------------------------

    def token_text(self, token: int) -> str:
        """The token as the tokenizer spells it, special tokens included (for templates)."""
        if token < 0:
            return ""
        return self._piece(token, special=True).decode("utf-8", "replace")

    def _piece(self, token: int, *, special: bool) -> bytes:
        buf = ctypes.create_string_buffer(256)
        n = self._llama_cpp.llama_token_to_piece(self._model.vocab, token, buf, 256, 0, special)
        return buf.raw[: max(n, 0)]

    def _load_vocabulary(self) -> TokenVocabulary:
        """Token id -> bytes, once per model file (262k ctypes calls take ~1 s)."""
        stat = self.path.stat()
        key = hashlib.sha1(f"{self.path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()
        with _vocab_lock:
            cached = _vocab_cache.get(key)
        if cached is not None:
            return cached
        lib, vocab = self._llama_cpp, self._model.vocab
        parts = ("pieces", getattr(lib, "__version__", "?"), key)
        pieces = _cached_pieces(parts, self.n_vocab)
        if pieces is None:
            pieces = self._read_pieces()
            disk_cache.store("pieces", parts, disk_cache.encode_pieces(pieces))
        is_eog = lib.llama_vocab_is_eog
        stops = [t for t in (lib.llama_vocab_eos(vocab), lib.llama_vocab_eot(vocab)) if t >= 0]
        stops += [t for t, p in enumerate(pieces) if p is None and is_eog(vocab, t)]
        eos = lib.llama_vocab_eos(vocab)
        result = TokenVocabulary(pieces, eos_id=eos if eos >= 0 else stops[0], stop_ids=stops, key=key)
        with _vocab_lock:
            _vocab_cache[key] = result
        return result

    def _read_pieces(self) -> list[bytes | None]:
        lib, vocab = self._llama_cpp, self._model.vocab
        skip = lib.LLAMA_TOKEN_ATTR_CONTROL | lib.LLAMA_TOKEN_ATTR_UNKNOWN | lib.LLAMA_TOKEN_ATTR_UNUSED
        buf = ctypes.create_string_buffer(256)
        to_piece, get_attr = lib.llama_token_to_piece, lib.llama_vocab_get_attr
        pieces: list[bytes | None] = []
        for token in range(self.n_vocab):
            attr = get_attr(vocab, token)
            if attr & skip and not attr & lib.LLAMA_TOKEN_ATTR_BYTE:
                pieces.append(None)
                continue
            n = to_piece(vocab, token, buf, 256, 0, False)
            pieces.append(buf.raw[:n] if n > 0 else None)
        return pieces

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        return self._model.tokenize(text.encode("utf-8"), False, special)

    def tokenize_fragment(self, data: bytes) -> list[int]:
        return self._model.tokenize(data, False, False)

    # --- evaluation (the LogitsBackend protocol of decoding.loop) -------------

    @property
    def closed(self) -> bool:
        return self._ctx.ctx is None or self._model.model is None

    def require_open(self) -> None:
        if self.closed:
            raise ModelError(f"The model {self.path} was closed", backend="llama.cpp", retryable=False)

    def start(self, prompt_tokens: Sequence[int]) -> np.ndarray:
        self.require_open()
        self._ctx.kv_cache_clear()
        self._n_past = 0
        return self.extend(prompt_tokens)

    def extend(self, tokens: Sequence[int]) -> np.ndarray:
        if self._n_past + len(tokens) > self.n_ctx:
            raise ContextOverflowError(f"Generation ran past the context of {self.n_ctx} tokens", backend="llama.cpp")
        for i in range(0, len(tokens), self.n_batch):
            chunk = list(tokens[i : i + self.n_batch])
            self._batch.set_batch(chunk, n_past=self._n_past, logits_all=False)
            try:
                self._ctx.decode(self._batch)
            except RuntimeError as exc:
                raise ModelError(f"llama.cpp failed to decode: {exc}", backend="llama.cpp") from exc
            self._n_past += len(chunk)
        pointer = self._ctx.get_logits_ith(-1)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))

    # --- diagnostics -----------------------------------------------------------

    def load_info(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "architecture": self.metadata.get("general.architecture"),
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "n_vocab": self.n_vocab,
            "use_extra_bufts": self.use_extra_bufts,
            "amx_workaround": (
                "off: use_extra_bufts=True (weight repacking enabled)"
                if self.use_extra_bufts
                else "on: use_extra_bufts=False (no weight repacking into AMX/extra buffer types)"
            ),
        }

    def close(self) -> None:
        for part in ("_batch", "_ctx", "_model"):
            obj = getattr(self, part, None)
            if obj is not None:
                obj.close()
