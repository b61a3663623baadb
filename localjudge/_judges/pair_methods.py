"""The ways of asking a pair, each a builder of its plan from the factory's options, and the registry of them.

A method of one's own joins through :func:`register_pair_method`: one
builder, and the way is reachable by name, as a :class:`~.ways.Way`, and in
results, as the methods that ship are.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Optional, Union

from .._caller_warnings import warn_caller
from .._prompts.prompting import PAIR_EXAMPLE, template_fields
from ..errors import OptionError, UsageError
from ..types import JudgeClient, Prompt
from .both_orders import BothOrders
from .building import build_core
from .core import JudgeCore
from .likelihood import LikelihoodPair
from .pair_prompt import pairwise_prompt, pairwise_schema, shows_reference
from .pointwise import PointwisePair, pointwise_pair_prompt
from .ways import ONLY_WHERE_REGISTERED, PAIR_METHODS, WAYS, Way, method_named
from .weighed import PairPlan, WeighedPair

if TYPE_CHECKING:
    from .._clients.result_cache import ResultCache
    from .._trust.correction import Correction

__all__ = ["PairOptions", "PairPlan", "pair_plan", "register_pair_method", "unregister_pair_method"]


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
        raise OptionError(
            f"no pair method named {way.pairs!r} in this process; the methods: {', '.join(_METHODS)} "
            f"({ONLY_WHERE_REGISTERED})"
        )
    return build(options, way)


def _sections(options: PairOptions, way: Way) -> dict[str, bool]:
    """What our pair prompts show besides the answers: a reference (given, or the judge's own), and its checks."""
    return {
        "has_reference": options.has_reference or way.self_reference,
        "own_reference": way.self_reference,
        "checks": way.checklist,
    }


def _both_orders(options: PairOptions, way: Way) -> BothOrders:
    """Both orders side by side: what the judge writes first (its answer, its checks), then each order's verdict."""
    prompt = options.prompt if options.prompt is not None else pairwise_prompt(**_sections(options, way))
    core = options.core(
        prompt=prompt,
        output_schema=pairwise_schema(allow_ties=options.allow_ties, use_reasoning=options.use_reasoning),
        few_shot_shape=PAIR_EXAMPLE,
        calibration=options.calibration,
        verdict_field="winner",
        self_reference=way.self_reference,
        checklist=way.checklist,
    )
    return BothOrders(core, shows_reference(prompt), way.on_disagreement)


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
        prompt = pointwise_pair_prompt(**_sections(options, way))
    core = options.core(
        prompt=prompt, few_shot_examples=None, self_reference=way.self_reference, checklist=way.checklist
    )
    return PointwisePair(core, shows_reference(prompt))


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
    from .._clients.cached import cache_identity
    from .._trust.pair_weights import read_pair_weights

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
