"""The judge a set of judge options describes: the client, the evaluator, and a batch run's row judge.

``score``, ``batch``, ``compare`` and ``calibrate`` take the same judge
options; this module turns them (a :class:`~localjudge.commands.settings.JudgeSettings`)
into a judge, so the commands only parse and print. Misfitting options raise
:class:`~localjudge.errors.OptionError`, which names them by their field names
(a command line shows its own flags for them).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from .. import bounded_json
from ..errors import LocalJudgeError, NoCalibrationError, OptionError, UsageError
from ..judges.evaluators import SAME_ANSWER_PROMPT, default_prompt
from ..judges.screen import DEFAULT_SCREEN, WATCH, Screen, find_screen
from ..judges.ways import Way, default_way, question_of
from ..prompts.prompting import template_fields
from ..specs import parse_spec
from ..specs.options import MAX_DEFAULT_PARALLEL
from .settings import JudgeSettings

__all__ = [
    "MAX_DEFAULT_PARALLEL",
    "JudgeSettings",
    "RowJudge",
    "absolute_paths",
    "build_judge",
    "evaluator_from_settings",
    "judge_from_settings",
    "resolve_way",
]

if TYPE_CHECKING:
    from ..judges.ensemble import EnsembleEvaluator
    from ..judges.pairwise import PairwiseEvaluator
    from ..judges.single import JudgeEvaluator
    from ..judges.trajectory import TrajectoryEvaluator

    OneJudge = Union[JudgeEvaluator, PairwiseEvaluator, TrajectoryEvaluator]
    RowEvaluator = Union[OneJudge, EnsembleEvaluator]


def build_judge(
    model_spec: str, base_urls: tuple[str, ...], fallbacks: tuple[str, ...], *, load: bool = True, **model_options: Any
) -> Any:
    """The judge client; ``load=False`` checks everything but loads no local model (a chain loads none anyway)."""
    from ..clients.resolve import resolve_chain, resolve_model
    from ..runtimes.chat_templates import read_template_option

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


_NEEDS_INPUTS = {
    "self_reference": "has the judge answer each row's question",
    "checklist": "has the judge write checks for each row's request",
}
#: the judge options that pick a way of judging; given, they describe the way as they always have
WAY_FLAGS = ("self_reference", "checklist", "pointwise", "likelihood", "on_disagreement", "calibrated")


def resolve_way(settings: JudgeSettings, *, has_inputs: bool, has_reference: bool) -> tuple[JudgeSettings, Way, bool]:
    """The way these options judge rows of this shape, the options with it applied, and whether it is a default.

    ``--way NAME`` names one (the way flags given beside it add to it); the way
    flags alone describe one; with neither, the question's default
    (:func:`~localjudge.judges.ways.default_way`) judges, as measured best.
    """
    flags = {name: getattr(settings, name) for name in WAY_FLAGS if getattr(settings, name)}
    if "on_disagreement" in flags and not settings.pairwise:
        raise OptionError("{on_disagreement} is for pairs: use it with a pairwise judge ({pairwise})")
    own_question = settings.continuous or any(
        getattr(settings, name) is not None
        for name in ("prompt", "prompt_file", "output_schema", "few_shot", "choices")
    )
    question = question_of(
        pairwise=settings.pairwise,
        trajectory=settings.trajectory,
        has_inputs=has_inputs,
        has_reference=has_reference,
        own_question=own_question,
        evaluator=settings.evaluator,
    )
    defaulted = settings.way is None and not flags
    if settings.way is not None:
        base = settings.way
    elif defaulted:
        base = default_way(question, reads_replies=_reads_replies(settings), allow_ties=settings.allow_ties)
    else:
        base = Way()
    way = with_flags(base, flags)
    if way.pairs_only and not settings.pairwise:
        if base.pairs_only and settings.way is not None:
            raise OptionError(f"the {base.label} way judges pairs: use it with a pairwise judge ({{pairwise}})")
        fields = way.settings_fields()
        name = next((name for name in ("checklist", "pointwise", "likelihood") if fields[name]), "way")
        raise OptionError(f"{{{name}}} is for pairs: use it with a pairwise judge ({{pairwise}})")
    if way.same_answer and (own_question or settings.evaluator not in (None, "correctness", "same_answer")):
        raise OptionError(
            "the same-answer way asks a question of its own: it does not go with a prompt, a scale "
            "or an evaluator of yours"
        )
    if way.same_answer and (settings.pairwise or settings.trajectory or not (has_inputs and has_reference)):
        if not defaulted:
            raise OptionError(
                "the same-answer way asks whether an answer gives the same result as its row's reference: "
                "use it on rows with inputs and reference_outputs, not pairs or trajectories"
            )
        way = Way()  # rows without the question are judged as asked
    written = [name for name in ("self_reference", "checklist") if getattr(way, name)]
    if written and not has_inputs:
        if not defaulted:
            raise OptionError(f"{{{written[0]}}} {_NEEDS_INPUTS[written[0]]}, and these rows give no inputs")
        way = Way()  # what the default writes first needs the question: such rows are judged as asked
    return replace(settings, way=way, **way.settings_fields()), way, defaulted


def _reads_replies(settings: JudgeSettings) -> bool:
    """Whether every model the settings name runs here, and so can score a reply (likelihood needs it)."""
    from ..specs.parse import parse_spec

    try:
        return parse_spec(settings.model_spec).all_here
    except UsageError:  # reported where the judge is built
        return True


def with_flags(base: Way, flags: Mapping[str, Any]) -> Way:
    """``base`` with what the way flags given add to it (each is checked by the way it makes)."""
    methods = [name for name in ("pointwise", "likelihood") if flags.get(name)]
    if len(methods) > 1:
        raise OptionError("{likelihood} does not go with {pointwise}: each is a way of asking a pair, give one")
    changes: dict[str, Any] = {name: True for name in ("self_reference", "checklist", "calibrated") if flags.get(name)}
    if methods:
        changes["pairs"] = methods[0]
    if flags.get("on_disagreement"):
        changes["on_disagreement"] = flags["on_disagreement"]
    return replace(base, **changes)


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
    ``notify`` is told which calibration ``settings.calibrated`` applied.
    """
    build = build or judge_from_settings
    if settings.ensemble_specs:
        return _ensemble(
            settings, has_inputs=has_inputs, has_reference=has_reference, cache=cache, build=build, notify=notify
        )
    calibration_asked = settings.calibrated  # --calibrated itself: a missing fit is then an error
    check_options(settings)
    settings, way, _ = resolve_way(settings, has_inputs=has_inputs, has_reference=has_reference)
    check_way(settings, way, has_inputs=has_inputs)
    shape = RowShape(has_inputs, has_reference)
    question = asked_question(settings, way, shape, notify)
    judge = build(settings)
    evaluator = _evaluator(settings, way, shape, question, judge, _usable_cache(judge, cache))
    if settings.calibrated:
        way = _calibrate(evaluator, way, insisted=calibration_asked, notify=notify)
    evaluator.way = way
    return evaluator


