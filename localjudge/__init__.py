"""localjudge: an offline LLM-as-a-judge that keeps OpenEvals' API.

Heavy libraries (llama_cpp, numpy, outlines_core, httpx) load only when a
backend that needs them is used, so importing this package stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._clients.base import AsyncChatClient, ChatClient, ChatResponse
from ._clients.resolve import resolve_model
from ._judges.single import create_async_llm_as_judge, create_llm_as_judge
from ._judges.ways import WAYS, Way
from ._lazy import lazy_attributes
from ._prompts.schema import default_output_schema
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

if TYPE_CHECKING:  # what the lazy names below are, for a type checker and an editor; imported on first use
    from ._clients.chat_model import LocalChatModel
    from ._clients.fallback import AsyncFallbackClient, FallbackClient
    from ._clients.llamacpp import LlamaCppClient
    from ._clients.outlines import OutlinesClient
    from ._clients.pool import AsyncPoolClient, PoolClient
    from ._clients.remote import AsyncOpenAICompatibleClient, OpenAICompatibleClient
    from ._clients.transformers import TransformersClient
    from ._judges.code import create_async_code_llm_as_judge, create_code_llm_as_judge
    from ._judges.ensemble import create_async_ensemble_judge, create_ensemble_judge
    from ._judges.pairwise import create_async_pairwise_judge, create_pairwise_judge
    from ._judges.trajectory import create_async_trajectory_llm_as_judge, create_trajectory_llm_as_judge
    from ._trust.calibration_file import read_calibration

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
    "LlamaCppClient": "._clients.llamacpp",
    "OpenAICompatibleClient": "._clients.remote",
    "AsyncOpenAICompatibleClient": "._clients.remote",
    "FallbackClient": "._clients.fallback",
    "AsyncFallbackClient": "._clients.fallback",
    "PoolClient": "._clients.pool",
    "create_pairwise_judge": "._judges.pairwise",
    "create_async_pairwise_judge": "._judges.pairwise",
    "create_ensemble_judge": "._judges.ensemble",
    "create_async_ensemble_judge": "._judges.ensemble",
    "create_trajectory_llm_as_judge": "._judges.trajectory",
    "create_async_trajectory_llm_as_judge": "._judges.trajectory",
    "create_code_llm_as_judge": "._judges.code",
    "create_async_code_llm_as_judge": "._judges.code",
    "AsyncPoolClient": "._clients.pool",
    "TransformersClient": "._clients.transformers",
    "OutlinesClient": "._clients.outlines",
    "read_calibration": "._trust.calibration_file",
    "LocalChatModel": "._clients.chat_model",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
