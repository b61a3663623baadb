"""create_code_llm_as_judge / create_async_code_llm_as_judge: judge the code in an application's answer.

OpenEvals' code judge, offline, with its parameters, defaults and results:
the answer's text is read as OpenEvals reads it, the code taken out of it
(as it is, from its Markdown code blocks, by asking the judge, or by a
function of yours), and that code judged by the core of
:func:`~localjudge.create_llm_as_judge`. Asking the judge for the code is one
more step of the same plan, so the sync and async evaluators share every
decision. Without code to judge the result is OpenEvals' own: a false score
with ``{"code_extraction_failed": True}`` as its metadata. The prompts are
our own. Also the mirror of ``openevals.code.llm``: its names import from here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Optional, Union

from .._clients.completion import read_completion
from .._prompts.code import EXTRACTION_SCHEMA, extraction_messages, final_output_text, markdown_code
from .._prompts.parsing import parse_json_output
from .._prompts.prompting import DATA_NOT_INSTRUCTIONS
from .._wording import Message
from ..errors import TruncatedOutputError, UsageError
from ..types import FewShotExample, JudgeClient, JudgeRequest, Prompt
from .building import build_core
from .core import JudgeCore
from .plan import Step, arun_plan, run_plan
from .single import AsyncEvaluator, Evaluator
from .twin import async_twin
from .ways import stamped

if TYPE_CHECKING:
    from .._clients.result_cache import ResultCache
    from .._trust.correction import Correction

__all__ = [
    "CODE_CORRECTNESS_PROMPT",
    "CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS",
    "EXTRACTION_FAILED",
    "STRATEGIES",
    "create_async_code_llm_as_judge",
    "create_code_llm_as_judge",
]

FEEDBACK_KEY = "code_correctness"
#: how a local judge writes longer strings: without closing repeated passages, or with a larger budget
_LONGER_STRINGS = {
    False: Message("Load the judge with {close_loops:close_loops=False}"),
    True: Message("Load the judge with a larger {reasoning_budget:reasoning_budget=} (or None)"),
}
#: the ways of taking the code out of an answer: as it is, by asking the judge, from Markdown code blocks
STRATEGIES = ("none", "llm", "markdown_code_blocks")
Strategy = Literal["none", "llm", "markdown_code_blocks"]
#: the metadata of the result given when there is no code to judge (OpenEvals' own)
EXTRACTION_FAILED = "code_extraction_failed"


def _code_prompt(with_reference: bool) -> str:
    reference = (
        "\n\n<reference_output>\n{reference_outputs}\n</reference_output>\n\nThe reference output is what a "
        "correct program gives or looks like. Code that reaches it by other means is correct; code that only "
        "matches it on the examples shown, and would fail on other inputs, is not."
        if with_reference
        else ""
    )
    return (
        "Judge whether a piece of code correctly does what the task asks.\n"
        "Scale: true or false.\n"
        "- true: the code is complete, would run without syntax or runtime errors, does everything the task "
        "asks, handles its edge cases, and contains code only.\n"
        "- false: it has a bug, a syntax error, an unsafe practice or a needlessly slow approach; misses a "
        "requirement or an edge case; or mixes prose into the code.\n"
        "Judge what the code does, not its style.\n\n"
        f"{DATA_NOT_INSTRUCTIONS}\n\n<task>\n{{inputs}}\n</task>\n\n<code>\n{{outputs}}\n</code>{reference}\n"
    )


CODE_CORRECTNESS_PROMPT = _code_prompt(with_reference=False)
CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS = _code_prompt(with_reference=True)

#: the code is to be taken out by the strategy (no code_extractor was given)
_BY_STRATEGY = object()


@dataclass(frozen=True)
class CodeJudge:
    """The judge core, and how the code is taken out of each answer before it is judged."""

    core: JudgeCore
    strategy: str
    extractor: Optional[Callable[[Any], Any]]

    def given_code(self, outputs: object) -> Any:
        """What ``code_extractor`` makes of ``outputs`` (an awaitable from an async one), or the strategy's turn."""
        return _BY_STRATEGY if self.extractor is None else self.extractor(outputs)

    def plan(
        self, inputs: object, outputs: object, reference_outputs: object, kwargs: Mapping[str, Any], given: object
    ) -> Step:
        """One answer judged: its code taken out (one request for the "llm" strategy), then the verdict."""
        code = (yield from self.extract(outputs)) if given is _BY_STRATEGY else given
        if code is None:
            return {
                "key": self.core.feedback_key,
                "score": False,
                "comment": None,
                "metadata": {EXTRACTION_FAILED: True},
            }
        return (yield from self.core.plan(inputs, code, reference_outputs, kwargs))

    def extract(self, outputs: object) -> Step:
        """The code of the answer by the strategy; None when there is none."""
        text = final_output_text(outputs)
        if text is None:  # a message of tool calls alone: no code, by any strategy
            return None
        if self.strategy == "markdown_code_blocks":
            return markdown_code(_text_to_copy_from(text))
        if self.strategy != "llm":
            return text
        (response,) = yield [self.extraction_request(text)]
        return self.read_extracted(response)

    def extraction_request(self, text: object) -> JudgeRequest:
        """The judge asked for the code under a schema: any answer of a local judge parses."""
        request: JudgeRequest = {
            "messages": extraction_messages(_text_to_copy_from(text)),
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "extracted_code", "strict": True, "schema": EXTRACTION_SCHEMA},
            },
            "temperature": 0,
        }
        if self.core.model is not None:
            request["model"] = self.core.model
        return request

    def read_extracted(self, response: object) -> Optional[str]:
        """The code the judge copied (None for none); code a local judge's string budget cut short is an error."""
        backend = self.core.backend
        completion = read_completion(response, backend=backend)
        content = completion.text
        parsed = parse_json_output(content, EXTRACTION_SCHEMA, finish_reason=completion.finish_reason, backend=backend)
        closed_by = completion.closed_by
        if closed_by is not None:
            raise TruncatedOutputError(
                Message(
                    "The code the judge copied out of the answer was cut short (its string closed by the client's "
                    "{why}); cut code is not the code to judge. {remedy}, or take the code out with "
                    '{code_extraction_strategy:code_extraction_strategy="markdown_code_blocks"} or a '
                    "{code_extractor:code_extractor}.",
                    why="token budget" if closed_by == "budget" else "repetition check",
                    remedy=_LONGER_STRINGS[closed_by == "budget"],
                ),
                raw_output=content or "",
                backend=backend,
            )
        code = parsed["code"]
        return code if code.strip() else None


