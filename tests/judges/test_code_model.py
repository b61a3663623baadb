"""The code judge on the real tiny model: each way of taking the code out ends in a verdict decoded under the grammar."""

from __future__ import annotations

import json

import pytest

from localjudge import create_code_llm_as_judge
from localjudge._judges.plan import keeping_exchanges
from localjudge.code import CODE_CORRECTNESS_PROMPT

pytestmark = pytest.mark.model

SNIPPET = "def add(a, b):\n    return a + b\n"
OUTPUTS = {
    "none": SNIPPET,
    "markdown_code_blocks": f"Here it is:\n\n```python\n{SNIPPET}```\n\nInstall nothing:\n```bash\npip --version\n```\n",
    "llm": SNIPPET,
}


@pytest.mark.parametrize("strategy", list(OUTPUTS))
def test_each_extraction_strategy_gives_a_verdict_on_the_tiny_model(tiny_judge, strategy):
    evaluator = create_code_llm_as_judge(
        prompt=CODE_CORRECTNESS_PROMPT, judge=tiny_judge, code_extraction_strategy=strategy, use_reasoning=False
    )
    with keeping_exchanges() as exchanges:
        result = evaluator(inputs="Write add(a, b) in Python.", outputs=OUTPUTS[strategy])
    assert result["key"] == "code_correctness" and isinstance(result["score"], bool)
    probabilities = result["metadata"]["probabilities"]  # a verdict read out over the values the grammar allows
    assert set(probabilities) == {"true", "false"} and sum(probabilities.values()) == pytest.approx(1.0, abs=1e-6)
    *extraction, verdict = exchanges
    assert len(extraction) == (strategy == "llm")
    shown = verdict["messages"][-1]["content"]
    if strategy == "llm":  # the code the model copied, and nothing else, is what it judged
        copied = json.loads(extraction[0]["output"])["code"]
        assert copied.strip() and f"<code>\n{copied}\n</code>" in shown
    else:
        assert "return a + b" in shown and "pip --version" not in shown
