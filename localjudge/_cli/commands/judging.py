"""The judge a set of judge options describes: the client, the evaluator, and a batch run's row judge.

``score``, ``batch``, ``compare`` and ``calibrate`` take the same judge
options; this module turns them (a :class:`~localjudge._cli.commands.settings.JudgeSettings`)
into a judge, so the commands only parse and print. Misfitting options raise
:class:`~localjudge.errors.OptionError`, which names them by their field names
(a command line shows its own flags for them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from ... import _bounded_json as bounded_json
from ..._judges.evaluators import SAME_ANSWER_PROMPT, default_prompt
from ..._judges.screen import DEFAULT_SCREEN, WATCH, Screen, find_screen
from ..._judges.ways import Way
from ..._prompts.prompting import template_fields
from ..._specs.options import MAX_DEFAULT_PARALLEL
from ...errors import NoCalibrationError, OptionError, UsageError
from .settings import JudgeSettings
from .way_resolution import resolve_way

__all__ = [
    "MAX_DEFAULT_PARALLEL",
    "JudgeSettings",
    "build_judge",
    "evaluator_from_settings",
    "judge_from_settings",
]

if TYPE_CHECKING:
    from ..._judges.ensemble import EnsembleEvaluator
    from ..._judges.pairwise import PairwiseEvaluator
    from ..._judges.single import JudgeEvaluator
    from ..._judges.trajectory import TrajectoryEvaluator

    OneJudge = Union[JudgeEvaluator, PairwiseEvaluator, TrajectoryEvaluator]
    RowEvaluator = Union[OneJudge, EnsembleEvaluator]


def build_judge(
    model_spec: str, base_urls: tuple[str, ...], fallbacks: tuple[str, ...], *, load: bool = True, **model_options: Any
) -> Any:
    """The judge client; ``load=False`` checks everything but loads no local model (a chain loads none anyway)."""
    from ..._clients.resolve import resolve_chain, resolve_model
    from ..._runtimes.chat_templates import read_template_option

    template = read_template_option(model_options.pop("chat_template", None))
    if template is not None:
        model_options["chat_template"] = template
    if fallbacks:
        return resolve_chain([model_spec, *fallbacks], base_url=base_urls, **model_options)
    return resolve_model(model_spec, base_url=base_urls, load=load, **model_options)


def judge_from_settings(settings: JudgeSettings, *, load: bool = True) -> Any:
    """The judge client the model options name."""
    options = dict(settings.model_options)
    return build_judge(settings.model_spec, settings.base_urls, settings.fallbacks, load=load, **options)


#: the options that shape a single output's score, which a pairwise judge does not take
SINGLE_OUTPUT_OPTIONS = ("continuous", "choices", "output_schema")

#: where a note goes that a caller may want to show (which calibration was applied); none by default
Notify = Callable[[str], None]


def member_names(specs: Sequence[str]) -> list[str]:
    """An ensemble's members named by their model specs; a spec given again is told apart by its place."""
    names = [spec if spec not in specs[:place] else f"{spec} (member {place + 1})" for place, spec in enumerate(specs)]
    return names if len(set(names)) == len(names) else [f"member {place + 1}" for place in range(len(specs))]


def evaluator_from_settings(
    settings: JudgeSettings,
    *,
    has_inputs: bool,
    has_reference: bool,
    cache: Any = None,
    build: Callable[[JudgeSettings], Any] | None = None,
    notify: Notify | None = None,
) -> RowEvaluator:
    """An evaluator from the judge options, for rows of this shape; our default prompt when none was given.

    ``settings.pairwise`` makes it a pairwise judge (outputs_a, outputs_b);
    ``settings.ensemble_specs`` an ensemble of the main model and those.
    ``build`` makes a judge client from settings (default: :func:`judge_from_settings`);
    ``notify`` is told which calibration the way's ``calibrated`` applied.
    """
    build = build or judge_from_settings
    if settings.ensemble_specs:
        return _ensemble(
            settings, has_inputs=has_inputs, has_reference=has_reference, cache=cache, build=build, notify=notify
        )
    calibration_asked = settings.way_flags.calibrated  # --calibrated itself: a missing fit is then an error
    check_options(settings)
    settings, way, _ = resolve_way(settings, has_inputs=has_inputs, has_reference=has_reference)
    check_way(settings, way, has_inputs=has_inputs)
    shape = RowShape(has_inputs, has_reference)
    question = asked_question(settings, way, shape, notify)
    judge = build(settings)
    evaluator = _evaluator(settings, way, shape, question, judge, _usable_cache(judge, cache))
    if way.calibrated:
        way = _calibrate(evaluator, way, insisted=calibration_asked, notify=notify)
    evaluator.way = way
    return evaluator


