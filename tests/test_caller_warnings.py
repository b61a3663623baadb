"""A warning raised deep in the package points at the caller's line, through sync and async factories alike."""

from __future__ import annotations

import sys
import warnings

from localjudge import create_async_llm_as_judge, create_async_pairwise_judge, create_pairwise_judge
from localjudge.testing import ScriptedClient


def test_each_warning_is_shown_at_the_line_that_made_the_judge():
    impossible_example = [{"inputs": "2+2?", "outputs": "4", "score": "yes"}]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        here = sys._getframe().f_lineno
        create_pairwise_judge(judge=ScriptedClient([]), way="weighed")  # weights fitted for another model
        create_async_pairwise_judge(judge=ScriptedClient([]), way="weighed")  # the twin: one frame deeper
        create_async_llm_as_judge(prompt="{outputs}", judge=ScriptedClient([]), few_shot_examples=impossible_example)
    assert [(warning.filename, warning.lineno) for warning in caught] == [(__file__, here + n) for n in (1, 2, 3)]
