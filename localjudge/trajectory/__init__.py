"""Judging an agent's trajectory: its messages, tool calls and tool results, as OpenEvals' trajectory judge does.

``llm`` holds the judge (and mirrors ``openevals.trajectory.llm``); ``text``
renders a trajectory as the judge reads it. Names load on first use.
"""

from __future__ import annotations

from .._lazy import lazy_attributes

__all__ = [
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "create_async_trajectory_llm_as_judge",
    "create_trajectory_llm_as_judge",
    "trajectory_prompt",
    "trajectory_text",
]

_LAZY = {
    "TRAJECTORY_ACCURACY_PROMPT": ".llm",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE": ".llm",
    "create_async_trajectory_llm_as_judge": ".llm",
    "create_trajectory_llm_as_judge": ".llm",
    "trajectory_prompt": ".llm",
    "trajectory_text": ".text",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
