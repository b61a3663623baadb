"""The public path of the trajectory judge (mirror of ``openevals.trajectory``): :mod:`localjudge._judges.trajectory`.

The judge is in :mod:`localjudge._judges.trajectory`; a trajectory rendered as the
judge reads it, in :mod:`localjudge._prompts.trajectory`.
"""

from .._judges.trajectory import (
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
    trajectory_prompt,
)
from .._prompts.trajectory import trajectory_text

__all__ = [
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "create_async_trajectory_llm_as_judge",
    "create_trajectory_llm_as_judge",
    "trajectory_prompt",
    "trajectory_text",
]