@dataclass(frozen=True)
class RowShape:
    """What the rows give besides their outputs: what a prompt can show and a way can use."""

    has_inputs: bool
    has_reference: bool


@dataclass(frozen=True)
class AskedQuestion:
    """What the judge is asked: the prompt (None: ours for the rows' shape), the result's key, and its scale."""

    prompt: Optional[str]
    feedback_key: Optional[str]
    continuous: bool
    writes_reference: bool  # the judge answers the question first and is compared with its own answer
    compares: bool  # asked whether the answer gives the same result as a reference (given, or the judge's own)


def _ensemble(settings: JudgeSettings, **shared: Any) -> RowEvaluator:
    """An ensemble of the main model and the others named, each member made from the same options."""
    from ..._judges.ensemble import create_ensemble_judge

    specs = (settings.model_spec, *settings.ensemble_specs)
    members = [
        evaluator_from_settings(replace(settings, model_spec=spec, ensemble_specs=(), ensemble_names=()), **shared)
        for spec in specs
    ]
    return create_ensemble_judge(*members, names=list(settings.ensemble_names) or member_names(specs))


def check_options(settings: JudgeSettings) -> None:
    """Options that do not fit one another whatever the way, refused before any model is loaded."""
    if settings.trajectory:
        _check_trajectory_options(settings)
    if settings.allow_ties and not settings.pairwise:
        raise OptionError("{allow_ties} is for pairs: use it with a pairwise judge ({pairwise})")
    shapes = [f"{{{name}}}" for name in SINGLE_OUTPUT_OPTIONS if getattr(settings, name)]
    if settings.pairwise and shapes:
        raise OptionError(f"{', '.join(shapes)} shapes a single output's score; a pairwise judge picks A or B")
    if len(shapes) > 1:
        raise OptionError(f"{' and '.join(shapes)} are each a shape of the score: give one")
    if settings.prompt is not None and settings.prompt_file is not None:
        raise OptionError("Give {prompt} or {prompt_file}, not both")


def check_way(settings: JudgeSettings, way: Way, *, has_inputs: bool) -> None:
    """Options that do not fit the way the rows will be judged (the way checked its own parts when it was made)."""
    if way.pairs == "pointwise" and not has_inputs:
        raise OptionError("{pointwise} asks whether each output does what the instruction asks: give the inputs")
    if way.pairs == "likelihood":  # rows without inputs, or with a reference, are each their own error (the judge's)
        given = [
            f"{{{name}}}" for name in ("prompt", "prompt_file", "evaluator", "few_shot") if getattr(settings, name)
        ]
        if given:
            raise OptionError(f"{{likelihood}} asks the judge nothing, so it does not go with {', '.join(given)}")


def asked_question(settings: JudgeSettings, way: Way, shape: RowShape, notify: Notify | None) -> AskedQuestion:
    """The prompt, key and scale the options ask for: a prompt or file given, a ready-made evaluator's, or ours."""
    prompt = settings.prompt
    if settings.prompt_file is not None:
        from ..._datasets.rows import read_text

        prompt = read_text(settings.prompt_file)
    if prompt is not None and way.pairs != "likelihood" and not settings.trajectory:
        answers = ["outputs_a", "outputs_b"] if settings.pairwise and way.pairs != "pointwise" else ["outputs"]
        context = ["inputs"] * shape.has_inputs + ["reference_outputs"] * shape.has_reference
        check_shown(prompt, answers, context, notify)
    writes_reference = way.self_reference and not shape.has_reference  # a reference given with the rows is used
    question = AskedQuestion(
        prompt, settings.feedback_key, settings.continuous, writes_reference, writes_reference or way.same_answer
    )
    return _ready_made(settings, question) if settings.evaluator else question


