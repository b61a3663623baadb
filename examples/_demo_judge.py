"""The judge the seed demos use in place of ``ChatOpenAI(model="gpt-5.4-mini")``.

``LOCALJUDGE_DEMO_JUDGE=scripted`` gives a ``ScriptedClient`` that answers like a
careful grader would (it counts the right names in the answer), so the demos run
anywhere in a blink; anything else gives ``None``, so the evaluator uses the
default local judge (or the one $LOCALJUDGE_MODEL names).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Optional

from localjudge.testing import ScriptedClient

#: the four generals the scripted grader accepts
GENERALS = ("白起", "王翦", "廉颇", "李牧")


def demo_judge() -> Optional[Any]:
    if os.environ.get("LOCALJUDGE_DEMO_JUDGE", "").strip().lower() == "scripted":
        return ScriptedClient([_grade], repeat=True)
    return None


def _answer_text(request: dict[str, Any]) -> str:
    """The answer under review: the line after **答案** in the last user message."""
    user = [m for m in request["messages"] if m["role"] == "user"][-1]
    content = (
        user["content"]
        if isinstance(user["content"], str)
        else "".join(block.get("text", "") for block in user["content"])
    )
    match = re.search(r"\*\*答案\*\*\s*\n(.*)", content)
    return match.group(1) if match else content


def _grade(request: dict[str, Any]) -> str:
    answer = _answer_text(request)
    right = [name for name in GENERALS if name in answer]
    fraction = len(right) / len(GENERALS)
    score_schema = request["response_format"]["json_schema"]["schema"]["properties"]["score"]
    if score_schema["type"] == "boolean":
        score: Any = fraction == 1.0
    elif "enum" in score_schema:
        score = min(score_schema["enum"], key=lambda choice: abs(choice - fraction))
    else:
        score = fraction
    reasoning = (
        f"通常公认的战国四大名将是{'、'.join(GENERALS)}。答案中正确的有{len(right)}位"
        f"（{'、'.join(right) or '无'}）。Thus, the score should be: {json.dumps(score)}."
    )
    return json.dumps({"reasoning": reasoning, "score": score}, ensure_ascii=False)
