"""OpenEvals' multi-turn simulator, offline: its simulated user and the app on the default model, our judge at the end."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.model


def test_a_simulated_conversation_on_the_default_model_is_judged_by_ours():
    from openevals.simulators import create_llm_simulated_user, run_multiturn_simulation

    from localjudge import LocalChatModel, create_trajectory_llm_as_judge

    assistant = LocalChatModel(model="default", max_tokens=64)
    history: dict[str, list[dict]] = {}

    def app(message: dict, *, thread_id: str, **_: object) -> dict:
        """A support assistant that keeps each thread's conversation."""
        thread = history.setdefault(thread_id, [{"role": "system", "content": "You answer airline customers briefly."}])
        thread.append({"role": "user", "content": message["content"]})
        reply = assistant.invoke(thread)
        thread.append({"role": "assistant", "content": reply.content})
        return {"role": "assistant", "content": reply.content, "id": reply.id}

    user = create_llm_simulated_user(
        system="You are a customer whose flight was cancelled. Ask for a refund, in one short sentence a turn.",
        client=LocalChatModel(model="default", max_tokens=48),
    )
    judge = create_trajectory_llm_as_judge(model="default", feedback_key="resolved", use_reasoning=False)
    result = run_multiturn_simulation(app=app, user=user, max_turns=2, trajectory_evaluators=[judge])

    trajectory = result["trajectory"]
    assert [message["role"] for message in trajectory] == ["user", "assistant", "user", "assistant"]
    assert all(isinstance(message["content"], str) and message["content"].strip() for message in trajectory)
    assert len({message["id"] for message in trajectory}) == 4  # every message kept: none merged away by its id
    (verdict,) = result["evaluator_results"]  # OpenEvals prints and drops an evaluator's error: this one ran
    assert verdict["key"] == "resolved" and isinstance(verdict["score"], bool)
