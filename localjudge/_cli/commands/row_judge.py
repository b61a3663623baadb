"""A batch run's judge of rows: an evaluator per shape of row, built where the rows are judged."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..._specs import parse_spec
from ...errors import LocalJudgeError
from .judging import Notify, evaluator_from_settings, fields_shown, judge_from_settings, member_names
from .settings import JudgeSettings

if TYPE_CHECKING:
    from .judging import RowEvaluator

__all__ = ["RowJudge", "absolute_paths"]


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
        from ..._clients.scripted import ScriptedClient

        def stand_in(settings: JudgeSettings) -> Any:
            judge_from_settings(settings, load=False)
            return ScriptedClient([])

        # a stand-in cannot name a model, so its calibration is looked up where the judge loads
        settings = replace(self.settings, way_flags=replace(self.settings.way_flags, calibrated=False))
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
                    from ..._clients.result_cache import ResultCache

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
        from ..._judges.plan import keeping_exchanges

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
            from ..._clients.metered import MeteredClient

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
