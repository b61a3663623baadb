"""Every prompt OpenEvals ships, judged offline on the tiny model with its own text: each text prompt gives a
verdict decoded under the grammar, and each image or voice prompt is refused by the text-only judge, naming one
that could take it."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from support.trajectories import CALCULATOR

openevals_prompts = pytest.importorskip("openevals.prompts")

from localjudge import (  # noqa: E402
    UsageError,
    create_code_llm_as_judge,
    create_llm_as_judge,
    create_trajectory_llm_as_judge,
)
from localjudge._prompts.prompting import template_fields  # noqa: E402

pytestmark = [pytest.mark.model, pytest.mark.slow]


def _shipped() -> dict[str, tuple[str, str]]:
    """Each prompt constant of openevals.prompts and its modules: (its text, the kind it is filed under)."""
    found: dict[str, tuple[str, str]] = {}
    for module in pkgutil.walk_packages(openevals_prompts.__path__, f"{openevals_prompts.__name__}."):
        kind = module.name.split(".")[2]
        for name, value in vars(importlib.import_module(module.name)).items():
            if "_PROMPT" in name and name.isupper() and isinstance(value, str):
                found.setdefault(name, (value, kind))
    return found


SHIPPED = _shipped()
MEDIA = {"image": "image/png", "voice": "audio/wav"}
TEXT = sorted(name for name, (_, kind) in SHIPPED.items() if kind not in MEDIA)
REFUSED = sorted(name for name, (_, kind) in SHIPPED.items() if kind in MEDIA)

VALUES = {
    "inputs": "At what temperature does water boil at sea level?",
    "outputs": "Water boils at 100 °C at sea level.",
    "reference_outputs": "100 degrees Celsius.",
    "context": "At sea level, pure water boils at 100 °C (212 °F).",
    "plan": "1. Recall the boiling point of water. 2. Answer in degrees Celsius.",
}
CONVERSATION = [
    {"role": "user", "content": "My order has not arrived. Can you check order 1182?"},
    {"role": "assistant", "content": "Order 1182 shipped yesterday and arrives tomorrow."},
    {"role": "user", "content": "Thanks, that helps!"},
]
CODE = {"inputs": "Write add(a, b) in Python.", "outputs": "def add(a, b):\n    return a + b\n"}


def test_every_prompt_is_filed_under_a_kind_this_test_knows():
    assert set(openevals_prompts.__all__) <= set(SHIPPED)
    assert {kind for _, kind in SHIPPED.values()} <= {
        "quality", "rag", "safety", "security", "trajectory", "conversation", *MEDIA,
    }  # fmt: skip
    assert len(TEXT) >= 25 and len(REFUSED) >= 6


def _judge_and_call(name: str, judge: object) -> tuple[object, dict[str, object]]:
    """The judge for a prompt's kind, and a small example of that kind for its own placeholders."""
    prompt, kind = SHIPPED[name]
    fields = template_fields(prompt)
    if kind == "trajectory":
        call = {"outputs": CALCULATOR, **({"reference_outputs": CALCULATOR} if "reference_outputs" in fields else {})}
        return create_trajectory_llm_as_judge(prompt=prompt, judge=judge), call
    if name.startswith("CODE_CORRECTNESS"):
        evaluator = create_code_llm_as_judge(prompt=prompt, judge=judge)
        return evaluator, {**CODE, **({"reference_outputs": "add(2, 3) == 5"} if "reference_outputs" in fields else {})}
    unknown = set(fields) - set(VALUES)
    assert not unknown, f"{name} has placeholders this test has no example for: {unknown}"
    call = {field: VALUES[field] for field in fields}
    if kind == "conversation":
        call["outputs"] = CONVERSATION
    return create_llm_as_judge(prompt=prompt, judge=judge), call


@pytest.mark.parametrize("name", TEXT)
def test_each_text_prompt_gives_a_verdict_on_the_tiny_model(tiny_judge, name):
    evaluator, call = _judge_and_call(name, tiny_judge)
    result = evaluator(**call)
    assert isinstance(result["score"], bool) and isinstance(result["comment"], str)
    probabilities = result["metadata"]["probabilities"]
    assert set(probabilities) == {"true", "false"} and sum(probabilities.values()) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("name", REFUSED)
def test_each_image_and_voice_prompt_is_refused_naming_a_judge_that_takes_it(tiny_judge, name):
    prompt, kind = SHIPPED[name]
    attachment = {"mime_type": MEDIA[kind], "data": "AAAA"}
    evaluator = create_llm_as_judge(prompt=prompt, judge=tiny_judge)
    with pytest.raises(UsageError) as info:
        evaluator(inputs="Describe the recording.", outputs="A calm voice.", attachments=[attachment])
    said = str(info.value)
    what, judge = ("an image", "a vision model") if kind == "image" else ("audio", "a model that takes audio input")
    assert f"reads text only (a local model here is text-only), and a message holds {what}" in said
    assert f"Judge it with {judge} on an OpenAI-compatible server" in said
