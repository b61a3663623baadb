"""Which of two answers is better: asked in both orders, so the answer's position cannot decide.

A judge model tends to prefer the answer it reads first (or last). Each pair
is judged twice, A before B and B before A; the verdict stands only when
both orders agree, and is a tie otherwise. The result is an evaluator
result (``key``, ``score``, ``comment``, ``metadata``): ``score`` 1.0 when A
is better, 0.0 when B is, 0.5 for a tie or an inconsistent pair.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional, TypeVar

from ..errors import OptionError, UsageError
from ..prompts.prompting import DATA_NOT_INSTRUCTIONS, PAIR_EXAMPLE, SCORES, SWAP, template_fields
from .checklist import checks_section
from .core import JudgeCore, build_core, chain_record, recalibrate, response_metadata
from .likelihood import LikelihoodPair
from .plan import Step, arun_plan, run_plan
from .pointwise import PointwisePair, pointwise_pair_prompt, refuse_hidden_reference
from .single import AsyncEvaluator, Evaluator
from .ways import Way, stamped
from .weighed import WeighedPair
from .written import with_written

__all__ = [
    "ON_DISAGREEMENT",
    "PAIRWISE_PROMPT",
    "PAIRWISE_PROMPT_WITH_REFERENCE",
    "SWAP",
    "combine_orders",
    "create_async_pairwise_judge",
    "create_pairwise_judge",
    "pairwise_prompt",
    "pairwise_schema",
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


#: what a pair whose two orders disagree becomes: a tie, or the side the probabilities of both orders favour
ON_DISAGREEMENT = ("tie", "probabilities")


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
        self, inputs: Any, outputs_a: Any, outputs_b: Any, reference_outputs: Any, kwargs: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        refuse_hidden_reference(reference_outputs, self.shows_reference)
        forward = {**kwargs, "outputs_a": outputs_a, "outputs_b": outputs_b}
        backward = {**kwargs, "outputs_a": outputs_b, "outputs_b": outputs_a}
        return [self.core.build_request(inputs, None, reference_outputs, values) for values in (forward, backward)]

    def plan(
        self, inputs: Any, outputs_a: Any, outputs_b: Any, reference_outputs: Any, kwargs: Mapping[str, Any]
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
    """What :func:`create_pairwise_judge` returns: both orders asked side by side, read by one core."""

    def __init__(self, pair: _PairwiseCore | PointwisePair | LikelihoodPair | WeighedPair) -> None:
        self.pair = pair
        self.core = pair.core

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs_a: Any = None,
        outputs_b: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        plan = self.pair.plan(inputs, outputs_a, outputs_b, reference_outputs, kwargs)
        return run_plan(self.core.client, stamped(plan, self.way))


class AsyncPairwiseEvaluator(AsyncEvaluator):
    """What :func:`create_async_pairwise_judge` returns: both orders awaited at once."""

    def __init__(self, pair: _PairwiseCore | PointwisePair | LikelihoodPair | WeighedPair) -> None:
        self.pair = pair
        self.core = pair.core

    async def __call__(
        self,
        *,
        inputs: Any = None,
        outputs_a: Any = None,
        outputs_b: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        plan = self.pair.plan(inputs, outputs_a, outputs_b, reference_outputs, kwargs)
        return await arun_plan(self.core.client, stamped(plan, self.way))


_Pairwise = TypeVar("_Pairwise", PairwiseEvaluator, AsyncPairwiseEvaluator)


def _pairwise_core(
    *,
    prompt: Any,
    feedback_key: str,
    judge: Any,
    model: Optional[str],
    system: Optional[str],
    allow_ties: bool,
    use_reasoning: bool,
    has_reference: bool,
    cache: Any,
    calibration: Any,
    few_shot_examples: Any,
    few_shot_placement: str,
    on_disagreement: str,
    self_reference: bool,
    checklist: bool,
    pointwise: bool,
    likelihood: bool,
    way: Optional[Way] = None,
) -> _PairwiseCore | PointwisePair | LikelihoodPair | WeighedPair:
    if way is not None:  # the way's method and writers, in place of the flags
        checklist, self_reference = way.checklist, way.self_reference
        pointwise, likelihood = way.pairs == "pointwise", way.pairs == "likelihood"
        on_disagreement = way.on_disagreement
        if way.pairs == "weighed":
            return _weighed_pair(
                prompt=prompt,
                feedback_key=feedback_key,
                judge=judge,
                model=model,
                system=system,
                allow_ties=allow_ties,
                use_reasoning=use_reasoning,
                has_reference=has_reference,
                cache=cache,
                calibration=calibration,
                few_shot_examples=few_shot_examples,
                few_shot_placement=few_shot_placement,
            )
    if on_disagreement not in ON_DISAGREEMENT:
        raise UsageError(f"on_disagreement must be one of {', '.join(ON_DISAGREEMENT)}, got {on_disagreement!r}")
    if likelihood:
        given = {
            "prompt": prompt is not None,  # no question is asked: the instruction alone is shown
            "pointwise": pointwise,
            "allow_ties": allow_ties,
            "reference": has_reference,
            "self_reference": self_reference,
            "checklist": checklist,
            "few_shot_examples": bool(few_shot_examples),
            "on_disagreement": on_disagreement != "tie",
        }
        _refuse_beside("likelihood", given)
        core = build_core(
            prompt="{inputs}",  # what the model reads before each reply; nothing else is asked
            feedback_key=feedback_key,
            judge=judge,
            model=model,
            system=system,
            continuous=False,
            choices=None,
            use_reasoning=False,
            few_shot_examples=None,
            output_schema=pairwise_schema(allow_ties=False, use_reasoning=False),  # the verdict a calibration corrects
            few_shot_placement=few_shot_placement,
            cache=cache,
            calibration=calibration,
            verdict_field="winner",
            reads_replies=True,
        )
        return LikelihoodPair(core)
    with_reference = has_reference or self_reference
    if pointwise:
        _check_pointwise(prompt, allow_ties, calibration, few_shot_examples, on_disagreement)
        if prompt is None:
            prompt = pointwise_pair_prompt(has_reference=with_reference, own_reference=self_reference, checks=checklist)
    elif prompt is None:
        prompt = pairwise_prompt(has_reference=with_reference, own_reference=self_reference, checks=checklist)
    # a template string shows the reference only if it names it; a callable or LangChain prompt decides itself
    shows_reference = not isinstance(prompt, str) or "reference_outputs" in template_fields(prompt)
    shared: dict[str, Any] = {
        "prompt": prompt,
        "feedback_key": feedback_key,
        "judge": judge,
        "model": model,
        "system": system,
        "continuous": False,
        "choices": None,
        "use_reasoning": use_reasoning,
        "few_shot_placement": few_shot_placement,
        "cache": cache,
        "self_reference": self_reference,
        "checklist": checklist,
    }
    if pointwise:  # a judge of one output, true or false, asked of each
        return PointwisePair(build_core(**shared, few_shot_examples=None, output_schema=None), shows_reference)
    core = build_core(
        **shared,
        few_shot_examples=few_shot_examples,
        output_schema=pairwise_schema(allow_ties=allow_ties, use_reasoning=use_reasoning),
        few_shot_shape=PAIR_EXAMPLE,
        calibration=calibration,
        verdict_field="winner",
    )
    return _PairwiseCore(core, shows_reference, on_disagreement)


def _weighed_pair(*, calibration: Any, allow_ties: bool, **options: Any) -> WeighedPair:
    """The checks side by side and the likelihood readings of one pair, sharing one client, weighed."""
    from ..clients.cached import cache_identity
    from ..trust.pair_weights import read_pair_weights

    if calibration is not None or allow_ties:
        given = [
            name
            for name, is_given in (("calibration", calibration is not None), ("allow_ties", allow_ties))
            if is_given
        ]
        raise UsageError(
            f"the weighed way does not take {', '.join(given)}: its weights decide, and a tie is even odds"
        )
    side = _pairwise_core(
        **options,
        allow_ties=False,
        calibration=None,
        on_disagreement="probabilities",
        self_reference=False,
        checklist=True,
        pointwise=False,
        likelihood=False,
    )
    reading = LikelihoodPair(
        build_core(
            prompt="{inputs}",
            feedback_key=options["feedback_key"],
            judge=side.core.client,  # the same client (and result cache): one model reads and judges
            model=options["model"],
            system=options["system"],
            continuous=False,
            choices=None,
            use_reasoning=False,
            few_shot_examples=None,
            output_schema=pairwise_schema(use_reasoning=False),
            few_shot_placement=options["few_shot_placement"],
            cache=None,
            verdict_field="winner",
            reads_replies=True,
        )
    )
    assert isinstance(side, _PairwiseCore)
    weights = read_pair_weights()
    identity = cache_identity(side.core.client) or {}
    if not weights.fitted_for(identity.get("model")):
        warnings.warn(
            f"the weighed way's weights were fitted on {weights.about.get('model', 'another model')}'s verdicts, "
            "not this judge's: its pairs are weighed by them all the same (benchmarks/fit_pair_weights.py fits "
            "them for another judge)",
            UserWarning,
            stacklevel=4,
        )
    return WeighedPair(side, reading, weights)


def _check_pointwise(
    prompt: Any, allow_ties: bool, calibration: Any, few_shot_examples: Any, on_disagreement: str
) -> None:
    """What does not fit a pair judged one output at a time, refused rather than ignored."""
    fields = set(template_fields(prompt)) if isinstance(prompt, str) else {"outputs"}
    if "outputs" not in fields or fields & {"outputs_a", "outputs_b"}:
        raise UsageError(
            "pointwise=True judges one output at a time: its prompt names {outputs} (not {outputs_a} or {outputs_b})"
        )
    given = {
        "allow_ties": allow_ties,  # the judge says true or false of each output; equal figures are the tie
        "calibration": calibration is not None,  # a pair's calibration corrects positions, which this judge has not
        "few_shot_examples": bool(few_shot_examples),  # judged pairs, which a question about one output cannot show
        "on_disagreement": on_disagreement != "tie",  # no orders to disagree
    }
    _refuse_beside("pointwise", given)


#: why a way of judging a pair takes none of the options that shape another
_WHY_NOT = {
    "likelihood": "it asks the judge nothing, so what shapes a question or a verdict has no place",
    "pointwise": "it shows one output at a time, so there are no positions, orders or pairs to shape",
}


def _refuse_beside(way: str, given: Mapping[str, bool]) -> None:
    """The options given that do not fit this way of judging a pair, named in one error that says why."""
    refused = [f"{{{name}}}" for name, is_given in given.items() if is_given]
    if refused:
        raise OptionError(f"{{{way}}} does not go with {', '.join(refused)}: {_WHY_NOT[way]}")


def create_pairwise_judge(
    *,
    prompt: Any = None,
    feedback_key: str = "preference",
    judge: Any = None,
    model: Optional[str] = None,
    system: Optional[str] = None,
    allow_ties: bool = False,
    use_reasoning: bool = True,
    reference: bool = False,
    cache: Any = None,
    calibration: Any = None,
    few_shot_examples: Optional[list[dict[str, Any]]] = None,
    few_shot_placement: str = "end",
    on_disagreement: str = "tie",
    self_reference: bool = False,
    checklist: bool = False,
    pointwise: bool = False,
    likelihood: bool = False,
    way: Optional[Way] = None,
) -> PairwiseEvaluator:
    """An evaluator that says which of two outputs is better, asking in both orders.

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
    ``on_disagreement="probabilities"`` gives a pair whose orders disagree to
    the side the judge found likelier over both orders, instead of a tie
    (:func:`combine_orders`).
    ``self_reference=True`` has the judge answer ``inputs`` itself first and
    shows that answer as the reference (LLMBar's self-generated reference);
    ``metadata.self_reference`` holds it.
    ``checklist=True`` has the judge first write, from ``inputs`` alone, yes/no
    questions a response must pass (LLMBar's "metrics"), shown in the
    prompt's ``{checks}``; ``metadata.checklist`` holds them, and a call that
    passes ``checks=`` is judged with its own.
    ``pointwise=True`` asks of each output alone whether it does what the
    instruction asks (:mod:`.pointwise`), so no position can be preferred;
    the output the judge finds likelier to do so wins.
    ``likelihood=True`` asks nothing (:mod:`.likelihood`): each output is
    scored as the model's own reply to ``inputs``, and the one the
    instruction makes likelier, per token, wins (``metadata.likelihood_gain``);
    it needs a local model and takes none of the options that shape a question.
    With ``calibration`` (fitted by ``localjudge calibrate --pairwise --likelihood``)
    the gains become ``metadata.probabilities``.
    ``way`` (a :class:`~localjudge.judges.ways.Way`, such as ``WAYS["weighed"]``)
    asks the pair that way, in place of ``checklist``, ``self_reference``,
    ``pointwise``, ``likelihood`` and ``on_disagreement``; ``calibration``
    stays as given, and each result's metadata names the way (``way``). The weighed way
    (:mod:`.weighed`) is reached only so.
    """
    return _named(PairwiseEvaluator(_pairwise_core(**_options(locals()))), way)


def create_async_pairwise_judge(
    *,
    prompt: Any = None,
    feedback_key: str = "preference",
    judge: Any = None,
    model: Optional[str] = None,
    system: Optional[str] = None,
    allow_ties: bool = False,
    use_reasoning: bool = True,
    reference: bool = False,
    cache: Any = None,
    calibration: Any = None,
    few_shot_examples: Optional[list[dict[str, Any]]] = None,
    few_shot_placement: str = "end",
    on_disagreement: str = "tie",
    self_reference: bool = False,
    checklist: bool = False,
    pointwise: bool = False,
    likelihood: bool = False,
    way: Optional[Way] = None,
) -> AsyncPairwiseEvaluator:
    """The async twin of :func:`create_pairwise_judge`: both orders are asked at once."""
    return _named(AsyncPairwiseEvaluator(_pairwise_core(**_options(locals()))), way)


def _named(evaluator: _Pairwise, way: Optional[Way]) -> _Pairwise:
    """The evaluator, stamping its results with the way it was asked for (none: as the flags describe, unstamped)."""
    evaluator.way = way
    return evaluator


def _options(local_vars: Mapping[str, Any]) -> dict[str, Any]:
    options = {k: v for k, v in local_vars.items() if not k.startswith("_")}
    options["has_reference"] = options.pop("reference")
    return options