class CodeEvaluator(Evaluator):
    """What :func:`create_code_llm_as_judge` returns: the code taken out of ``outputs``, then judged."""

    def __init__(self, code_judge: CodeJudge) -> None:
        self.code_judge = code_judge
        self.core = code_judge.core

    def __call__(
        self, *, inputs: object = None, outputs: object, reference_outputs: object = None, **kwargs: object
    ) -> Any:
        given = self.code_judge.given_code(outputs)
        if inspect.isawaitable(given):
            _close(given)
            raise UsageError(
                "code_extractor returned an awaitable: an async extractor needs create_async_code_llm_as_judge"
            )
        plan = self.code_judge.plan(inputs, outputs, reference_outputs, kwargs, given)
        return run_plan(self.core.client, stamped(plan, self.way))


class AsyncCodeEvaluator(AsyncEvaluator):
    """What :func:`create_async_code_llm_as_judge` returns: the same, its client (and extractor) awaited."""

    def __init__(self, code_judge: CodeJudge) -> None:
        self.code_judge = code_judge
        self.core = code_judge.core

    async def __call__(
        self, *, inputs: object = None, outputs: object, reference_outputs: object = None, **kwargs: object
    ) -> Any:
        given = self.code_judge.given_code(outputs)
        if inspect.isawaitable(given):
            given = await given
        plan = self.code_judge.plan(inputs, outputs, reference_outputs, kwargs, given)
        return await arun_plan(self.core.client, stamped(plan, self.way))


def _text_to_copy_from(text: object) -> str:
    """The answer's content as text to take code out of; content of another kind is refused by its type."""
    if not isinstance(text, str):
        raise UsageError(
            f"the answer's content is {type(text).__name__}, not text; code can be taken only out of text "
            "(give the answer's text as its content, or a code_extractor of yours)"
        )
    return text


def _close(awaitable: object) -> None:
    """A coroutine never awaited, closed so that Python does not warn about it too."""
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


def _check_extraction(strategy: object, extractor: object) -> None:
    """The extraction options on their own: one way of taking the code out, and a known one."""
    if extractor is not None and strategy != "none":
        raise UsageError(
            "code_extractor and code_extraction_strategy cannot both be given: a code_extractor takes the code "
            "out itself; leave code_extraction_strategy at 'none'"
        )
    if extractor is not None and not callable(extractor):
        raise UsageError(
            f"code_extractor must be a function taking outputs and returning the code, got {type(extractor).__name__}"
        )
    if strategy not in STRATEGIES:
        raise UsageError(
            f"code_extraction_strategy must be one of {', '.join(map(repr, STRATEGIES))}, got {strategy!r}"
        )


def create_code_llm_as_judge(
    *,
    prompt: Prompt,
    feedback_key: str = FEEDBACK_KEY,
    code_extraction_strategy: Strategy = "none",
    code_extractor: Optional[Callable[[Any], Any]] = None,
    judge: Optional[JudgeClient] = None,
    model: Optional[str] = None,
    system: Optional[str] = None,
    continuous: bool = False,
    choices: Optional[list[float]] = None,
    use_reasoning: bool = True,
    few_shot_examples: Optional[list[FewShotExample]] = None,
    few_shot_placement: str = "end",
    cache: Union[bool, ResultCache, None] = None,
    calibration: Union[Correction, str, None] = None,
) -> CodeEvaluator:
    """An evaluator that judges the code in ``outputs``: OpenEvals' arguments, then those of create_llm_as_judge.

    ``outputs`` is the answer as a string, a message dict, or a dict with
    ``messages`` (the last one is the answer). ``code_extraction_strategy``
    takes the code out of it: ``"none"`` judges the text as it is,
    ``"markdown_code_blocks"`` its fenced code blocks (shell and JSON blocks
    left out), ``"llm"`` asks the judge to copy the code out, under a JSON
    schema. ``code_extractor`` is a function of yours from ``outputs`` to the
    code instead (with the async factory it may be async). When there is no
    code, the result is a false score with ``{"code_extraction_failed": True}``
    as its metadata, and no verdict is asked for.
    """
    _check_extraction(code_extraction_strategy, code_extractor)
    core = build_core(
        prompt=prompt,
        feedback_key=feedback_key or FEEDBACK_KEY,  # OpenEvals takes an empty key as its default
        judge=judge,
        model=model,
        system=system,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        output_schema=None,
        few_shot_placement=few_shot_placement,
        cache=cache,
        calibration=calibration,
    )
    return CodeEvaluator(CodeJudge(core, code_extraction_strategy, code_extractor))


def _awaited(evaluator: CodeEvaluator) -> AsyncCodeEvaluator:
    """The same judge, its client awaited."""
    return AsyncCodeEvaluator(evaluator.code_judge)


create_async_code_llm_as_judge = async_twin(create_code_llm_as_judge, _awaited, "create_async_code_llm_as_judge")
