"""inspect_ai's ``model_graded_qa`` with its grader on `localjudge serve`, in a real ``eval`` of a tiny dataset.

The grader asks for a schema whose last field is the scorer's own ``GRADE: C`` or ``GRADE: I``: the server decodes
under it, so the scorer's pattern finds a grade in every answer.
"""

from __future__ import annotations

import json
import zipfile

import pytest
from support.network_guard import loopback_only
from support.serve_process import KEY

GRADE_SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "grade": {"type": "string", "enum": ["GRADE: C", "GRADE: I"]},
    },
    "required": ["reasoning", "grade"],
    "additionalProperties": False,
}
ANSWERS = {"4": "C", "5": "I"}  # the submission, and the grade it should get for "What is 2+2?" (target 4)


@pytest.mark.server
@pytest.mark.model
def test_inspect_ai_model_graded_qa_grades_through_serve(relay, tmp_path, monkeypatch):
    pytest.importorskip("inspect_ai")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # inspect's traces, not the user's
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with loopback_only() as refused:
        from inspect_ai import Task, eval
        from inspect_ai.dataset import Sample
        from inspect_ai.model import GenerateConfig, ModelOutput, ResponseSchema, get_model
        from inspect_ai.scorer import model_graded_qa
        from inspect_ai.solver import Generate, TaskState, solver
        from inspect_ai.util import JSONSchema

        @solver
        def submit_the_answer():  # the answers under test are given, so only the grader needs a model
            async def solve(state: TaskState, generate: Generate) -> TaskState:
                state.output = ModelOutput.from_content("submissions", state.metadata["answer"])
                return state

            return solve

        schema = ResponseSchema(name="grade", json_schema=JSONSchema.model_validate(GRADE_SCHEMA))
        grader = get_model(
            "openai-api/localjudge/default", base_url=relay.base_url, api_key=KEY,
            config=GenerateConfig(response_schema=schema),
        )  # fmt: skip
        task = Task(
            dataset=[Sample(input="What is 2+2?", target="4", metadata={"answer": a}) for a in ANSWERS],
            solver=submit_the_answer(),
            scorer=model_graded_qa(model=grader),
        )
        (log,) = eval(task, model=grader, log_dir=str(tmp_path / "logs"), display="none")
    assert refused == []  # loopback only

    assert log.status == "success", log.error
    grades = {sample.metadata["answer"]: sample.scores["model_graded_qa"].value for sample in log.samples}
    assert grades == ANSWERS

    chats = relay.chats()
    assert [chat.status for chat in chats] == [200] * len(ANSWERS), chats
    for chat in chats:
        assert chat.request["response_format"]["json_schema"]["schema"] == GRADE_SCHEMA
        verdict = json.loads(chat.response["choices"][0]["message"]["content"])
        assert set(verdict) == {"reasoning", "grade"} and verdict["grade"] in ("GRADE: C", "GRADE: I")

    (written,) = (tmp_path / "logs").glob("*.eval")
    with zipfile.ZipFile(written) as archive:
        assert all(KEY.encode() not in archive.read(name) for name in archive.namelist())  # the key is in no log
