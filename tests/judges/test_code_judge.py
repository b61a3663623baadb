"""The code judge's own decisions: the code asked of the judge under a schema, cut code refused, options checked."""

from __future__ import annotations

import json

import pytest

from localjudge import create_async_code_llm_as_judge, create_code_llm_as_judge
from localjudge._clients.base import make_chat_completion
from localjudge._judges.code import CODE_CORRECTNESS_PROMPT, CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS
from localjudge._prompts.code import EXTRACTION_SCHEMA
from localjudge.errors import TruncatedOutputError, UsageError
from localjudge.testing import ScriptedClient

VERDICT = json.dumps({"reasoning": "It adds.", "score": True})
ANSWER = "Sure! Use this: def add(a, b): return a + b. It adds two numbers."
CODE = "def add(a, b): return a + b"


def _extracted(code: str, **stats: object):
    response = make_chat_completion(json.dumps({"code": code}), model="scripted")
    if stats:
        response["decode_stats"] = stats
    return response


def test_the_llm_strategy_asks_for_the_code_under_a_schema_then_judges_that_code():
    client = ScriptedClient([_extracted(CODE), VERDICT])
    result = create_code_llm_as_judge(prompt=CODE_CORRECTNESS_PROMPT, judge=client, code_extraction_strategy="llm")(
        inputs="Write add(a, b).", outputs={"role": "assistant", "content": ANSWER}
    )
    assert result == {"key": "code_correctness", "score": True, "comment": "It adds.", "metadata": None}
    asked, judged = client.requests
    assert asked["response_format"]["json_schema"]["schema"] == EXTRACTION_SCHEMA
    assert asked["temperature"] == 0 and "model" not in asked  # no model name given: none sent
    assert asked["messages"][-1]["content"].endswith(f"<text>\n{ANSWER}\n</text>")
    assert f"<code>\n{CODE}\n</code>" in judged["messages"][0]["content"] and ANSWER not in str(judged)


@pytest.mark.parametrize("code", ["", "  \n"])
def test_no_code_from_the_judge_is_openevals_failed_extraction_and_no_verdict_is_asked(code):
    client = ScriptedClient([_extracted(code)])
    result = create_code_llm_as_judge(
        prompt=CODE_CORRECTNESS_PROMPT, judge=client, model="m", code_extraction_strategy="llm"
    )(outputs="Nothing to see.")
    assert result == {
        "key": "code_correctness",
        "score": False,
        "comment": None,
        "metadata": {"code_extraction_failed": True},
    }
    assert len(client.requests) == 1 and client.requests[0]["model"] == "m"


@pytest.mark.parametrize("closed_by", ["budget", "loop"])
def test_code_a_local_judge_cut_short_is_an_error_never_judged(closed_by):
    client = ScriptedClient([_extracted("def add(a, b):\n    ret", closed_by=closed_by)])
    evaluator = create_code_llm_as_judge(prompt=CODE_CORRECTNESS_PROMPT, judge=client, code_extraction_strategy="llm")
    with pytest.raises(TruncatedOutputError, match="cut short") as info:
        evaluator(outputs=ANSWER)
    remedy = "a larger reasoning_budget= (or None)" if closed_by == "budget" else "close_loops=False"
    assert remedy in str(info.value) and 'code_extraction_strategy="markdown_code_blocks"' in str(info.value)
    assert info.value.raw_output.startswith('{"code": "def add') and len(client.requests) == 1


def test_code_the_judge_stopped_at_max_tokens_is_an_error():
    client = ScriptedClient(['{"code": "def add(a'], finish_reason="length")
    evaluator = create_code_llm_as_judge(prompt=CODE_CORRECTNESS_PROMPT, judge=client, code_extraction_strategy="llm")
    with pytest.raises(TruncatedOutputError):
        evaluator(outputs=ANSWER)


async def test_the_async_twin_takes_the_same_steps():
    sync_client, async_client = ScriptedClient([_extracted(CODE), VERDICT]), ScriptedClient([_extracted(CODE), VERDICT])
    options = {"prompt": CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS, "code_extraction_strategy": "llm"}
    call = {"inputs": "add?", "outputs": ANSWER, "reference_outputs": "add(1, 2) == 3"}
    expected = create_code_llm_as_judge(**options, judge=sync_client)(**call)
    found = await create_async_code_llm_as_judge(**options, judge=async_client.aio)(**call)
    assert found == expected and async_client.requests == sync_client.requests


