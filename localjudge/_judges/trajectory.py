"""create_trajectory_llm_as_judge / create_async_trajectory_llm_as_judge: judge an agent's trajectory.

OpenEvals' trajectory judge, offline, with its parameters and defaults: the
messages (tool calls and their results included) are rendered as OpenEvals
renders them (:mod:`localjudge._prompts.trajectory`) and judged by the core of
:func:`~localjudge.create_llm_as_judge`, under the same score schema (so a
local model decodes under the same grammar). The prompts are our own.
Also the mirror of ``openevals.trajectory.llm``: its names import from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional, Union

from .._caller_warnings import warn_caller
from .._clients.base import acall_create, call_create
from .._prompts.prompting import DATA_NOT_INSTRUCTIONS, template_fields
from .._prompts.trajectory import trajectory_text
from ..errors import UsageError
from ..types import FewShotExample, JudgeClient, JudgeRequest, OutputSchemaSpec, Prompt
from .building import build_core
from .core import JudgeCore
from .plan import note_exchanges
from .single import AsyncEvaluator, Evaluator
from .twin import async_twin
from .ways import stamp

if TYPE_CHECKING:
    from .._clients.result_cache import ResultCache
    from .._trust.correction import Correction

__all__ = [
    "TRAJECTORY_ACCURACY_PROMPT",
    "TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE",
    "create_async_trajectory_llm_as_judge",
    "create_trajectory_llm_as_judge",
    "trajectory_prompt",
]

FEEDBACK_KEY = "trajectory_accuracy"


def trajectory_prompt(*, has_inputs: bool = False, has_reference: bool = False) -> str:
    """Our trajectory instructions, with sections only for what is given (the request, a reference)."""
    parts = [
        "Judge whether an AI agent's trajectory is accurate: the steps it took to do a task, the tools it "
        "called with their arguments, what the tools returned, and its final answer. Each message is in a tag "
        "named by its role; <tool_call> is a call the agent made, <tool_result> what a tool answered."
    ]
    if has_inputs:
        parts.append("<request>\n{inputs}\n</request>")
    if has_reference:
        parts.append("<reference_trajectory>\n{reference_outputs}\n</reference_trajectory>")
    parts.append("<trajectory>\n{outputs}\n</trajectory>")
    goal = "the request" if has_inputs else "the first user message (or, without one, what the agent set out to do)"
    rules = [
        DATA_NOT_INSTRUCTIONS,
        f"Find the goal from {goal}. An accurate trajectory:",
        "- calls tools that fit each step, with arguments that make sense, and uses what they return;",
        "- moves forward: each step builds on the ones before, without loops or repeated calls that learn "
        "nothing new (a detour or two is fine);",
        "- ends with an answer that follows from what the steps found and does what the goal asks.",
    ]
    if has_reference:
        rules.append(
            "The reference trajectory is known to be good. The trajectory need not copy it step by step: it is "
            "accurate when it reaches the same result by equivalent steps (the same tools for the same purposes, "
            "in an order that works)."
        )
    return "\n\n".join(parts) + "\n\n" + "\n".join(rules)


TRAJECTORY_ACCURACY_PROMPT = trajectory_prompt()
TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE = trajectory_prompt(has_reference=True)


@dataclass
class TrajectoryJudge:
    """The judge core, and whether its prompt is ours (then chosen per call for what the call gives)."""

    core: JudgeCore
    own_prompt: bool

    def request(
        self, inputs: object, outputs: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> tuple[JudgeCore, JudgeRequest]:
        """The core that judges this call, and its request: the trajectories rendered into the prompt."""
        rendered = trajectory_text(outputs, "outputs")
        reference = None if reference_outputs is None else trajectory_text(reference_outputs, "reference_outputs")
        core = self.core
        if self.own_prompt:
            prompt = trajectory_prompt(has_inputs=inputs is not None, has_reference=reference is not None)
            core = replace(core, prompt=prompt)
        else:
            _warn_if_unshown(core.prompt, reference is not None)
        # without a reference, a prompt that shows one gets it empty, as OpenEvals fills it
        return core, core.build_request(inputs, rendered, "" if reference is None else reference, kwargs)


def _warn_if_unshown(prompt: Prompt, has_reference: bool) -> None:
    """A template that shows no reference when one is given, or an empty one when none is: say so."""
    if not isinstance(prompt, str):
        return  # a callable or LangChain prompt decides for itself what it shows
    shows = "reference_outputs" in template_fields(prompt)
    if has_reference and not shows:
        warn_caller("reference_outputs was given, but the prompt has no {reference_outputs}: the judge does not see it")
    elif shows and not has_reference:
        warn_caller(
            "the prompt shows {reference_outputs}, but none was given: it is shown empty "
            "(leave prompt= out for ours, which adapts, or pass reference_outputs=)"
        )


def _trajectory_judge(*, prompt: Optional[Prompt], **options: Any) -> TrajectoryJudge:
    if isinstance(options.get("calibration"), str):  # our prompt changes per call; a fit is for one prompt
        raise UsageError("the trajectory judge takes a Correction as calibration=, not a name")
    core = build_core(prompt=TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE if prompt is None else prompt, **options)
    return TrajectoryJudge(core, own_prompt=prompt is None)


class TrajectoryEvaluator(Evaluator):
    """What :func:`create_trajectory_llm_as_judge` returns: the trajectories rendered, then judged by the core."""

    def __init__(self, trajectory: TrajectoryJudge) -> None:
        self.trajectory = trajectory
        self.core = trajectory.core

    def __call__(
        self, *, outputs: object = None, reference_outputs: object = None, inputs: object = None, **kwargs: object
    ) -> Any:
        core, request = self.trajectory.request(inputs, outputs, reference_outputs, kwargs)
        response = call_create(core.client, request)
        note_exchanges([request], [response])
        result = core.read_result(response)
        return result if self.way is None else stamp(result, self.way, 1)


class AsyncTrajectoryEvaluator(AsyncEvaluator):
    """What :func:`create_async_trajectory_llm_as_judge` returns: the same, its client awaited."""

    def __init__(self, trajectory: TrajectoryJudge) -> None:
        self.trajectory = trajectory
        self.core = trajectory.core

    async def __call__(
        self, *, outputs: object = None, reference_outputs: object = None, inputs: object = None, **kwargs: object
    ) -> Any:
        core, request = self.trajectory.request(inputs, outputs, reference_outputs, kwargs)
        response = await acall_create(core.client, request)
        note_exchanges([request], [response])
        result = core.read_result(response)
        return result if self.way is None else stamp(result, self.way, 1)


def create_trajectory_llm_as_judge(
    *,
    prompt: Optional[Prompt] = None,
    model: Optional[str] = None,
    feedback_key: str = FEEDBACK_KEY,
    judge: Optional[JudgeClient] = None,
    continuous: bool = False,
    choices: Optional[list[float]] = None,
    use_reasoning: bool = True,
    few_shot_examples: Optional[list[FewShotExample]] = None,
    system: Optional[str] = None,
    output_schema: Optional[OutputSchemaSpec] = None,
    few_shot_placement: str = "end",
    cache: Union[bool, ResultCache, None] = None,
    calibration: Optional[Correction] = None,
) -> TrajectoryEvaluator:
    """An evaluator that judges an agent's trajectory: OpenEvals' arguments, then those of create_llm_as_judge.

    ``outputs`` (and ``reference_outputs``, when given) is a list of
    OpenAI-style messages or LangChain messages, one message, or a dict
    holding them under ``messages``. ``prompt=None`` is our prompt, with a
    reference section when the call gives ``reference_outputs`` (and a request
    section when it gives ``inputs``); a prompt of your own gets the rendered
    trajectories as ``{outputs}`` and ``{reference_outputs}``. A malformed
    trajectory is an :class:`~localjudge.errors.InvalidTrajectoryError`.
    """
    judge_of_trajectories = _trajectory_judge(
        prompt=prompt,
        model=model,
        feedback_key=feedback_key,
        judge=judge,
        continuous=continuous,
        choices=choices,
        use_reasoning=use_reasoning,
        few_shot_examples=few_shot_examples,
        system=system,
        output_schema=output_schema,
        few_shot_placement=few_shot_placement,
        cache=cache,
        calibration=calibration,
    )
    return TrajectoryEvaluator(judge_of_trajectories)


def _awaited(evaluator: TrajectoryEvaluator) -> AsyncTrajectoryEvaluator:
    """The same judge, its client awaited."""
    return AsyncTrajectoryEvaluator(evaluator.trajectory)


create_async_trajectory_llm_as_judge = async_twin(
    create_trajectory_llm_as_judge, _awaited, "create_async_trajectory_llm_as_judge"
)
