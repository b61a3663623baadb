"""create_llm_as_judge / create_async_llm_as_judge: one core, two thin callers.

The core (:mod:`.core`) plans each judgement: the requests, and what is
read from their responses. The sync evaluator drives the plan by calling
the client directly, the async one by awaiting it (or running a sync client
in a worker thread). Nothing else differs between the two.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Optional, Union

from ..types import FewShotExample, JudgeClient, OutputSchemaSpec, Prompt
from .building import build_core
from .core import JudgeCore
from .plan import arun_plan, run_plan
from .twin import async_twin
from .ways import Way, stamped

if TYPE_CHECKING:
    from .._clients.result_cache import ResultCache
    from .._trust.correction import Correction

__all__ = [
    "AsyncEvaluator",
    "AsyncJudgeEvaluator",
    "Evaluator",
    "JudgeCore",
    "JudgeEvaluator",
    "build_core",
    "create_async_llm_as_judge",
    "create_llm_as_judge",
]


class Evaluator:
    """Base of the evaluators the factories return: objects called as OpenEvals calls its functions.

    ``__name__`` is the name the function they replace had, which LangSmith
    gives an evaluator's runs.
    """

    __name__ = "evaluator"
    __call__: Callable[..., Any]
    #: the way it judges, named in each result's metadata with the requests it took (None: OpenEvals' result as is)
    way: Optional[Way] = None


async def _a_coroutine_function() -> None:
    """Its code is what an async evaluator shows ``inspect`` (see AsyncEvaluator)."""


class AsyncEvaluator(Evaluator):
    """Base of the async evaluators: ``inspect.iscoroutinefunction`` is true of them, as of an ``async def``.

    LangSmith and OpenEvals ask it to know whether to await an evaluator, and
    before Python 3.12 it answers false for an object with an ``async __call__``.
    It answers from a function-like object's ``__code__``; ``__signature__``
    keeps ``inspect.signature`` reading ``__call__``'s keywords.
    """

    __code__ = _a_coroutine_function.__code__
    __defaults__ = None
    __kwdefaults__ = None
    __call__: Callable[..., Awaitable[Any]]

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.__call__)


class JudgeEvaluator(Evaluator):
    """What :func:`create_llm_as_judge` returns: its core builds each request and reads each answer."""

    def __init__(self, core: JudgeCore) -> None:
        self.core = core

    def __call__(
        self, *, inputs: object = None, outputs: object = None, reference_outputs: object = None, **kwargs: object
    ) -> Any:
        return run_plan(self.core.client, stamped(self.core.plan(inputs, outputs, reference_outputs, kwargs), self.way))


class AsyncJudgeEvaluator(AsyncEvaluator):
    """What :func:`create_async_llm_as_judge` returns: the same core, its client awaited."""

    def __init__(self, core: JudgeCore) -> None:
        self.core = core

    async def __call__(
        self, *, inputs: object = None, outputs: object = None, reference_outputs: object = None, **kwargs: object
    ) -> Any:
        plan = stamped(self.core.plan(inputs, outputs, reference_outputs, kwargs), self.way)
        return await arun_plan(self.core.client, plan)


def create_llm_as_judge(
    *,
    prompt: Prompt,
    feedback_key: str = "score",
    judge: Optional[JudgeClient] = None,
    model: Optional[str] = None,
    system: Optional[str] = None,
    continuous: bool = False,
    choices: Optional[list[float]] = None,
    use_reasoning: bool = True,
    few_shot_examples: Optional[list[FewShotExample]] = None,
    output_schema: Optional[OutputSchemaSpec] = None,
    few_shot_placement: str = "end",
    cache: Union[bool, ResultCache, None] = None,
    calibration: Union[Correction, str, None] = None,
    self_reference: bool = False,
    checklist: bool = False,
    screen: Optional[str] = None,
) -> JudgeEvaluator:
    """An evaluator that asks a judge model to score ``outputs``; OpenEvals' arguments, then our own.

    ``few_shot_placement="start"`` puts the examples before the prompt's
    text, so every evaluation's prompt starts alike and a local model
    reuses that evaluated start (OpenEvals' place, and the default, is the end).
    ``cache=True`` (or a :class:`~localjudge._clients.result_cache.ResultCache`) answers
    a request the judge has answered before from the result cache, without a
    model call. ``calibration`` (a :class:`~localjudge._trust.correction.Correction`,
    as ``localjudge calibrate`` fits and :func:`~localjudge.read_calibration`
    reads) corrects a local model's probabilities of a true/false or choices
    verdict; the score becomes the value they then favour. ``calibration="stored"``
    takes the fit kept for this very judge: yours from ``localjudge calibrate``,
    else one that ships for the default judge's prompts (an error if neither).
    ``self_reference=True`` judges without a reference by having the judge
    answer ``inputs`` itself first and showing that answer as
    ``{reference_outputs}`` (a reference given with a row is used instead);
    the result's metadata carries it as ``self_reference``. Pair it with
    :data:`~localjudge._judges.evaluators.SAME_ANSWER_PROMPT`.
    ``checklist=True`` has the judge first write, from ``inputs`` alone, yes/no
    questions a response must pass, and shows them as the prompt's
    ``{checks}`` (:func:`~localjudge._judges.checklist.checks_section`); the
    metadata carries them as ``checklist``, and a call that passes ``checks=``
    is judged with its own.
    ``screen`` changes the answer before the judge reads it
    (:data:`~localjudge._judges.screen.SCREENS`: ``"full"`` removes invisible
    characters, shows markup in look-alike brackets, takes out the parts that
    address the judge, and calls an answer with nothing left to judge false
    without asking). None, the default, sends the prompt exactly as written;
    either way ``metadata.addresses_judge`` marks an answer that spoke to the judge.
    """
    core = build_core(
        prompt=prompt,
        feedback_key=feedback_key,
        judge=judge,
        model=model,
        system=system,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        output_schema=output_schema,
        few_shot_placement=few_shot_placement,
        cache=cache,
        calibration=calibration,
        self_reference=self_reference,
        checklist=checklist,
        screen=screen,
    )
    return JudgeEvaluator(core)


def _awaited(judge: JudgeEvaluator) -> AsyncJudgeEvaluator:
    """The same core, its client awaited."""
    return AsyncJudgeEvaluator(judge.core)


create_async_llm_as_judge = async_twin(create_llm_as_judge, _awaited, "create_async_llm_as_judge")