def _ready_made(settings: JudgeSettings, question: AskedQuestion) -> AskedQuestion:
    """The question of the ready-made evaluator the options name, refused where the options shape another."""
    from ..._judges.evaluators import EVALUATORS

    ready = EVALUATORS.get(settings.evaluator or "")
    if ready is None:
        raise UsageError(f"no evaluator named {settings.evaluator!r}; see: localjudge evaluators list")
    if question.prompt is not None:
        raise OptionError("{evaluator} brings its own prompt; give {evaluator} or {prompt}, not both")
    if ready.pairwise != settings.pairwise:
        where = "a pairwise judge ({pairwise})" if ready.pairwise else "a judge of one output (without {pairwise})"
        judges = "pairs" if ready.pairwise else "one output"
        raise OptionError(f"the {{name}} evaluator judges {judges}: use {where}", name=ready.name)
    if settings.choices or (question.continuous and not ready.continuous):
        raise OptionError("the {name} evaluator has its own scale; drop {continuous} and {choices}", name=ready.name)
    prompt = ready.prompt or None
    if question.compares and ready.name == "correctness":
        prompt = SAME_ANSWER_PROMPT  # "is it right?" asked as "the same result as the reference?": measured better
    return replace(
        question, prompt=prompt, feedback_key=question.feedback_key or ready.name, continuous=ready.continuous
    )


def _usable_cache(judge: Any, cache: Any) -> Any:
    """The result cache, unless the judge cannot say which model answers: such a judge is asked every time."""
    from ..._clients.cached import cache_identity

    return cache if cache is not None and cache_identity(judge) is not None else None


def _evaluator(
    settings: JudgeSettings, way: Way, shape: RowShape, question: AskedQuestion, judge: Any, cache: Any
) -> OneJudge:
    """The judge of pairs, of trajectories or of one output that the question and the way make."""
    from ..._judges.pairwise import create_pairwise_judge, pairwise_prompt
    from ..._judges.single import create_llm_as_judge
    from ..._judges.trajectory import FEEDBACK_KEY, create_trajectory_llm_as_judge

    shared: dict[str, Any] = {
        "judge": judge,
        "system": settings.system,
        "use_reasoning": settings.reasoning,
        "few_shot_examples": read_jsonl(settings.few_shot) if settings.few_shot else None,
        "few_shot_placement": "start" if settings.few_shot_first else "end",
        "cache": cache,
    }
    prompt, own = question.prompt, question.writes_reference
    if settings.pairwise:
        if prompt is None and way.pairs == "both-orders":  # the other methods bring their own
            with_reference = shape.has_reference or own
            prompt = pairwise_prompt(
                has_inputs=shape.has_inputs, has_reference=with_reference, own_reference=own, checks=way.checklist
            )
        return create_pairwise_judge(
            prompt=prompt,
            feedback_key=question.feedback_key or "preference",
            allow_ties=settings.allow_ties,
            reference=shape.has_reference and way.pairs != "likelihood",
            way=replace(way, self_reference=own),  # a reference given with the rows is used
            **shared,
        )
    scale: dict[str, Any] = {
        "continuous": question.continuous,
        "choices": list(settings.choices) if settings.choices is not None else None,
        "output_schema": read_json(settings.output_schema) if settings.output_schema else None,
    }
    if settings.trajectory:  # prompt None: ours, with the sections each row's values need
        key = question.feedback_key or FEEDBACK_KEY
        return create_trajectory_llm_as_judge(prompt=prompt, feedback_key=key, **scale, **shared)
    if prompt is None:
        ours = default_prompt(has_inputs=shape.has_inputs, has_reference=shape.has_reference)
        prompt = SAME_ANSWER_PROMPT if question.compares else ours
    key = question.feedback_key or "score"
    judge = create_llm_as_judge(prompt=prompt, feedback_key=key, self_reference=own, **scale, **shared)
    judge.core.screen = screen_for(settings)
    return judge