def test_an_async_extractor_needs_the_async_factory():
    async def extract(outputs):
        return CODE

    evaluator = create_code_llm_as_judge(
        prompt=CODE_CORRECTNESS_PROMPT, judge=ScriptedClient([]), code_extractor=extract
    )
    with pytest.raises(UsageError, match="create_async_code_llm_as_judge"):
        evaluator(outputs=ANSWER)


def test_an_extractor_gets_outputs_as_given_and_its_none_is_a_failed_extraction():
    seen = []
    evaluator = create_code_llm_as_judge(
        prompt=CODE_CORRECTNESS_PROMPT, judge=ScriptedClient([]), code_extractor=lambda o: seen.append(o)
    )
    result = evaluator(outputs={"any": "shape"})
    assert seen == [{"any": "shape"}] and result["metadata"] == {"code_extraction_failed": True}


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"code_extraction_strategy": "regex"}, "must be one of 'none', 'llm', 'markdown_code_blocks', got 'regex'"),
        ({"code_extractor": "python"}, "code_extractor must be a function"),
        ({"code_extractor": len, "code_extraction_strategy": "llm"}, "cannot both be given"),
    ],
)
def test_extraction_options_are_checked_when_the_judge_is_built(options, says):
    with pytest.raises(UsageError, match=says.replace("(", r"\(")):
        create_code_llm_as_judge(prompt=CODE_CORRECTNESS_PROMPT, judge=ScriptedClient([]), **options)


def test_an_empty_feedback_key_is_openevals_default_key():
    evaluator = create_code_llm_as_judge(prompt="{outputs}", feedback_key="", judge=ScriptedClient([VERDICT]))
    assert evaluator(outputs=CODE)["key"] == "code_correctness"


def test_content_blocks_that_are_not_text_cannot_be_copied_from():
    evaluator = create_code_llm_as_judge(prompt="{outputs}", judge=ScriptedClient([]), code_extraction_strategy="llm")
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
    with pytest.raises(UsageError, match="text only"):
        evaluator(outputs={"role": "assistant", "content": [image]})


def test_our_prompts_show_the_task_the_code_and_the_reference():
    assert (
        "<code>\n{outputs}\n</code>" in CODE_CORRECTNESS_PROMPT and "{reference_outputs}" not in CODE_CORRECTNESS_PROMPT
    )
    assert (
        "<reference_output>\n{reference_outputs}\n</reference_output>" in CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS
    )


def test_the_cut_is_read_where_the_local_client_writes_it():
    from localjudge._clients import completion
    from localjudge._clients.fallback import FALLBACK_FIELD
    from localjudge._clients.local import DECODE_STATS_FIELD, READOUT_FIELD

    assert completion._DECODE_STATS == DECODE_STATS_FIELD
    assert (completion._READOUT, completion._ANSWERED_BY) == (READOUT_FIELD, FALLBACK_FIELD)


@pytest.mark.parametrize("strategy", ["none", "markdown_code_blocks", "llm"])
def test_a_message_of_tool_calls_alone_has_no_code_by_any_strategy(strategy):
    evaluator = create_code_llm_as_judge(
        prompt="{outputs}", judge=ScriptedClient([]), code_extraction_strategy=strategy
    )
    result = evaluator(outputs={"role": "assistant", "content": None, "tool_calls": []})
    assert result["score"] is False and result["metadata"] == {"code_extraction_failed": True}


@pytest.mark.parametrize("strategy", ["markdown_code_blocks", "llm"])
def test_content_that_is_not_text_is_refused_by_its_type_when_code_is_taken_out_of_it(strategy):
    evaluator = create_code_llm_as_judge(
        prompt="{outputs}", judge=ScriptedClient([]), code_extraction_strategy=strategy
    )
    with pytest.raises(UsageError, match="content is dict, not text"):
        evaluator(outputs={"role": "assistant", "content": {"code": CODE}})
