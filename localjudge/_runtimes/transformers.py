"""transformers as a runtime: a model directory (or a GGUF, converted once) evaluated with torch.

The decode loop needs the vocabulary as bytes per token id, prompt
tokenisation that parses special tokens only in template markup, and
``start``/``extend`` returning the logits after the last token. ``extend``
reuses a KV cache, so each step costs one token, not the whole sequence.
Model directories are untrusted input: nothing is fetched from a hub
(``local_files_only``) and no code from the directory runs
(``trust_remote_code=False``).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import inspect
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._wording import Message
from ..errors import MissingDependencyError, ModelError, ModelLoadError, ModelNotFoundError, UsageError
from .base import Runtime, check_positive, log_softmax_at
from .vocabulary import TokenVocabulary, load_vocabulary

__all__ = [
    "TransformersRuntime",
    "adds_bos",
    "check_model_dir",
    "import_transformers",
    "pick_device",
    "template_metadata",
    "token_pieces",
]

BACKEND = "transformers"
#: reply tokens scored per forward pass: each keeps a row of logits (4 bytes x the vocabulary) until read
SCORE_CHUNK = 256
DEFAULT_N_CTX = 4096
# Special tokens that end an assistant turn in common chat formats. A directory's
# configs often name only <eos> (the default Gemma converted from GGUF names 1,
# not <end_of_turn>), yet a chat model ends its turn with these; llama.cpp
# recognises the same names.
END_OF_TURN_MARKERS = ("<end_of_turn>", "<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end|>", "<|endoftext|>")


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
        raise ModelNotFoundError(f"Model directory not found: {p}", path=str(p), backend=BACKEND)
    if not p.is_dir():
        raise ModelLoadError(
            f"{p} is neither a transformers model directory nor a GGUF file", path=str(p), backend=BACKEND
        )
    if not (p / "config.json").is_file():
        raise ModelLoadError(
            f"{p} has no config.json: it is not a transformers model directory", path=str(p), backend=BACKEND
        )
    return p


_CPU = "use {device:device}='cpu'"


def pick_device(torch: Any, device: str | None, dtype: str | None) -> tuple[Any, Any]:
    """``(device, dtype)``: CPU and float32 unless asked, CUDA and bfloat16 when a GPU is there."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise UsageError(f"Unknown torch device {device!r}: use cpu, cuda, cuda:N or mps") from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(
            Message(
                "{device:device}={value!r} asks for CUDA, but torch sees no CUDA device here; " + _CPU, value=device
            )
        )
    mps = getattr(torch.backends, "mps", None)
    if resolved.type == "mps" and not (mps is not None and mps.is_available()):
        raise UsageError(
            Message(
                "{device:device}={value!r} asks for Apple's MPS, which this torch build cannot use; " + _CPU,
                value=device,
            )
        )
    if dtype is None:
        if resolved.type == "cuda":
            dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        else:
            dtype = "float32"
    torch_dtype = getattr(torch, str(dtype).removeprefix("torch."), None)
    if not isinstance(torch_dtype, torch.dtype) or not torch_dtype.is_floating_point:
        raise UsageError(f"Unknown dtype {dtype!r}: use float32, bfloat16 or float16")
    return resolved, torch_dtype


@contextlib.contextmanager
def _quiet(transformers: Any) -> Iterator[None]:
    """No "Loading weights" progress bar on every load; what the user had set is put back."""
    logging = transformers.utils.logging
    was_enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            logging.enable_progress_bar()


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


def template_metadata(tokenizer: Any, model_type: str) -> dict[str, str]:
    """A tokenizer's chat-template facts in the GGUF metadata keys the chat templates read."""
    metadata = {"general.architecture": model_type}
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):  # several named templates: the default one judges
        template = template.get("default")
    if isinstance(template, str) and template:
        metadata["tokenizer.chat_template"] = template
    if model_type == "llama" and "<|eot_id|>" in tokenizer.get_vocab():
        metadata["tokenizer.ggml.pre"] = "llama-bpe"
    return metadata


