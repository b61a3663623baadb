"""Every model option, declared once: name, type, default, help, flag, and whether it decides an answer.

The command line's model flags, the check of which options a spec's engine
takes, each local client's keywords and the result cache's identity of a
local judge are all read from these declarations (:mod:`.registry` groups
them by engine), so an option cannot be known in one place and forgotten in
another. Nothing here imports more than the standard library: the command
line builds its flags from this module when it starts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DECODING_OPTIONS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_PREFIX_CACHE_BYTES",
    "DEFAULT_READOUT_TOLERANCE",
    "DEFAULT_REASONING_BUDGET",
    "LIBRARY_PARALLEL",
    "LLAMACPP_OPTIONS",
    "LOCAL_OPTIONS",
    "MAX_DEFAULT_PARALLEL",
    "OUTLINES_OPTIONS",
    "SERVER_OPTIONS",
    "TRANSFORMERS_OPTIONS",
    "WHITESPACE_PATTERN",
    "ModelOptions",
    "Option",
]

DEFAULT_MAX_TOKENS = 1024
DEFAULT_REASONING_BUDGET = 256
#: the probability a readout may leave unread (see localjudge._decoding.readout)
DEFAULT_READOUT_TOLERANCE = 0.01
#: the evaluated prompt starts llama.cpp keeps for later calls that share them
DEFAULT_PREFIX_CACHE_BYTES = 256 * 1024 * 1024
#: the most sequences ``batch -j N`` gives a local model unless --parallel says otherwise (each costs n_ctx of memory)
MAX_DEFAULT_PARALLEL = 16
#: the sequences a local model named to the library (``model="..."``) decodes side by side: an OpenEvals
#: user's loop gathers async calls, and each slot costs n_ctx of memory (about 100 MB for the default judge)
LIBRARY_PARALLEL = 8
#: JSON whitespace outlines may write between tokens: at most one space
WHITESPACE_PATTERN = r"[ ]?"


@dataclass(frozen=True)
class Option:
    """One option a model's client takes.

    ``default`` is what the client uses when the option is not given (None:
    the engine's own or the model card's, which ``help`` says). ``identity``
    says the value decides an answer, so the result cache keys on it.
    ``flag`` is its command-line flag (None: library only); a boolean's flag
    sets the opposite of its default. A None given for an option means "not
    given", unless ``nullable`` makes None a value of its own.
    """

    name: str
    type: type
    default: Any
    help: str
    identity: bool = False
    flag: str | None = None
    minimum: int | None = None
    metavar: str | None = None
    nullable: bool = False


@dataclass(frozen=True, eq=False)  # equal as mappings are: to a dict of the same options too
class ModelOptions(Mapping[str, Any]):
    """The model options given (a command's flags, a library call's keywords): only those given.

    Immutable and picklable, so it travels from the command line to the
    client constructors and to Ray's actors as it is; ``**options`` passes
    it on as keywords.
    """

    # not ``values``: that would hide Mapping.values(), so options.values() raised TypeError
    pairs: tuple[tuple[str, Any], ...] = field(default=())

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> ModelOptions:
        return cls(tuple(values.items()))

    def __getitem__(self, name: str) -> Any:
        for key, value in self.pairs:
            if key == name:
                return value
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def replace(self, **changes: Any) -> ModelOptions:
        """These options with ``changes`` given (a None in them: no longer given)."""
        merged = {**dict(self.pairs), **changes}
        return ModelOptions.of({k: v for k, v in merged.items() if v is not None or k not in changes})

    def with_default(self, name: str, value: Any) -> ModelOptions:
        """These options with ``name`` set to ``value`` unless it was given."""
        return self if name in self else self.replace(**{name: value})


# The options every local engine's client takes: how the model decodes, for LocalClient.
CHAT_TEMPLATE = Option(
    "chat_template",
    str,
    None,
    "Local models: a built-in template (gemma, chatml, llama-3), gguf, or a Jinja file.",
    identity=True,
    flag="--chat-template",
    metavar="NAME|FILE",
)
MAX_TOKENS = Option(
    "max_tokens",
    int,
    None,
    "The most tokens an answer may take (local models: default the model card's, else 1024, "
    "less when the context has less room; servers: sent with each request).",
    identity=True,
    flag="--max-tokens",
    minimum=1,
)
FORMAT_INSTRUCTIONS = Option(
    "format_instructions",
    bool,
    True,
    "Local models: do not tell the model in words what the answer's fields mean.",
    identity=True,
    flag="--no-format-instructions",
)
REASONING_BUDGET = Option(
    "reasoning_budget",
    int,
    DEFAULT_REASONING_BUDGET,
    "Tokens each free-text JSON string (the judge's reasoning) may take before it is closed; None: no cap.",
    identity=True,
    nullable=True,
)
CLOSE_LOOPS = Option(
    "close_loops", bool, True, "Close a free-text string early when greedy decoding repeats itself.", identity=True
)
READOUT = Option("readout", bool, True, "Weigh every value a boolean, enum or number field may take.", identity=True)
READOUT_TOLERANCE = Option(
    "readout_tolerance",
    float,
    DEFAULT_READOUT_TOLERANCE,
    "The probability a readout may leave unread (between 0 and 1).",
    identity=True,
)
MODEL_NAME = Option("model_name", str, None, "The model's name in responses (default: the card's, else the file's).")
DECODING_OPTIONS = (
    CHAT_TEMPLATE,
    MAX_TOKENS,
    FORMAT_INSTRUCTIONS,
    REASONING_BUDGET,
    CLOSE_LOOPS,
    READOUT,
    READOUT_TOLERANCE,
    MODEL_NAME,
)

N_CTX = Option("n_ctx", int, None, "Local models: context size in tokens.", flag="--n-ctx", minimum=16)
N_THREADS = Option("n_threads", int, None, "Local models: CPU threads.", flag="--n-threads", minimum=1)
PARALLEL = Option(
    "parallel",
    int,
    None,
    "Local models: requests decoded side by side, each with its own n_ctx of memory "
    f"(batch: defaults to -j, at most {MAX_DEFAULT_PARALLEL}).",
    flag="--parallel",
    minimum=1,
)
#: every local engine's options, in the order the command line lists their flags
LOCAL_OPTIONS = (
    CHAT_TEMPLATE,
    N_CTX,
    N_THREADS,
    MAX_TOKENS,
    PARALLEL,
    FORMAT_INSTRUCTIONS,
    REASONING_BUDGET,
    CLOSE_LOOPS,
    READOUT,
    READOUT_TOLERANCE,
    MODEL_NAME,
)

LLAMACPP_OPTIONS = (
    Option(
        "n_gpu_layers",
        int,
        None,
        "llama.cpp: layers to offload to the GPU (-1: all; needs a CUDA or Metal build).",
        identity=True,
        flag="--n-gpu-layers",
        minimum=-1,
    ),
    Option("n_batch", int, 512, "llama.cpp: prompt tokens evaluated per call."),
    Option("use_extra_bufts", bool, False, "llama.cpp: repack weights into extra buffer types (AMX crashes some)."),
    Option("prefix_cache_bytes", int, DEFAULT_PREFIX_CACHE_BYTES, "llama.cpp: memory for evaluated prompt starts."),
    Option("verbose", bool, False, "llama.cpp: print its own log."),
)

TRANSFORMERS_OPTIONS = (
    Option(
        "device",
        str,
        None,
        "transformers: cpu, cuda, cuda:N or mps (default: cuda when present).",
        identity=True,
        flag="--device",
    ),
    Option(
        "dtype",
        str,
        None,
        "transformers: float32, bfloat16 or float16 (default: float32 on CPU).",
        identity=True,
        flag="--dtype",
    ),
)

SERVER_OPTIONS = (
    MAX_TOKENS,
    Option("timeout", float, 120.0, "Servers: seconds a request may take in all."),
    Option("connect_timeout", float, 10.0, "Servers: seconds to connect."),
    Option("read_timeout", float, None, "Servers: seconds without data (None: timeout).", nullable=True),
    Option("max_retries", int, 2, "Servers: retries of a request that may succeed again."),
    Option("backoff", float, 0.5, "Servers: seconds before the first retry, doubled each time."),
    Option("max_backoff", float, 8.0, "Servers: the longest wait between retries."),
    Option("max_retry_after", float, 60.0, "Servers: the longest Retry-After honoured."),
    Option("headers", dict, None, "Servers: extra HTTP headers."),
    Option("name", str, None, "Servers: the client's name in errors."),
    Option(
        "temperature",
        float,
        0.0,
        "Servers: sent with requests that set none (None: the server's).",
        identity=True,
        nullable=True,
    ),
)

OUTLINES_OPTIONS = (
    CHAT_TEMPLATE,
    Option("schema_compiler", str, "localjudge", "outlines: who compiles a JSON schema (localjudge or outlines)."),
    Option("backend", str, None, "outlines: its constraint backend (default: outlines-core)."),
    Option("whitespace_pattern", str, WHITESPACE_PATTERN, "outlines: the JSON whitespace it may write."),
    MAX_TOKENS,
    MODEL_NAME,
    FORMAT_INSTRUCTIONS,
)
