"""Which of two answers is better: the pair judge's factory and its evaluators.

By default a pair is judged twice, A before B and B before A
(:mod:`.both_orders`), so the answer's position cannot decide; the other
ways of asking are in :mod:`.pair_methods`. The result is an evaluator
result (``key``, ``score``, ``comment``, ``metadata``): ``score`` 1.0 when A
is better, 0.0 when B is, 0.5 for a tie or an inconsistent pair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

from .._prompts.prompting import SWAP
from ..types import JudgeClient, Prompt
from .both_orders import combine_orders
from .pair_methods import PairOptions, PairPlan, pair_plan, register_pair_method, unregister_pair_method
from .pair_prompt import PAIRWISE_PROMPT, PAIRWISE_PROMPT_WITH_REFERENCE, pairwise_prompt, pairwise_schema
from .plan import arun_plan, run_plan
from .single import AsyncEvaluator, Evaluator
from .twin import async_twin
from .ways import ON_DISAGREEMENT, Way, find_way, stamped

if TYPE_CHECKING:
    from .._clients.result_cache import ResultCache
    from .._trust.correction import Correction

__all__ = [  # the pair judge's public names, wherever each is made
    "ON_DISAGREEMENT",
    "PAIRWISE_PROMPT",
    "PAIRWISE_PROMPT_WITH_REFERENCE",
    "SWAP",
    "PairOptions",
    "PairPlan",
    "combine_orders",
    "create_async_pairwise_judge",
    "create_pairwise_judge",
    "pairwise_prompt",
    "pairwise_schema",
    "register_pair_method",
    "unregister_pair_method",
]


class PairwiseEvaluator(Evaluator):
    """What :func:`create_pairwise_judge` returns: a pair's plan, its client called."""

    def __init__(self, pair: PairPlan, way: Optional[Way] = None) -> None:
        self.pair = pair
        self.core = pair.core
        self.way = way

    def __call__(
        self,
        *,
        inputs: object = None,
        outputs_a: object = None,
        outputs_b: object = None,
        reference_outputs: object = None,
        **kwargs: object,
    ) -> dict[str, Any]:
        plan = self.pair.plan(inputs, outputs_a, outputs_b, reference_outputs, kwargs)
        result: dict[str, Any] = run_plan(self.core.client, stamped(plan, self.way))
        return result


class AsyncPairwiseEvaluator(AsyncEvaluator):
    """What :func:`create_async_pairwise_judge` returns: the same plan, its requests awaited at once."""

    def __init__(self, pair: PairPlan, way: Optional[Way] = None) -> None:
        self.pair = pair
        self.core = pair.core
        self.way = way

    async def __call__(
        self,
        *,
        inputs: object = None,
        outputs_a: object = None,
        outputs_b: object = None,
        reference_outputs: object = None,
        **kwargs: object,
    ) -> dict[str, Any]:
        plan = self.pair.plan(inputs, outputs_a, outputs_b, reference_outputs, kwargs)
        result: dict[str, Any] = await arun_plan(self.core.client, stamped(plan, self.way))
        return result


def create_pairwise_judge(
    *,
    prompt: Optional[Prompt] = None,
    feedback_key: str = "preference",
    judge: Optional[JudgeClient] = None,
    model: Optional[str] = None,
    system: Optional[str] = None,
    allow_ties: bool = False,
    use_reasoning: bool = True,
    reference: bool = False,
    cache: Union[bool, ResultCache, None] = None,
    calibration: Union[Correction, str, None] = None,
    few_shot_examples: Optional[list[dict[str, Any]]] = None,
    few_shot_placement: str = "end",
    way: Union[Way, str, None] = None,
) -> PairwiseEvaluator:
    """An evaluator that says which of two outputs is better: by default in both orders, side by side.

    Called as ``evaluator(inputs=..., outputs_a=..., outputs_b=..., reference_outputs=None, **kwargs)``.
    The prompt names ``{inputs}``, ``{outputs_a}``, ``{outputs_b}`` (and
    ``{reference_outputs}``); ours (:func:`pairwise_prompt`) is used when none
    is given, with the reference when ``reference=True``. A missing output, or
    a reference the prompt does not show, is an error, never dropped. ``allow_ties`` lets the judge answer
    "tie"; without it a tie comes only from orders that disagree. ``judge``,
    ``model``, ``system`` and ``cache`` are as for :func:`create_llm_as_judge`.
    ``few_shot_examples`` are judged pairs (``inputs``, ``outputs_a``,
    ``outputs_b``, ``winner`` and optionally ``reasoning``), shown as they
    are in both orders: give examples won by A and by B alike.
    ``calibration`` corrects each order's probabilities by position before the
    orders are combined, which divides out a preference for the first (or
    second) answer; ``metadata.order_probabilities`` holds each order's own.

    ``way`` (a :class:`~localjudge._judges.ways.Way`, or the name of one in
    :data:`~localjudge._judges.ways.WAYS`) says how the pair is asked; each
    result's metadata then names it (``way``) with the requests it took.
    Without one, both orders are asked side by side and orders that disagree
    are a tie, as OpenEvals' pairwise judges do. Its parts:

    - ``pairs="both-orders"`` with ``on_disagreement="probabilities"`` gives a
      pair whose orders disagree to the side the judge found likelier over both
      orders (:func:`combine_orders`);
    - ``pairs="pointwise"`` asks of each output alone whether it does what the
      instruction asks (:mod:`.pointwise`), so no position can be preferred;
    - ``pairs="likelihood"`` asks nothing (:mod:`.likelihood`): the output the
      instruction makes likelier, per token, as the model's own reply wins
      (``metadata.likelihood_gain``); it needs a local model, and with
      ``calibration`` (``localjudge calibrate --pairwise --likelihood``) the
      gains become ``metadata.probabilities``;
    - ``pairs="weighed"`` weighs the judge's checks side by side against the
      likelihood gain (:mod:`.weighed`), by weights fitted on labelled pairs;
    - ``self_reference`` has the judge answer ``inputs`` itself first and shows
      that answer as the reference (``metadata.self_reference``);
    - ``checklist`` has it first write yes/no questions a response must pass
      (``metadata.checklist``); a call that passes ``checks=`` is judged with its own.
    """
    options = PairOptions(
        prompt=prompt,
        feedback_key=feedback_key,
        judge=judge,
        model=model,
        system=system,
        allow_ties=allow_ties,
        use_reasoning=use_reasoning,
        has_reference=reference,
        cache=cache,
        calibration=calibration,
        few_shot_examples=few_shot_examples,
        few_shot_placement=few_shot_placement,
    )
    asked = find_way(way) if isinstance(way, str) else way
    return PairwiseEvaluator(pair_plan(options, asked or Way()), asked)


def _awaited(evaluator: PairwiseEvaluator) -> AsyncPairwiseEvaluator:
    """The same plan, its requests awaited."""
    return AsyncPairwiseEvaluator(evaluator.pair, evaluator.way)


create_async_pairwise_judge = async_twin(create_pairwise_judge, _awaited, "create_async_pairwise_judge")
