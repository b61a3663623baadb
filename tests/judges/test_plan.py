"""The plan drivers keep each request and raw answer where a caller asks, in its own context only."""

from __future__ import annotations

import asyncio
import json
import threading

from localjudge._judges.plan import keeping_exchanges
from localjudge._judges.single import create_async_llm_as_judge, create_llm_as_judge
from localjudge.testing import ScriptedClient


def test_a_judgement_in_a_keeping_context_keeps_its_requests_and_raw_answers_in_order():
    judge = ScriptedClient(["4", '{"score": false}'])
    evaluator = create_llm_as_judge(
        prompt="Is {outputs} right for {inputs}? {reference_outputs}",
        judge=judge,
        use_reasoning=False,
        self_reference=True,
    )
    with keeping_exchanges() as kept:
        evaluator(inputs="2+2?", outputs="5")
    own, verdict = kept
    assert own == {"messages": judge.requests[0]["messages"], "output": "4"}
    assert verdict["messages"] == judge.requests[1]["messages"] and json.loads(verdict["output"]) == {"score": False}
    judge = ScriptedClient(['{"score": true}'])
    create_llm_as_judge(prompt="{outputs}", judge=judge, use_reasoning=False)(outputs="x")
    assert len(kept) == 2  # outside the context nothing more is kept


def test_rows_judged_side_by_side_in_threads_each_keep_their_own():
    evaluator = create_llm_as_judge(
        prompt="Is {outputs} right?", judge=ScriptedClient(['{"score": true}'], repeat=True), use_reasoning=False
    )
    kept: dict[str, list] = {}

    def judge(text: str) -> None:
        with keeping_exchanges() as mine:
            evaluator(outputs=text)
            kept[text] = mine

    threads = [threading.Thread(target=judge, args=(text,)) for text in ("one", "two", "three")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for text, exchanges in kept.items():
        (exchange,) = exchanges
        assert f"Is {text} right?" in exchange["messages"][-1]["content"]


def test_the_async_driver_keeps_them_too():
    evaluator = create_async_llm_as_judge(
        prompt="Is {outputs} right?", judge=ScriptedClient(['{"score": true}']), use_reasoning=False
    )

    async def judged() -> list:
        with keeping_exchanges() as kept:
            await evaluator(outputs="4")
        return kept

    (exchange,) = asyncio.run(judged())
    assert "Is 4 right?" in exchange["messages"][-1]["content"] and json.loads(exchange["output"]) == {"score": True}
