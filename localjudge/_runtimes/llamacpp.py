"""llama.cpp as a runtime: a GGUF file checked, loaded and evaluated through llama-cpp-python.

We drive llama.cpp's context directly (not through ``llama_cpp.Llama``) because
the decode loop needs the raw logits after each batch, and because ``Llama``
offers no way to set the model parameter ``use_extra_bufts``: with it on, the
source build of llama-cpp-python 0.3.36 segfaults on the first decode on CPUs
with AMX while repacking weights. It is off by default here and reported by
:meth:`LlamaCppRuntime.load_info` so ``localjudge doctor`` can say what is active.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib
import itertools
import os
import sys
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._compat.llama_cpp_internals import llama_internals
from .._cpu import ThreadGovernor, cpu_features
from .._text import lone_surrogate, surrogate_message
from .._wording import Message
from ..errors import MissingDependencyError, ModelError, ModelLoadError, UsageError
from .base import Group, Runtime, check_positive, log_softmax_at
from .gguf import check_gguf_file
from .prefix_cache import DEFAULT_BUDGET_BYTES, Plan, PrefixCache, chunks
from .vocabulary import TokenVocabulary, load_vocabulary

__all__ = [
    "LlamaCppRuntime",
    "import_llama_cpp",
    "system_info",
    "without_extra_bufts",
]

BACKEND = "llama.cpp"
#: one-token steps of different sequences shared in one llama_decode; measured on this llama.cpp build (CPU):
#: up to 7 give each sequence exactly its lone logits, 8 or more do not (the batch takes another kernel path)
SHARED_STEP_LIMIT = 7


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


def _recent_log() -> str:
    return "".join(_log_lines).strip()[-1500:]


@contextlib.contextmanager
def without_extra_bufts() -> Iterator[None]:
    """Make ``llama_cpp.Llama`` (and its server) load with use_extra_bufts=False.

    For code that builds ``Llama`` itself, which has no parameter for it: the
    AMX crash workaround, applied to llama-cpp-python's own defaults.
    """
    lib = import_llama_cpp()
    original = lib.llama_model_default_params
    # ``Llama`` looks the function up on the bindings module (llama_cpp.llama_cpp), not on the package
    # that re-exports it: both are patched, or the AMX repacking still runs.
    # Typed as Any: the bindings module is imported by name, so mypy cannot see its functions.
    modules: tuple[Any, Any] = (lib, importlib.import_module("llama_cpp.llama_cpp"))

    def defaults_without_repacking() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    for module in modules:
        module.llama_model_default_params = defaults_without_repacking
    try:
        yield
    finally:
        for module in modules:
            module.llama_model_default_params = original


def system_info() -> dict[str, Any]:
    """What llama.cpp reports about the CPU, whether it has AMX, and whether this build can offload to a GPU."""
    lib = import_llama_cpp()
    info = lib.llama_print_system_info().decode("utf-8", "replace")
    has_amx = any(flag.startswith("amx") for flag in cpu_features()) or "AMX_INT8 = 1" in info
    return {"system_info": info.strip(), "amx": has_amx, "gpu_offload": bool(lib.llama_supports_gpu_offload())}


class LlamaCppRuntime(Runtime):
    """One GGUF model with one context.

    ``n_gpu_layers`` offloads that many layers (-1: all) when llama-cpp-python
    was built with CUDA or Metal; asking for it on a CPU-only build is an
    error rather than a silent CPU run. ``vocab_only`` loads the vocabulary
    without weights or context: tokenisation only. ``parallel`` sequences
    are evaluated side by side, each in its own KV cache of ``n_ctx``
    tokens (memory grows with ``parallel * n_ctx``). ``prefix_cache_bytes``
    bounds the states of shared prompt prefixes kept for later calls (0: keep
    none); prompts are evaluated in canonical chunks either way, so a warm
    call gives the cold result exactly (:mod:`.prefix_cache`).
    """

    backend = BACKEND

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        n_ctx: int = 4096,
        n_batch: int = 512,
        n_threads: int | None = None,
        n_gpu_layers: int = 0,
        parallel: int = 1,
        use_extra_bufts: bool = False,
        vocab_only: bool = False,
        prefix_cache_bytes: int = DEFAULT_BUDGET_BYTES,
        verbose: bool = False,
    ) -> None:
        super().__init__()
        self.path = check_gguf_file(path)
        check_positive(n_ctx=n_ctx, n_batch=n_batch, n_threads=n_threads, parallel=parallel)
        llama_cpp = import_llama_cpp()
        _internals = llama_internals()

        if n_gpu_layers and not llama_cpp.llama_supports_gpu_offload():
            raise UsageError(
                Message(
                    "{n_gpu_layers:n_gpu_layers}={layers} asks for GPU offload, but this llama-cpp-python build is "
                    "CPU-only. Rebuild it with CUDA (CMAKE_ARGS='-DGGML_CUDA=on') or Metal "
                    "(CMAKE_ARGS='-DGGML_METAL=on'): see 'On a GPU' in docs/models.md.",
                    layers=n_gpu_layers,
                )
            )
        _log_state["echo"] = verbose
        self._llama_cpp = llama_cpp
        self.threads = ThreadGovernor(1 if vocab_only else n_threads)  # unset: the cores that other work leaves free
        self.n_threads = self.threads.current
        self.n_gpu_layers = n_gpu_layers
        self.use_extra_bufts = use_extra_bufts
        self.vocab_only = vocab_only
        model_params = llama_cpp.llama_model_default_params()
        model_params.use_extra_bufts = use_extra_bufts
        model_params.n_gpu_layers = n_gpu_layers
        model_params.vocab_only = vocab_only
        _log_lines.clear()
        self._ctx: Any = None
        self._batch: Any = None
        try:
            self._model = _internals.LlamaModel(path_model=str(self.path), params=model_params, verbose=True)
        except Exception as exc:
            log = _recent_log()
            detail = f"\nllama.cpp said:\n{log}" if log else ""
            raise ModelLoadError(
                f"llama.cpp could not load {self.path}: {exc}{detail}", path=str(self.path), backend=BACKEND
            ) from exc
        self.template_metadata: dict[str, str] = self._model.metadata()
        self.n_ctx_train = self._model.n_ctx_train()
        self.n_vocab = self._model.n_vocab()
        self.bos_id = self._model.token_bos()
        self.add_bos = bool(self._model.add_bos_token())
        self.n_batch = n_batch
        self.slots = parallel
        self.n_ctx = 0 if vocab_only else self._create_context(_internals, n_ctx, n_batch)
        self.prefixes = PrefixCache(prefix_cache_bytes) if prefix_cache_bytes > 0 else None
        self.vocab = self._load_vocabulary()

    def _create_context(self, internals: Any, n_ctx: int, n_batch: int) -> int:
        """The context; returns the size we hold prompts to: what was asked, not llama.cpp's padding of it."""
        if n_ctx > self.n_ctx_train:
            self._model.close()
            raise UsageError(
                f"n_ctx={n_ctx} is more than {self.path} was trained for ({self.n_ctx_train} tokens); "
                f"use at most {self.n_ctx_train}"
            )
        # llama.cpp clamps a batch to the context it was asked for and asserts (aborting the process) when a
        # decode call carries more, so batches never exceed the context either.
        self.n_batch = n_batch = min(n_batch, n_ctx)
        ctx_params = self._llama_cpp.llama_context_default_params()
        # Each sequence gets a KV cache of its own (a "stream"), and flash attention stays off: measured on
        # this llama.cpp, a sequence's logits then depend only on its own tokens, and one-token steps of
        # several sequences in one batch give each exactly what it gets alone. In one shared cache, or with
        # flash attention (which splits long caches into per-thread chunks), they change with what else
        # is in the cache or the batch.
        ctx_params.n_seq_max = self.slots
        ctx_params.kv_unified = False
        ctx_params.flash_attn_type = self._llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        ctx_params.n_ctx = n_ctx * self.slots
        ctx_params.n_batch = max(n_batch, self.slots)
        ctx_params.n_ubatch = max(n_batch, self.slots)
        # A sliding-window cache drops cells it no longer needs; after a probe is removed the sequence
        # would miss them, so keep the full cache (small next to the weights).
        ctx_params.swa_full = True
        ctx_params.n_threads = ctx_params.n_threads_batch = self.n_threads
        ctx_params.no_perf = True
        try:
            self._ctx = internals.LlamaContext(model=self._model, params=ctx_params, verbose=True)
            self._batch = internals.LlamaBatch(n_tokens=max(n_batch, self.slots), embd=0, n_seq_max=1, verbose=True)
        except Exception as exc:
            self._model.close()
            raise ModelLoadError(
                f"llama.cpp could not create a context for {self.path}: {exc}", path=str(self.path), backend=BACKEND
            ) from exc
        return min(n_ctx, self._ctx.n_ctx() // self.slots)

    # --- vocabulary ----------------------------------------------------------

    def token_text(self, token: int | None) -> str:
        if token is None or token < 0:
            return ""
        return self._piece(token, special=True).decode("utf-8", "replace")

    def _piece(self, token: int, *, special: bool) -> bytes:
        buf = ctypes.create_string_buffer(256)
        n = self._llama_cpp.llama_token_to_piece(self._model.vocab, token, buf, 256, 0, special)
        return buf.raw[: max(n, 0)]

    def _load_vocabulary(self) -> TokenVocabulary:
        """Token id -> bytes, once per model file (262k ctypes calls take ~1 s)."""
        stat = self.path.stat()
        lib = self._llama_cpp
        stamp = f"{self.path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{getattr(lib, '__version__', '?')}"
        key = hashlib.sha1(stamp.encode()).hexdigest()

        def build(pieces: list[bytes | None]) -> TokenVocabulary:
            vocab = self._model.vocab
            stops = [t for t in (lib.llama_vocab_eos(vocab), lib.llama_vocab_eot(vocab)) if t >= 0]
            stops += [t for t, p in enumerate(pieces) if p is None and lib.llama_vocab_is_eog(vocab, t)]
            eos = lib.llama_vocab_eos(vocab)
            return TokenVocabulary(pieces, eos_id=eos if eos >= 0 else stops[0], stop_ids=stops, key=key)

        return load_vocabulary(key, self.n_vocab, self._read_pieces, build)

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
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # the judges refuse such text by its field first; a caller of the runtime may not
            found = lone_surrogate(text, "the text to tokenize")
            raise UsageError(surrogate_message(found) if found else "the text to tokenize is not UTF-8") from None
        return self._model.tokenize(data, False, special)

    def tokenize_fragment(self, data: bytes) -> list[int]:
        return self._model.tokenize(data, False, False)

    # --- evaluation ------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._model.model is None or (not self.vocab_only and self._ctx.ctx is None)

    def require_open(self) -> None:
        super().require_open()
        if self.vocab_only:
            raise ModelError(f"{self.path} was loaded vocab_only: it tokenizes but cannot evaluate", backend=BACKEND)

    def expect(self, prompts: Sequence[Sequence[int]]) -> None:
        if self.prefixes is not None:
            self.prefixes.expect(prompts)

    def _prefill(self, tokens: list[int], seq: int) -> np.ndarray:
        """The prompt in canonical chunks, resumed from a kept prefix when one matches."""
        plan = self.prefixes.plan(tokens) if self.prefixes is not None else Plan(0, None, None, None)
        self._reset(seq)
        resume = plan.resume_at if plan.state is not None and self._restore(plan.state, seq) else 0
        logits = np.empty(0)
        for begin, end in chunks(resume, len(tokens)):
            logits = self._evaluate(tokens[begin:end], begin, seq)
            if end == plan.keep_at and plan.keep_key is not None and self.prefixes is not None:
                self.prefixes.keep(plan.keep_key, self._snapshot(seq))
        return logits

    def _snapshot(self, seq: int) -> bytes:
        lib, ctx = self._llama_cpp, self._ctx.ctx
        size = lib.llama_state_seq_get_size(ctx, seq)
        buffer = (ctypes.c_uint8 * size)()
        written = lib.llama_state_seq_get_data(ctx, buffer, size, seq)
        return bytes(buffer)[:written]

    def _restore(self, state: bytes, seq: int) -> bool:
        lib = self._llama_cpp
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if lib.llama_state_seq_set_data(self._ctx.ctx, buffer, len(state), seq):
            return True
        self._reset(seq)  # a state llama.cpp would not take: start cold
        return False

    def _reset(self, seq: int) -> None:
        self._llama_cpp.llama_memory_seq_rm(self._ctx.memory, seq, -1, -1)

    def _truncate(self, n_past: int, seq: int) -> None:
        self._llama_cpp.llama_memory_seq_rm(self._ctx.memory, seq, n_past, -1)

    def _evaluate(self, tokens: Sequence[int], n_past: int, seq: int) -> np.ndarray:
        for i in range(0, len(tokens), self.n_batch):
            chunk = tokens[i : i + self.n_batch]
            self._decode([(seq, token, n_past + i + j, j == len(chunk) - 1) for j, token in enumerate(chunk)])
        return self._logits(-1)

    def _read_logprobs(self, tokens: Sequence[int], n_past: int, seq: int) -> list[float]:
        """Every position's logits in one llama_decode per ``n_batch`` tokens, each row read as it comes."""
        found: list[float] = []
        for i in range(0, len(tokens) - 1, self.n_batch):
            chunk = tokens[i : min(i + self.n_batch, len(tokens) - 1)]  # the last token's logits say nothing
            self._decode([(seq, token, n_past + i + j, True) for j, token in enumerate(chunk)])
            found += [log_softmax_at(self._logits(row), tokens[i + 1 + row]) for row in range(len(chunk))]
        return found

    def _evaluate_groups(self, groups: Sequence[tuple[Group, int]]) -> list[np.ndarray]:
        """One-token groups of different sequences share batches; longer groups go alone, as they do alone.

        Measured on this llama.cpp (per-sequence caches, no flash attention):
        a one-token step gives a sequence the logits it gets alone whatever
        other sequences' one-token steps share its batch, up to
        :data:`SHARED_STEP_LIMIT` of them; a group of several tokens beside
        others' does not.
        """
        found: list[np.ndarray | None] = [None] * len(groups)
        # In sequence order and cut into runs of neighbours: a batch's attention spans every cache from its
        # lowest sequence to its highest (0 and 7 together cost as much as 0 to 7).
        steps = sorted(
            (i for i, (group, _) in enumerate(groups) if len(group.tokens) == 1), key=lambda i: groups[i][0].seq
        )
        for batch in _even_runs(steps, SHARED_STEP_LIMIT) if len(steps) > 1 else ():
            self._decode([(groups[i][0].seq, groups[i][0].tokens[0], groups[i][1], True) for i in batch])
            for row, index in enumerate(batch):
                group, n_past = groups[index]
                found[index] = self._logits(row)
                if not group.keep:
                    self._truncate(n_past, group.seq)
        for index, placed in enumerate(groups):
            if found[index] is None:
                found[index] = super()._evaluate_groups([placed])[0]
        return found  # type: ignore[return-value]

    def _decode(self, entries: Sequence[tuple[int, int, int, bool]]) -> None:
        """One llama_decode of ``(seq, token, position, wants_logits)`` entries."""
        batch = self._batch.batch
        for j, (seq, token, position, wants_logits) in enumerate(entries):
            batch.token[j], batch.pos[j], batch.seq_id[j][0], batch.n_seq_id[j] = token, position, seq, 1
            batch.logits[j] = wants_logits
        batch.n_tokens = len(entries)
        threads = self.threads.threads()
        if threads != self.n_threads:
            self._llama_cpp.llama_set_n_threads(self._ctx.ctx, threads, threads)
            self.n_threads = threads
        try:
            self._ctx.decode(self._batch)
        except RuntimeError as exc:
            raise ModelError(f"llama.cpp failed to decode: {exc}", backend=BACKEND) from exc

    def _logits(self, index: int) -> np.ndarray:
        """A copy: llama.cpp reuses its buffer on the next decode, and a later step must not change what we hold."""
        return np.ctypeslib.as_array(self._ctx.get_logits_ith(index), shape=(self.n_vocab,)).copy()

    # --- diagnostics -----------------------------------------------------------

    def load_info(self) -> dict[str, Any]:
        return {
            "backend": BACKEND,
            "path": str(self.path),
            "architecture": self.template_metadata.get("general.architecture"),
            "n_ctx": self.n_ctx,
            "parallel": self.slots,
            "n_threads": self.n_threads,
            "threads_rule": self.threads.rule,
            "n_gpu_layers": self.n_gpu_layers,
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


def _even_runs(items: list[int], limit: int) -> list[list[int]]:
    """``items`` cut into the fewest runs of at most ``limit``, as even as can be (8, 7 -> 4 and 4)."""
    count = -(-len(items) // limit)
    cuts = [len(items) * k // count for k in range(count + 1)]
    return [items[a:b] for a, b in itertools.pairwise(cuts)]