def adds_bos(tokenizer: Any) -> bool:
    """Whether the tokenizer puts BOS in front of a text by itself."""
    bos = tokenizer.bos_token_id
    return bos is not None and tokenizer("a")["input_ids"][:1] == [bos]


def _ids(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]


def _dir_key(path: Path) -> str:
    stamps = [f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(path.iterdir()) if f.is_file()]
    return hashlib.sha1("|".join([str(path.resolve()), *stamps]).encode()).hexdigest()


class TransformersRuntime(Runtime):
    """One transformers causal LM with one KV cache.

    ``path`` is a ``save_pretrained`` directory, or a GGUF file that is
    converted once into the cache (see :mod:`.gguf_conversion`). ``device``
    and ``dtype`` default to CPU/float32, or CUDA/bfloat16 when a GPU is
    present. ``n_threads`` sets torch's (process-wide) thread count.
    ``parallel`` sequences each keep a cache of their own; they are evaluated
    one after another (no shared batches here).
    """

    backend = BACKEND

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        n_ctx: int | None = None,
        device: str | None = None,
        dtype: str | None = None,
        n_threads: int | None = None,
        parallel: int = 1,
    ) -> None:
        super().__init__()
        check_positive(n_ctx=n_ctx, n_threads=n_threads, parallel=parallel)
        self.slots = parallel
        torch, transformers = import_transformers()
        self.device, self.dtype = pick_device(torch, device, dtype)  # before a conversion that takes minutes
        self.path = Path(path).expanduser()
        if self.path.is_file():  # a GGUF: converted once, then loaded like any directory
            from .gguf_conversion import converted_dir

            self.model_dir = check_model_dir(converted_dir(self.path))
        else:
            self.model_dir = check_model_dir(self.path)
        self._torch = torch
        if n_threads:
            torch.set_num_threads(n_threads)
        self.n_threads = torch.get_num_threads()
        options = {"local_files_only": True, "trust_remote_code": False}
        try:
            self.config = transformers.AutoConfig.from_pretrained(self.model_dir, **options)
        except Exception as exc:
            raise ModelLoadError(
                f"transformers could not read {self.model_dir / 'config.json'}: {exc}",
                path=str(self.path),
                backend=BACKEND,
            ) from exc
        self.model_type = str(getattr(self.config, "model_type", "") or "")
        self.n_ctx_train = int(getattr(self.config, "max_position_embeddings", None) or DEFAULT_N_CTX)
        if n_ctx and n_ctx > self.n_ctx_train:  # before seconds of loading weights
            raise UsageError(
                f"n_ctx={n_ctx} is more than {self.path} was trained for ({self.n_ctx_train} positions); "
                f"use at most {self.n_ctx_train}"
            )
        self.n_ctx = n_ctx or self.n_ctx_train
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_dir, **options)
            with _quiet(transformers):
                model = transformers.AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=self.dtype, **options)
            self._model = model.to(self.device).eval()
        except Exception as exc:
            raise ModelLoadError(
                f"transformers could not load {self.path}: {exc}", path=str(self.path), backend=BACKEND
            ) from exc
        self.n_vocab = int(self._model.get_output_embeddings().out_features)
        self.bos_id = self.tokenizer.bos_token_id
        self.add_bos = adds_bos(self.tokenizer)
        self._cache_arg = "cache" if "cache" in inspect.signature(self._model.forward).parameters else "past_key_values"
        self._caches: dict[int, Any] = {}  # sequence -> its cache
        self.template_metadata = template_metadata(self.tokenizer, self.model_type)
        self.vocab = self._load_vocabulary()

    # --- vocabulary ----------------------------------------------------------

    def _load_vocabulary(self) -> TokenVocabulary:
        key = f"hf:{_dir_key(self.model_dir)}"
        read = lambda: token_pieces(self.tokenizer, self.n_vocab)  # noqa: E731
        return load_vocabulary(key, self.n_vocab, read, lambda pieces: self._build(pieces, key))

    def _build(self, pieces: list[bytes | None], key: str) -> TokenVocabulary:
        generation = getattr(self._model, "generation_config", None)
        stops = _ids(self.tokenizer.eos_token_id) + _ids(getattr(generation, "eos_token_id", None))
        stops += _ids(getattr(self.config, "eos_token_id", None))
        added = getattr(self.tokenizer, "added_tokens_decoder", {}) or {}
        special = {token.content: token_id for token_id, token in added.items() if token.special}
        stops += [special[name] for name in END_OF_TURN_MARKERS if name in special]
        stops = [t for t in dict.fromkeys(stops) if 0 <= t < self.n_vocab]
        if not stops:
            raise ModelLoadError(f"{self.path} names no end-of-sequence token", path=str(self.path), backend=BACKEND)
        return TokenVocabulary(pieces, eos_id=stops[0], stop_ids=stops, key=key)

    def token_text(self, token: int | None) -> str:
        if token is None or token < 0:
            return ""
        return self.tokenizer.convert_ids_to_tokens(int(token)) or ""

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        # A fast tokenizer keeps split_special_tokens as a setting each call changes: one caller at a time,
        # or a thread's message text may be read with special tokens recognised. (``reading`` is re-entrant.)
        with self.reading:
            return list(self.tokenizer(text, add_special_tokens=False, split_special_tokens=not special)["input_ids"])

    def tokenize_fragment(self, data: bytes) -> list[int]:
        try:
            return self.tokenize(data.decode("utf-8"), special=False)
        except UnicodeDecodeError:
            return []  # the guide then falls back to single-byte tokens

    # --- evaluation ------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._model is None

    def _reset(self, seq: int) -> None:
        from transformers import DynamicCache

        self._caches[seq] = DynamicCache()

    def _evaluate(self, tokens: Sequence[int], n_past: int, seq: int) -> np.ndarray:
        return self._forward(tokens, self._caches[seq])

    def _branch(self, paths: Sequence[Sequence[int]], n_past: int, seq: int) -> list[np.ndarray]:
        """Each path on its own copy of the cache (cropping a sliding-window cache cannot take it back)."""
        return [self._forward(path, copy.deepcopy(self._caches[seq])) for path in paths]

    def _read_logprobs(self, tokens: Sequence[int], n_past: int, seq: int) -> list[float]:
        """Every position's logits, one forward pass per :data:`SCORE_CHUNK` tokens (their rows are the memory)."""
        found: list[float] = []
        for i in range(0, len(tokens) - 1, SCORE_CHUNK):
            chunk = tokens[i : min(i + SCORE_CHUNK, len(tokens) - 1)]  # the last token's logits say nothing
            rows = self._forward(chunk, self._caches[seq], keep=len(chunk))
            found += [log_softmax_at(rows[row], tokens[i + 1 + row]) for row in range(len(chunk))]
        return found

    def _forward(self, tokens: Sequence[int], cache: Any, keep: int = 1) -> np.ndarray:
        """The logits after the last token (``keep`` > 1: the last ``keep`` tokens' rows)."""
        torch = self._torch
        try:
            with torch.inference_mode():
                output = self._model(
                    input_ids=torch.tensor([list(tokens)], dtype=torch.long, device=self.device),
                    use_cache=True,
                    logits_to_keep=keep,
                    **{self._cache_arg: cache},
                )
        except (RuntimeError, ValueError, IndexError) as exc:
            raise ModelError(f"transformers failed to evaluate the model: {exc}", backend=BACKEND) from exc
        logits = output.logits[0].float().cpu().numpy()
        return logits[-1] if keep == 1 else logits

    # --- diagnostics -----------------------------------------------------------

    def load_info(self) -> dict[str, Any]:
        info = {
            "backend": BACKEND,
            "path": str(self.path),
            "architecture": self.model_type,
            "n_ctx": self.n_ctx,
            "parallel": self.slots,
            "n_threads": self.n_threads,
            "n_vocab": self.n_vocab,
            "device": str(self.device),
            "dtype": str(self.dtype).removeprefix("torch."),
        }
        if self.model_dir != self.path:
            info["converted_to"] = str(self.model_dir)
        return info

    def close(self) -> None:
        self._caches.clear()
        self._model = None