@dataclass(frozen=True)
class RowShape:
    """What the rows give besides their outputs: what a prompt can show and a way can use."""

    has_inputs: bool
    has_reference: bool


@dataclass(frozen=True)
class Question:
    """What the judge is asked: the prompt (None: ours for the rows' shape), the result's key, and its scale."""

    prompt: Optional[str]
    feedback_key: Optional[str]
    continuous: bool
    writes_reference: bool  # the judge answers the question first and is compared with its own answer
    compares: bool  # asked whether the answer gives the same result as a reference (given, or the judge's own)


def _ensemble(settings: JudgeSettings, **shared: Any) -> RowEvaluator:
    """An ensemble of the main model and the others named, each member made from the same options."""
    from ..judges.ensemble import create_ensemble_judge

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


def asked_question(settings: JudgeSettings, way: Way, shape: RowShape, notify: Notify | None) -> Question:
    """The prompt, key and scale the options ask for: a prompt or file given, a ready-made evaluator's, or ours."""
    prompt = settings.prompt
    if settings.prompt_file is not None:
        from ..datasets.rows import read_text

        prompt = read_text(settings.prompt_file)
    if prompt is not None and way.pairs != "likelihood" and not settings.trajectory:
        answers = ["outputs_a", "outputs_b"] if settings.pairwise and way.pairs != "pointwise" else ["outputs"]
        context = ["inputs"] * shape.has_inputs + ["reference_outputs"] * shape.has_reference
        check_shown(prompt, answers, context, notify)
    writes_reference = way.self_reference and not shape.has_reference  # a reference given with the rows is used
    question = Question(
        prompt, settings.feedback_key, settings.continuous, writes_reference, writes_reference or way.same_answer
    )
    return _ready_made(settings, question) if settings.evaluator else question


def _ready_made(settings: JudgeSettings, question: Question) -> Question:
    """The question of the ready-made evaluator the options name, refused where the options shape another."""
    from ..judges.evaluators import EVALUATORS

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
    from ..clients.cached import cache_identity

    return cache if cache is not None and cache_identity(judge) is not None else None