def screen_for(settings: JudgeSettings) -> Screen:
    """The screen the options name; unnamed, full for our question of whether an answer is right, else none."""
    if settings.screen is not None:
        return find_screen(settings.screen)
    ours = settings.prompt is None and settings.prompt_file is None and settings.output_schema is None
    return DEFAULT_SCREEN if ours and settings.evaluator in (None, "correctness", "same_answer") else WATCH


def _calibrate(evaluator: OneJudge, way: Way, *, insisted: bool, notify: Notify | None) -> Way:
    """The stored fit for this judge applied, and the way as it then judges.

    Where no fit is kept, a named or default way judges as the model says
    (uncalibrated, with a note); ``insisted`` (``--calibrated`` itself) makes that an error.
    """
    from ..._trust.fit import stored_correction

    try:
        correction, note = stored_correction(evaluator)
    except NoCalibrationError:
        if insisted:
            raise
        way = way.uncalibrated()
        correction, note = None, "note: no calibration is kept for this judge, so its verdicts are not calibrated"
        if way == Way():  # a question of one's own, with no fit for it: as asked, nothing to say
            note = None
    evaluator.core.use_calibration(correction)
    if notify is not None and note is not None:
        notify(note)
    return way


def fields_shown(evaluator: Any) -> Optional[set[str]]:
    """The row values an evaluator shows its judge; None where it cannot tell (a callable prompt, an ensemble)."""
    from ..._judges.likelihood import SHOWN, LikelihoodPair

    pair = getattr(evaluator, "pair", None)
    if isinstance(pair, LikelihoodPair):
        return set(SHOWN)
    core = getattr(evaluator, "core", None)
    prompt = getattr(core, "prompt", None)
    if core is None or not isinstance(prompt, str) or getattr(evaluator, "trajectory", None) is not None:
        return None
    shown = set(template_fields(prompt))
    if pair is not None:  # both outputs of a pair, each shown in one order or alone
        shown |= {"outputs_a", "outputs_b"}
    if core.self_reference is not None:  # the question, answered by the judge first
        shown.add("inputs")
    return shown


def check_shown(prompt: str, answers: Sequence[str], context: Sequence[str], notify: Notify | None) -> None:
    """A prompt of the user's must show the answers it judges; context it leaves out is noted, never left unsaid."""
    from ..._prompts.prompting import template_fields

    shown = set(template_fields(prompt))

    def braced(names: Sequence[str]) -> str:
        return ", ".join(f"{{{name}}}" for name in names if name not in shown)

    if braced(answers):
        raise OptionError(
            "the prompt shows no {fields}, so the judge would never see what it is to judge: add {fields} to it",
            fields=braced(answers),
        )
    if braced(context) and notify is not None:
        notify(f"note: the prompt shows no {braced(context)}: what was given for it is not shown to the judge")


def _check_trajectory_options(settings: JudgeSettings) -> None:
    """A trajectory judges one agent's messages: options for pairs, ready-made evaluators and calibration do not fit."""
    asked = {"pairwise": settings.pairwise, "evaluator": settings.evaluator, **settings.way_flags.given()}
    for name in ("pairwise", "evaluator", "calibrated", "self_reference", "checklist"):
        if asked.get(name):
            raise OptionError(
                f"{{{name}}} does not go with {{trajectory}}, which judges an agent's messages with the trajectory "
                "judge (give {prompt} or {prompt_file} for prompts of your own)"
            )


def read_jsonl(path: Path) -> list[Any]:
    from ..._datasets.rows import read_json_lines

    return read_json_lines(path)


def read_json(path: Path) -> Any:
    try:
        return bounded_json.loads(path.read_text(encoding="utf-8"))
    except bounded_json.JSONLimitError as exc:
        raise UsageError(f"{path} is valid JSON, but {exc.msg}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from exc
