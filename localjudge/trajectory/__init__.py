"""The public path of the trajectory judge (mirror of ``openevals.trajectory``): :mod:`localjudge.judges.trajectory`.

The judge is in :mod:`localjudge.judges.trajectory`; a trajectory rendered as the
judge reads it, in :mod:`localjudge.prompts.trajectory`.
"""

from ..judges.trajectory import (
    TRAJECTORY_ACCURACY_PROMPT,
    TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE,
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
    trajectory_prompt,
)
from ..prompts.trajectory import trajectory_text

__all__ = [
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "create_async_trajectory_llm_as_judge",
    "create_trajectory_llm_as_judge",
    "trajectory_prompt",
    "trajectory_text",
]
