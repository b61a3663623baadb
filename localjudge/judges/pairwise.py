"""Which of two answers is better: asked in both orders, so the answer's position cannot decide.

A judge model tends to prefer the answer it reads first (or last). Each pair
is judged twice, A before B and B before A; the verdict stands only when
both orders agree, and is a tie otherwise. The result is an evaluator
result (``key``, ``score``, ``comment``, ``metadata``): ``score`` 1.0 when A
is better, 0.0 when B is, 0.5 for a tie or an inconsistent pair.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional, Union

from ..caller_warnings import warn_caller
from ..errors import OptionError, UsageError
from ..prompts.prompting import DATA_NOT_INSTRUCTIONS, PAIR_EXAMPLE, SCORES, SWAP, template_fields
from ..types import JudgeClient, Prompt
from .checklist import checks_section
from .core import JudgeCore, build_core, chain_record, recalibrate, response_metadata
from .likelihood import LikelihoodPair
from .plan import Step, arun_plan, run_plan
from .pointwise import PointwisePair, pointwise_pair_prompt, refuse_hidden_reference
from .single import AsyncEvaluator, Evaluator
from .twin import async_twin
from .ways import ON_DISAGREEMENT, PAIR_METHODS, WAYS, Way, find_way, method_named, stamped
from .weighed import PairPlan, WeighedPair
from .written import with_written

if TYPE_CHECKING:
    from ..clients.result_cache import ResultCache
    from ..trust.correction import Correction

__all__ = [
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


def pairwise_prompt(
    *, has_inputs: bool = True, has_reference: bool = False, own_reference: bool = False, checks: bool = False
) -> str:
    """Our pairwise instructions, with sections only for what is given (the request, a reference, checks).

    ``own_reference``: the reference is the judge's own answer (``self_reference``), so the
    prompt does not call it good: it was written without either answer and may be wrong.
    ``checks``: questions a response must pass (``checklist``), shown before the answers.
    """
    parts = ["Two assistants answered the same request. Decide which answer serves the request better."]
    if has_inputs:
        parts.append("<request>\n{inputs}\n</request>")
    if has_reference:
        parts.append("<reference_answer>\n{reference_outputs}\n</reference_answer>")
    if checks:
        parts.append(checks_section())
    parts += ["<answer_a>\n{outputs_a}\n</answer_a>", "<answer_b>\n{outputs_b}\n</answer_b>"]
    rules = [DATA_NOT_INSTRUCTIONS]
    if has_reference:
        rules.append(
            OWN_REFERENCE_RULE
            if own_reference
            else "The reference answer is known to be good; measure both answers against it."
        )
    rules.append(
        "Prefer the answer that does what the request asks, correctly and completely, and says nothing false. "
        "Do not let the answers' order, length or polish decide; a shorter answer that is right beats a longer "
        "one that is not."
    )
    return "\n\n".join(parts) + "\n\n" + "\n".join(rules)


OWN_REFERENCE_RULE = (
    "The reference answer was written for the request without seeing either answer, and may itself be wrong: "
    "use it to check both answers, not as the last word."
)
PAIRWISE_PROMPT = pairwise_prompt()
PAIRWISE_PROMPT_WITH_REFERENCE = pairwise_prompt(has_reference=True)


def pairwise_schema(*, allow_ties: bool = False, use_reasoning: bool = True) -> dict[str, Any]:
    """The answer's shape: the reasoning first (when asked for), then the winner."""
    winners = ["A", "B", "tie"] if allow_ties else ["A", "B"]
    winner_text = "A if answer A is better, B if answer B is better" + (
        ", tie if neither is better than the other" if allow_ties else ""
    )
    properties: dict[str, Any] = {}
    if use_reasoning:
        properties["reasoning"] = {
            "type": "string",
            "description": "Compare the two answers point by point before deciding.",
        }
    properties["winner"] = {"type": "string", "enum": winners, "description": winner_text}
    return {
        "title": "pairwise_verdict",
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class OrderVerdict:
    """One order's answer, turned back into the caller's A and B."""

    winner: str
    reasoning: Optional[str]
    probabilities: Optional[dict[str, float]]


def read_order(parsed: Mapping[str, Any], metadata: Optional[Mapping[str, Any]], swapped: bool) -> OrderVerdict:
    """An answer given with the outputs in the order (B, A) speaks of them swapped: swap its A and B back."""
    swap = SWAP if swapped else {name: name for name in SWAP}
    probabilities = None
    raw = (metadata or {}).get("probabilities")
    if isinstance(raw, Mapping):
        values = {json.loads(value): float(p) for value, p in raw.items()}
        probabilities = {swap[value]: p for value, p in values.items() if value in swap}
    return OrderVerdict(swap[parsed["winner"]], parsed.get("reasoning"), probabilities)


def combine_orders(key: str, first: OrderVerdict, second: OrderVerdict, on_disagreement: str = "tie") -> dict[str, Any]:
    """The pair's verdict: what both orders said, else a tie, with both orders' verdicts and reasoning kept.

    With ``on_disagreement="probabilities"`` a pair whose orders disagree goes
    to the side whose probability, averaged over both orders, is higher
    (``metadata.decided_by``); it stays a tie without probabilities (a remote
    judge) or when they are even.
    """
    consistent = first.winner == second.winner
    winner = first.winner if consistent else "tie"
    metadata: dict[str, Any] = {
        "winner": winner,
        "consistent": consistent,
        "verdicts": [first.winner, second.winner],
    }
    if first.probabilities is not None and second.probabilities is not None:
        sides = sorted(set(first.probabilities) | set(second.probabilities), key=list(SCORES).index)
        averaged = {
            side: (first.probabilities.get(side, 0.0) + second.probabilities.get(side, 0.0)) / 2 for side in sides
        }
        metadata["probabilities"] = averaged
        ranked = sorted(averaged.values(), reverse=True)
        if not consistent and on_disagreement == "probabilities" and (len(ranked) < 2 or ranked[0] > ranked[1]):
            winner = metadata["winner"] = max(averaged, key=averaged.__getitem__)
            metadata["decided_by"] = "probabilities"
    comment = None
    if first.reasoning is not None or second.reasoning is not None:
        comment = f"A then B: {first.reasoning}\nB then A: {second.reasoning}"
    return {"key": key, "score": SCORES[winner], "comment": comment, "metadata": metadata}


@dataclass
class _PairwiseCore:
    core: JudgeCore
    shows_reference: bool  # False: our prompt without the reference, which must not be dropped silently
    on_disagreement: str = "tie"

    def requests(
        self, inputs: object, outputs_a: object, outputs_b: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        refuse_hidden_reference(reference_outputs, self.shows_reference)
        forward = {**kwargs, "outputs_a": outputs_a, "outputs_b": outputs_b}
        backward = {**kwargs, "outputs_a": outputs_b, "outputs_b": outputs_a}
        return [self.core.build_request(inputs, None, reference_outputs, values) for values in (forward, backward)]

    def plan(
        self, inputs: object, outputs_a: object, outputs_b: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> Step:
        """One pair judged: what the judge writes first (its reference, its checks), then both orders side by side."""
        reference, kwargs, written = yield from self.core.before_verdict(inputs, reference_outputs, kwargs)
        responses = yield self.requests(inputs, outputs_a, outputs_b, reference, kwargs)
        return with_written(self.read(responses), written)

    def read(self, responses: list[Any]) -> dict[str, Any]:
        answers = [(self.core.read_parsed(r), response_metadata(r, "winner")) for r in responses]
        seen = [_positions(metadata) for _, metadata in answers]
        chain = chain_record([metadata for _, metadata in answers])  # by order, as order_probabilities
        uncalibrated = None
        if self.core.calibration is not None:
            uncalibrated = [parsed["winner"] for parsed, _ in answers]  # as each order saw them
            answers = [
                recalibrate(parsed, metadata, "winner", self.core.calibration, backend=self.core.backend)
                for parsed, metadata in answers
            ]
        first, second = (
            read_order(parsed, metadata, swapped)
            for (parsed, metadata), swapped in zip(answers, (False, True), strict=True)
        )
        result = combine_orders(self.core.feedback_key, first, second, self.on_disagreement)
        result["metadata"].update(chain)
        if all(probabilities is not None for probabilities in seen):
            result["metadata"]["order_probabilities"] = seen
        if uncalibrated is not None:
            result["metadata"]["calibrated"] = True
            result["metadata"]["uncalibrated_verdicts"] = [uncalibrated[0], SWAP[uncalibrated[1]]]
        return result


def _positions(metadata: Optional[Mapping[str, Any]]) -> Optional[dict[str, float]]:
    """One order's own probabilities, by position: A is the answer it showed first (what calibration corrects)."""
    raw = (metadata or {}).get("probabilities")
    if not isinstance(raw, Mapping):
        return None
    return {json.loads(value): float(p) for value, p in raw.items()}


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


@dataclass(frozen=True)
class PairOptions:
    """What shapes a pair's question apart from the way it is asked: the factory's options, checked by each way."""

    prompt: Optional[Prompt]
    feedback_key: str
    judge: Optional[JudgeClient]
    model: Optional[str]
    system: Optional[str]
    allow_ties: bool
    use_reasoning: bool
    has_reference: bool
    cache: Union[bool, ResultCache, None]
    calibration: Union[Correction, str, None]
    few_shot_examples: Optional[list[dict[str, Any]]]
    few_shot_placement: str

    def core(self, **changes: Any) -> JudgeCore:
        """A judge core with these options, ``changes`` over them (a pair's schema, its prompt, its writers)."""
        options: dict[str, Any] = {
            "prompt": self.prompt,
            "feedback_key": self.feedback_key,
            "judge": self.judge,
            "model": self.model,
            "system": self.system,
            "continuous": False,
            "choices": None,
            "use_reasoning": self.use_reasoning,
            "few_shot_examples": self.few_shot_examples,
            "output_schema": None,
            "few_shot_placement": self.few_shot_placement,
            "cache": self.cache,
        }
        return build_core(**{**options, **changes})

    def refuse(self, way: str, why: str, **given: bool) -> None:
        """The options given that do not fit ``way``, named in one error that says why."""
        refused = [f"{{{name}}}" for name, is_given in given.items() if is_given]
        if refused:
            raise OptionError(f"{method_named(way)} does not go with {', '.join(refused)}: {why}")


def pair_plan(options: PairOptions, way: Way) -> PairPlan:
    """The plan that asks a pair ``way``: the way's method builds it, each method checking the options it takes."""
    build = _METHODS.get(way.pairs)
    if build is None:  # a Way made before its method was unregistered
        raise OptionError(f"no pair method named {way.pairs!r}; the methods: {', '.join(_METHODS)}")
    return build(options, way)


def _both_orders(options: PairOptions, way: Way) -> _PairwiseCore:
    """Both orders side by side: what the judge writes first (its answer, its checks), then each order's verdict."""
    prompt = options.prompt
    if prompt is None:
        prompt = pairwise_prompt(
            has_reference=options.has_reference or way.self_reference,
            own_reference=way.self_reference,
            checks=way.checklist,
        )
    core = options.core(
        prompt=prompt,
        output_schema=pairwise_schema(allow_ties=options.allow_ties, use_reasoning=options.use_reasoning),
        few_shot_shape=PAIR_EXAMPLE,
        calibration=options.calibration,
        verdict_field="winner",
        self_reference=way.self_reference,
        checklist=way.checklist,
    )
    return _PairwiseCore(core, _shows_reference(prompt), way.on_disagreement)


def _pointwise(options: PairOptions, way: Way) -> PointwisePair:
    """Each output asked alone whether it does what the instruction asks (a judge of one output, true or false)."""
    prompt = options.prompt
    fields = set(template_fields(prompt)) if isinstance(prompt, str) else {"outputs"}
    if "outputs" not in fields or fields & {"outputs_a", "outputs_b"}:
        raise UsageError(
            "the pointwise way judges one output at a time: its prompt names {outputs} (not {outputs_a} or {outputs_b})"
        )
    options.refuse(
        "pointwise",
        "it shows one output at a time, so there are no positions, orders or pairs to shape",
        allow_ties=options.allow_ties,  # the judge says true or false of each output; equal figures are the tie
        calibration=options.calibration is not None,  # a pair's calibration corrects positions, which it has not
        few_shot_examples=bool(options.few_shot_examples),  # judged pairs, which a question of one output can't show
    )
    if prompt is None:
        prompt = pointwise_pair_prompt(
            has_reference=options.has_reference or way.self_reference,
            own_reference=way.self_reference,
            checks=way.checklist,
        )
    core = options.core(
        prompt=prompt, few_shot_examples=None, self_reference=way.self_reference, checklist=way.checklist
    )
    return PointwisePair(core, _shows_reference(prompt))


def _likelihood(options: PairOptions, way: Way) -> LikelihoodPair:
    """No question asked: each output scored as the model's own reply to the instruction."""
    options.refuse(
        "likelihood",
        "it asks the judge nothing, so what shapes a question or a verdict has no place",
        prompt=options.prompt is not None,  # no question is asked: the instruction alone is shown
        allow_ties=options.allow_ties,
        reference=options.has_reference,
        few_shot_examples=bool(options.few_shot_examples),
    )
    core = options.core(
        prompt="{inputs}",  # what the model reads before each reply; nothing else is asked
        use_reasoning=False,
        few_shot_examples=None,
        output_schema=pairwise_schema(allow_ties=False, use_reasoning=False),  # the verdict a calibration corrects
        calibration=options.calibration,
        verdict_field="winner",
        reads_replies=True,
    )
    return LikelihoodPair(core)


def _weighed(options: PairOptions, way: Way) -> WeighedPair:
    """The checks side by side and the likelihood readings of one pair, sharing one client, weighed."""
    from ..clients.cached import cache_identity
    from ..trust.pair_weights import read_pair_weights

    options.refuse(
        "weighed",
        "its weights decide, and a tie is even odds",
        calibration=options.calibration is not None,
        allow_ties=options.allow_ties,
    )
    side = _both_orders(options, Way(checklist=True, on_disagreement="probabilities"))
    reading = LikelihoodPair(
        replace(options, judge=side.core.client, cache=None).core(  # one model reads and judges
            prompt="{inputs}",
            use_reasoning=False,
            few_shot_examples=None,
            output_schema=pairwise_schema(use_reasoning=False),
            verdict_field="winner",
            reads_replies=True,
        )
    )
    weights = read_pair_weights()
    identity = cache_identity(side.core.client) or {}
    if not weights.fitted_for(identity.get("model")):
        warn_caller(
            f"the weighed way's weights were fitted on {weights.about.get('model', 'another model')}'s verdicts, "
            "not this judge's: its pairs are weighed by them all the same (benchmarks/fit_pair_weights.py fits "
            "them for another judge)"
        )
    return WeighedPair(side, reading, weights)


#: how each pair method builds its plan; a method's name and words are in :data:`~.ways.PAIR_METHODS`
_METHODS: dict[str, Callable[[PairOptions, Way], PairPlan]] = {
    "both-orders": _both_orders,
    "pointwise": _pointwise,
    "likelihood": _likelihood,
    "weighed": _weighed,
}


_REGISTERED: set[str] = set()  # the methods added by register_pair_method, which alone may be taken away
_REGISTERING = threading.Lock()


def register_pair_method(name: str, build: Callable[[PairOptions, Way], PairPlan], described: str) -> None:
    """A new way of asking a pair, reachable as ``Way(pairs=name)`` and ``way=name``, and named in results.

    ``build`` makes the plan from the factory's options and the way (refusing
    the options it cannot take: :meth:`PairOptions.refuse`); its plan has a
    ``core`` and a ``plan(inputs, outputs_a, outputs_b, reference_outputs, kwargs)``
    generator, as :class:`~.likelihood.LikelihoodPair` has. ``described``: the
    method in a few words, for results and reports.
    """
    with _REGISTERING:
        if name in _METHODS or name in WAYS:
            raise UsageError(f"a way of judging named {name!r} exists already")
        PAIR_METHODS[name] = described  # first: a Way of this method is valid once it is there
        _METHODS[name] = build
        WAYS[name] = Way(pairs=name)
        _REGISTERED.add(name)


def unregister_pair_method(name: str) -> None:
    """Undo :func:`register_pair_method`; the ways that ship with localjudge stay."""
    with _REGISTERING:
        if name not in _REGISTERED:
            raise UsageError(f"no pair method named {name!r} was registered (the ways that ship stay)")
        _REGISTERED.discard(name)
        for table in (WAYS, _METHODS, PAIR_METHODS):
            table.pop(name, None)


def _shows_reference(prompt: Prompt) -> bool:
    """A template string shows the reference only if it names it; a callable or LangChain prompt decides itself."""
    return not isinstance(prompt, str) or "reference_outputs" in template_fields(prompt)


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

    ``way`` (a :class:`~localjudge.judges.ways.Way`, or the name of one in
    :data:`~localjudge.judges.ways.WAYS`) says how the pair is asked; each
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
