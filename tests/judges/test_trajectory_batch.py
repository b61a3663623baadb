"""`localjudge batch --trajectory`: each row's outputs is an agent's messages; a malformed one is that row's error."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.trajectories import CALCULATOR

from localjudge import _cli as cli
from localjudge._prompts.trajectory import trajectory_text
from localjudge.testing import ScriptedClient

GOOD = CALCULATOR
ROWS = [
    {"id": "with-reference", "outputs": GOOD, "reference_outputs": GOOD},
    {"id": "agent-state", "inputs": "Multiply 17 by 23", "outputs": {"messages": GOOD, "steps": 2}},
    {"id": "no-role", "outputs": [{"content": "hi"}]},
    {"id": "call-as-text", "outputs": [GOOD[0], {"role": "assistant", "tool_calls": ["calc(17*23)"]}]},
    {"id": "a-string", "outputs": "user: hi"},
]


@pytest.fixture
def judge(monkeypatch):
    from localjudge._cli.commands import judging as command_judge

    client = ScriptedClient(['{"reasoning": "Direct.", "score": true}'], repeat=True)
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    return client


def _write(tmp_path, rows):
    data = tmp_path / "runs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return data


def test_rows_of_messages_are_judged_as_trajectories_and_bad_ones_are_their_rows_errors(judge, tmp_path):
    data = _write(tmp_path, ROWS)
    result = CliRunner().invoke(cli.main, ["batch", str(data), "--trajectory", "--no-cache", "--reasoning"])
    assert result.exit_code == 1, result.output  # some rows failed; the others were scored
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "runs.results.jsonl").read_text().splitlines())}
    assert list(records) == [row["id"] for row in ROWS]
    for scored in ("with-reference", "agent-state"):
        assert records[scored]["result"]["key"] == "trajectory_accuracy"
        assert records[scored]["result"]["score"] is True
    errors = {row_id: records[row_id]["error"] for row_id in ("no-role", "call-as-text", "a-string")}
    assert {error["type"] for error in errors.values()} == {"InvalidTrajectoryError"}
    assert "outputs[0] has no 'role'" in errors["no-role"]["message"]
    assert "outputs[1].tool_calls[0] is a string, not an object" in errors["call-as-text"]["message"]
    assert "outputs is a string, not a trajectory" in errors["a-string"]["message"]

    first, second = (request["messages"][-1]["content"] for request in judge.requests)
    assert len(judge.requests) == 2  # bad rows never reach the judge
    assert f"<reference_trajectory>\n{trajectory_text(GOOD)}\n</reference_trajectory>" in first
    assert "<request>\nMultiply 17 by 23\n</request>" in second and "reference" not in second.lower()
    assert f"<trajectory>\n{trajectory_text(GOOD)}\n</trajectory>" in second


def test_without_the_flag_a_message_list_is_an_answer_as_json(judge, tmp_path):
    data = _write(tmp_path, ROWS[:1])
    result = CliRunner().invoke(cli.main, ["batch", str(data), "--no-cache", "--reasoning"])
    assert result.exit_code == 0, result.output
    prompt = judge.requests[0]["messages"][-1]["content"]
    assert json.dumps(GOOD) in prompt and "<tool_call>" not in prompt


def test_a_prompt_of_ones_own_and_a_mapped_column_work_with_trajectories(judge, tmp_path):
    data = _write(tmp_path, [{"id": "m", "messages": GOOD}])
    options = [
        "--trajectory",
        "--map",
        "outputs=messages",
        "--prompt",
        "Steps:\n{outputs}",
        "--no-cache",
        "--reasoning",
    ]
    result = CliRunner().invoke(cli.main, ["batch", str(data), *options])
    assert result.exit_code == 0, result.output
    assert judge.requests[0]["messages"][-1]["content"] == "Steps:\n" + trajectory_text(GOOD)


@pytest.mark.parametrize(
    "flag", [["--pairwise"], ["--evaluator", "correctness"], ["--calibrated"], ["--self-reference"]]
)
def test_options_that_do_not_fit_a_trajectory_are_refused_before_any_row(judge, tmp_path, flag):
    data = _write(tmp_path, ROWS[:1])
    result = CliRunner().invoke(cli.main, ["batch", str(data), "--trajectory", *flag, "--no-cache"])
    assert result.exit_code == 2, result.output
    assert f"{flag[0]} does not go with --trajectory" in result.output
    assert judge.requests == []