def _evaluator(
    settings: JudgeSettings, way: Way, shape: RowShape, question: Question, judge: Any, cache: Any
) -> OneJudge:
    """The judge of pairs, of trajectories or of one output that the question and the way make."""
    from ..judges.pairwise import create_pairwise_judge, pairwise_prompt
    from ..judges.single import create_llm_as_judge
    from ..judges.trajectory import FEEDBACK_KEY, create_trajectory_llm_as_judge

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
    from ..trust.fit import stored_correction

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
    from ..judges.likelihood import SHOWN, LikelihoodPair

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
    from ..prompts.prompting import template_fields

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
    for name in ("pairwise", "evaluator", "calibrated", "self_reference", "checklist"):
        if getattr(settings, name):
            raise OptionError(
                f"{{{name}}} does not go with {{trajectory}}, which judges an agent's messages with the trajectory "
                "judge (give {prompt} or {prompt_file} for prompts of your own)"
            )


def read_jsonl(path: Path) -> list[Any]:
    from ..datasets.rows import read_json_lines

    return read_json_lines(path)


def read_json(path: Path) -> Any:
    try:
        return bounded_json.loads(path.read_text(encoding="utf-8"))
    except bounded_json.JSONLimitError as exc:
        raise UsageError(f"{path} is valid JSON, but {exc.msg}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from exc


class RowJudge:
    """The batch command's evaluator: each row gets the default prompt for what it has (inputs, a reference).

    It pickles as its options only and builds its judge where it is first
    called, so each Ray actor loads its own (and, with ``cache_file=None``,
    uses its own machine's default result cache). ``counters()`` says what
    the run cost: answers from the result cache, model calls and their tokens.
    ``keep_exchanges``: each result's metadata keeps the requests sent for
    its row and the model's raw answers (``exchanges``; a failure carries
    them too), so that a record shows exactly what the judge saw.
    """

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        use_cache: bool,
        cache_file: Optional[Path] = None,
        notify: Notify | None = None,
        keep_exchanges: bool = False,
    ) -> None:
        self.settings, self.use_cache, self.cache_file = settings, use_cache, cache_file
        self.keep_exchanges = keep_exchanges
        self.notify = notify  # not pickled: a note from an actor has no one to show it to
        self._lock = threading.Lock()
        self._judges: dict[str, Any] = {}  # a metered client per model spec (several in an ensemble)
        self._cache: Any = None
        self._failure: Optional[LocalJudgeError] = None
        self._evaluators: dict[tuple[bool, bool], RowEvaluator] = {}
        self._noted: set[str] = set()  # columns already said to be unshown

    def __getstate__(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "use_cache": self.use_cache,
            "cache_file": self.cache_file,
            "keep_exchanges": self.keep_exchanges,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        RowJudge.__init__(
            self,
            state["settings"],
            use_cache=state["use_cache"],
            cache_file=state["cache_file"],
            keep_exchanges=state.get("keep_exchanges", False),
        )

    @staticmethod
    def shape(values: dict[str, Any]) -> tuple[bool, bool]:
        return "inputs" in values, "reference_outputs" in values

    def prepare(self, shapes: Any) -> None:
        """Build the judge now, so a bad option or model stops the run before its first row."""
        for shape in shapes:
            self.evaluator(shape)

    def check(self, shapes: Any) -> None:
        """Every check :meth:`prepare` makes that needs no loaded model: for judges that load elsewhere."""
        for shape in shapes:
            self._stand_in(shape)

    def _stand_in(self, shape: tuple[bool, bool]) -> RowEvaluator:
        """The evaluator for ``shape`` over a client that loads no model and answers nothing."""
        from ..clients.scripted import ScriptedClient

        def stand_in(settings: JudgeSettings) -> Any:
            judge_from_settings(settings, load=False)
            return ScriptedClient([])

        # a stand-in cannot name a model, so its calibration is looked up where the judge loads
        settings = replace(self.settings, calibrated=False)
        return evaluator_from_settings(settings, has_inputs=shape[0], has_reference=shape[1], build=stand_in)

    def describe(self, shapes: Any) -> dict[str, Any]:
        """This judge as it asks rows of ``shapes``: model, checksum, way, prompt, schema (:mod:`.described`).

        From the evaluators :meth:`prepare` built; for a judge that loads
        elsewhere, from stand-ins, whose ways say nothing of a calibration.
        """
        from .described import describe_judge

        evaluators = {shape: self._evaluators.get(shape) or self._stand_in(shape) for shape in shapes}
        return describe_judge(self.settings, evaluators)

    def evaluator(self, shape: tuple[bool, bool]) -> RowEvaluator:
        if shape in self._evaluators:
            return self._evaluators[shape]
        with self._lock:
            if self._failure is not None:  # a judge that failed to build is not built again for every row
                raise self._failure
            try:
                if self._cache is None and self.use_cache:
                    from ..clients.result_cache import ResultCache

                    self._cache = ResultCache(self.cache_file)
                if shape not in self._evaluators:
                    evaluator = evaluator_from_settings(
                        self.settings,
                        has_inputs=shape[0],
                        has_reference=shape[1],
                        cache=self._cache,
                        build=self._metered,
                        notify=self.notify,
                    )
                    self._evaluators[shape] = evaluator
                    if self.notify is not None and evaluator.way is not None:
                        described = evaluator.way.describe(pair=self.settings.pairwise)
                        given = " and ".join(("inputs",) * shape[0] + ("reference_outputs",) * shape[1]) or "no inputs"
                        self.notify(f"way for rows with {given}: {evaluator.way.label} ({described})")
            except LocalJudgeError as exc:
                self._failure = exc
                raise
            return self._evaluators[shape]

    def __call__(self, **values: Any) -> Any:
        evaluator = self.evaluator(self.shape(values))
        self._note_unshown(evaluator, values)
        if not self.keep_exchanges:
            return evaluator(**values)
        from ..judges.plan import keeping_exchanges

        with keeping_exchanges() as exchanges:
            try:
                result = evaluator(**values)
            except LocalJudgeError as exc:
                exc.exchanges = exchanges  # the requests that went before the failure, for its record
                raise
        if isinstance(result, dict) and isinstance(result.get("metadata", {}), dict):
            return {**result, "metadata": {**(result.get("metadata") or {}), "exchanges": exchanges}}
        return result

    def _note_unshown(self, evaluator: RowEvaluator, values: Mapping[str, Any]) -> None:
        """Columns the judge is not shown are data, not errors: said once, each, when a row first brings them."""
        shown = fields_shown(evaluator)
        if shown is None or self.notify is None:
            return
        with self._lock:
            unshown = sorted(set(values) - shown - self._noted)
            self._noted.update(unshown)
        if unshown:
            self.notify(f"note: not shown to the judge (kept as data): {', '.join(unshown)}")

    def _metered(self, settings: JudgeSettings) -> Any:
        """The judge client for ``settings``' model, counted; one per model, however many evaluators use it."""
        spec = settings.model_spec
        if spec not in self._judges:
            from ..clients.metered import MeteredClient

            self._judges[spec] = MeteredClient(judge_from_settings(settings))
        return self._judges[spec]

    def counters(self) -> dict[str, int]:
        if not self._judges:
            return {}
        judges = list(self._judges.values())
        return {
            "cached": self._cache.hits if self._cache is not None else 0,
            "model_calls": sum(j.calls for j in judges),
            "prompt_tokens": sum(j.prompt_tokens for j in judges),
            "completion_tokens": sum(j.completion_tokens for j in judges),
        }


def absolute_paths(settings: JudgeSettings) -> JudgeSettings:
    """The options with every file they name made absolute, for judges built in other processes (Ray actors)."""

    def absolute(value: Any) -> Any:
        if isinstance(value, Path):
            return value.resolve()
        if isinstance(value, str) and Path(value).expanduser().exists():
            return str(Path(value).expanduser().resolve())
        return value

    def absolute_spec(text: str) -> str:
        spec = parse_spec(text)
        if spec.kind == "chain":
            return ",".join(absolute_spec(member.text) for member in spec.members)
        if spec.kind != "local" or not Path(spec.target).expanduser().exists():
            return spec.text
        prefix = spec.text[: len(spec.text) - len(spec.target)]  # gguf:, hf:, or none
        return prefix + absolute(spec.target)

    options = settings.model_options
    if options.get("chat_template") is not None:
        options = options.replace(chat_template=absolute(options["chat_template"]))
    names = settings.ensemble_names
    if settings.ensemble_specs and not names:  # a member is named as given, not by the path an actor is handed
        names = tuple(member_names((settings.model_spec, *settings.ensemble_specs)))
    return replace(
        settings,
        ensemble_names=names,
        prompt_file=absolute(settings.prompt_file),
        few_shot=absolute(settings.few_shot),
        output_schema=absolute(settings.output_schema),
        model_spec=absolute_spec(settings.model_spec),
        fallbacks=tuple(map(absolute_spec, settings.fallbacks)),
        ensemble_specs=tuple(map(absolute_spec, settings.ensemble_specs)),
        model_options=options,
    )
