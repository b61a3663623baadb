"""A local model judges a trajectory under the grammar of the score schema: only a valid verdict can come out."""

from __future__ import annotations

import pytest

from localjudge import create_trajectory_llm_as_judge

pytestmark = pytest.mark.model

TRAJECTORY = [
    {"role": "user", "content": "What is the capital of France?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "France"}'}}],
    },
    {"role": "tool", "content": "France: capital Paris", "tool_call_id": "c"},
    {"role": "assistant", "content": "Paris."},
]


def test_a_local_judge_decodes_a_trajectory_verdict_under_the_grammar(engines):
    client = engines("llama.cpp").client
    result = create_trajectory_llm_as_judge(judge=client, use_reasoning=False)(
        outputs=TRAJECTORY, reference_outputs=TRAJECTORY
    )
    assert result["key"] == "trajectory_accuracy" and isinstance(result["score"], bool)
    probabilities = result["metadata"]["probabilities"]  # read out over the values the grammar allows
    assert set(probabilities) == {"true", "false"}
    assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-6)
    assert probabilities[str(result["score"]).lower()] >= 0.5  # the verdict is the likelier value


def test_a_local_judge_gives_reasoning_and_one_of_the_choices(engines):
    client = engines("llama.cpp").client
    result = create_trajectory_llm_as_judge(judge=client, choices=[0.0, 0.5, 1.0])(outputs={"messages": TRAJECTORY})
    assert result["score"] in (0.0, 0.5, 1.0) and isinstance(result["score"], float)
    assert isinstance(result["comment"], str) and result["comment"]


def test_batch_judges_trajectory_rows_on_the_default_model(tmp_path):
    import json

    from click.testing import CliRunner

    from localjudge import _cli as cli

    rows = [
        {"id": "state", "outputs": {"messages": TRAJECTORY}, "reference_outputs": TRAJECTORY},
        {"id": "no-role", "outputs": [{"content": "Paris."}]},
    ]
    data = tmp_path / "runs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = CliRunner().invoke(cli.main, ["batch", str(data), "--trajectory", "--no-reasoning", "--no-cache"])
    assert result.exit_code == 1, result.output  # one row failed
    scored, failed = map(json.loads, (tmp_path / "runs.results.jsonl").read_text().splitlines())
    assert scored["result"]["key"] == "trajectory_accuracy" and isinstance(scored["result"]["score"], bool)
    assert set(scored["result"]["metadata"]["probabilities"]) == {"true", "false"}
    assert failed["error"]["type"] == "InvalidTrajectoryError" and "has no 'role'" in failed["error"]["message"]
