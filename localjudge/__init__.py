"""localjudge: an offline LLM-as-a-judge that keeps OpenEvals' API.

Heavy libraries (llama_cpp, numpy, outlines_core, httpx) load only when a
backend that needs them is used, so importing this package stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_attributes
from .clients.base import AsyncChatClient, ChatClient, ChatResponse
from .clients.resolve import resolve_model
from .errors import (
    AllClientsFailedError,
    JudgeRuntimeError,
    LocalJudgeError,
    MissingDependencyError,
    MissingTemplateVariableError,
    ModelError,
    ModelLoadError,
    ModelSpecError,
    OutputParseError,
    RemoteCallError,
    TruncatedOutputError,
    UnsupportedSchemaError,
    UsageError,
)
from .judges.single import create_async_llm_as_judge, create_llm_as_judge
from .judges.ways import WAYS, Way
from .prompts.schema import default_output_schema

if TYPE_CHECKING:  # what the lazy names below are, for a type checker and an editor; imported on first use
    from .clients.chat_model import LocalChatModel
    from .clients.fallback import AsyncFallbackClient, FallbackClient
    from .clients.llamacpp import LlamaCppClient
    from .clients.outlines import OutlinesClient
    from .clients.pool import AsyncPoolClient, PoolClient
    from .clients.remote import AsyncOpenAICompatibleClient, OpenAICompatibleClient
    from .clients.transformers import TransformersClient
    from .judges.code import create_async_code_llm_as_judge, create_code_llm_as_judge
    from .judges.ensemble import create_async_ensemble_judge, create_ensemble_judge
    from .judges.pairwise import create_async_pairwise_judge, create_pairwise_judge
    from .judges.trajectory import create_async_trajectory_llm_as_judge, create_trajectory_llm_as_judge
    from .trust.calibration_file import read_calibration

__version__ = "0.1.0"

__all__ = [
    "WAYS",
    "AllClientsFailedError",
    "AsyncChatClient",
    "AsyncFallbackClient",
    "AsyncOpenAICompatibleClient",
    "AsyncPoolClient",
    "ChatClient",
    "ChatResponse",
    "FallbackClient",
    "JudgeRuntimeError",
    "LlamaCppClient",
    "LocalChatModel",
    "LocalJudgeError",
    "MissingDependencyError",
    "MissingTemplateVariableError",
    "ModelError",
    "ModelLoadError",
    "ModelSpecError",
    "OpenAICompatibleClient",
    "OutlinesClient",
    "OutputParseError",
    "PoolClient",
    "RemoteCallError",
    "TransformersClient",
    "TruncatedOutputError",
    "UnsupportedSchemaError",
    "UsageError",
    "Way",
    "__version__",
    "create_async_code_llm_as_judge",
    "create_async_ensemble_judge",
    "create_async_llm_as_judge",
    "create_async_pairwise_judge",
    "create_async_trajectory_llm_as_judge",
    "create_code_llm_as_judge",
    "create_ensemble_judge",
    "create_llm_as_judge",
    "create_pairwise_judge",
    "create_trajectory_llm_as_judge",
    "default_output_schema",
    "read_calibration",
    "resolve_model",
]

_LAZY = {
    "LlamaCppClient": ".clients.llamacpp",
    "OpenAICompatibleClient": ".clients.remote",
    "AsyncOpenAICompatibleClient": ".clients.remote",
    "FallbackClient": ".clients.fallback",
    "AsyncFallbackClient": ".clients.fallback",
    "PoolClient": ".clients.pool",
    "create_pairwise_judge": ".judges.pairwise",
    "create_async_pairwise_judge": ".judges.pairwise",
    "create_ensemble_judge": ".judges.ensemble",
    "create_async_ensemble_judge": ".judges.ensemble",
    "create_trajectory_llm_as_judge": ".judges.trajectory",
    "create_async_trajectory_llm_as_judge": ".judges.trajectory",
    "create_code_llm_as_judge": ".judges.code",
    "create_async_code_llm_as_judge": ".judges.code",
    "AsyncPoolClient": ".clients.pool",
    "TransformersClient": ".clients.transformers",
    "OutlinesClient": ".clients.outlines",
    "read_calibration": ".trust.calibration_file",
    "LocalChatModel": ".clients.chat_model",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
