"""The judge's core, shared by every evaluator: build a request from a row, read a score from the answer.

:class:`JudgeCore` holds the prompt, the score's schema and the client;
:func:`build_core` checks the factories' arguments and makes one. A
judgement is a plan (:meth:`JudgeCore.plan`): a generator that yields the
requests to send together and is sent their responses (:mod:`.plan`), so
that sync and async judging share it. The evaluator objects in
:mod:`.single` and :mod:`.pairwise` only drive plans.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union, cast

from ..caller_warnings import warn_caller
from ..clients.base import field_of, plain_data, read_choice
from ..clients.fallback import FALLBACK_FIELD
from ..errors import JudgeRuntimeError, OutputParseError, UsageError
from ..prompts.parsing import parse_json_output, validate
from ..prompts.prompting import (
    FEW_SHOT_PLACEMENTS,
    SINGLE_EXAMPLE,
    ExampleShape,
    build_messages,
    format_few_shot_examples,
    template_fields,
)
from ..prompts.schema import OutputSchema, default_output_schema, normalise_output_schema
from ..types import AnyModelClient, FewShotExample, JudgeClient, OutputSchemaSpec, Prompt, SupportsCheckSchema, offers
from ..wording import Message
from .checklist import CHECKS_FIELD, Checklist, given_checks, refuse_hidden_checks
from .plan import Step
from .screen import WATCH, Screen, find_screen, mark, without_asking
from .self_reference import SelfReference, own_answer_comment
from .written import Writer, with_written, write_first

if TYPE_CHECKING:
    from ..clients.result_cache import ResultCache
    from ..trust.correction import Correction

__all__ = [
    "READOUT_FIELD",
    "RESPONSE_METADATA_FIELD",
    "JudgeCore",
    "build_core",
    "chain_record",
    "recalibrate",
    "response_metadata",
]

#: the field a client may add to its response to say who answered (see FallbackClient)
RESPONSE_METADATA_FIELD = FALLBACK_FIELD
#: the field a local client adds with the probabilities of each field's values (see LocalClient)
READOUT_FIELD = "readout"


@dataclass
class JudgeCore:
    prompt: Prompt
    feedback_key: str
    client: Any
    model: Optional[str]
    system: Optional[str]
    few_shot_examples: Optional[Sequence[Mapping[str, Any]]]
    few_shot_placement: str
    schema: OutputSchema
    choices: Optional[list[float]]
    continuous: bool
    use_reasoning: bool
    verdict_field: Optional[str] = None  # the answer's field a calibration corrects (None: it has none)
    few_shot_shape: ExampleShape = SINGLE_EXAMPLE
    calibration: Optional[Correction] = None  # applied to the verdict's probabilities (see recalibrate)
    self_reference: Optional[SelfReference] = None  # without a reference, the judge first writes its own
    checklist: Optional[Checklist] = None  # without checks in the row, the judge first writes its own
    reads_replies: bool = False  # a likelihood pair's core: it sends readings of replies, never build_request's
    screen: Screen = WATCH  # what screening the answer changes before the judge sees it (the caller's prompt: none)

    def plan(self, inputs: object, outputs: object, reference_outputs: object, kwargs: Mapping[str, Any]) -> Step:
        """One output judged: the answer screened, what the judge writes first (its reference, its checks), the verdict."""
        found = self.screen.look(outputs)
        if found is not None and self.screen.answers_alone(found) and self._true_or_false:
            return without_asking(self.feedback_key, self.screen, found)
        outputs = self.screen.shown(outputs, found)
        reference, kwargs, written = yield from self.before_verdict(inputs, reference_outputs, kwargs)
        (response,) = yield [self.build_request(inputs, outputs, reference, kwargs)]
        result = self.read_result(response)
        if "self_reference" in written.texts:
            result = own_answer_comment(result, written.texts["self_reference"])
        return mark(with_written(result, written), self.screen, found)

    @property
    def _true_or_false(self) -> bool:
        """Whether the verdict is our true/false score, which a screen may give without asking."""
        return self.schema.is_default and not self.continuous and self.choices is None

    def before_verdict(self, inputs: object, reference_outputs: object, kwargs: Mapping[str, Any]) -> Step:
        """The reference and values to show, and what the judge wrote for them, in one step of requests.

        The judge writes only what the call does not give: a reference without
        ``reference_outputs``, checks without a ``checks`` value.
        """
        writers: dict[str, Writer] = {}
        if self.self_reference is not None and reference_outputs is None:
            writers["self_reference"] = self.self_reference
        if self.checklist is None:
            refuse_hidden_checks(kwargs, self.prompt)
        elif (given := given_checks(kwargs.get(CHECKS_FIELD))) is None:
            writers["checklist"] = self.checklist
        else:
            kwargs = {**kwargs, CHECKS_FIELD: given}
        written = yield from write_first(writers, inputs, model=self.model, backend=self.backend)
        if "checklist" in written.texts:
            kwargs = {**kwargs, CHECKS_FIELD: written.texts["checklist"]}
        return written.texts.get("self_reference", reference_outputs), kwargs, written

    def build_request(
        self, inputs: object, outputs: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> dict[str, Any]:
        values = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs, **kwargs}
        messages = build_messages(
            self.prompt,
            values=values,
            system=self.system,
            few_shot_examples=self.few_shot_examples,
            few_shot_placement=self.few_shot_placement,
            few_shot_shape=self.few_shot_shape,
        )
        request: dict[str, Any] = {"messages": messages}
        if self.model is not None:
            request["model"] = self.model
        request["response_format"] = self.schema.response_format()
        return request

    def read_parsed(self, response: object) -> Any:
        """The answer, parsed and checked against the schema (an error with the raw text otherwise)."""
        content, finish_reason = read_choice(response)
        return parse_json_output(
            content,
            self.schema.json_schema,
            finish_reason=finish_reason,
            model_type=self.schema.model_type,
            backend=self.backend,
        )

    @property
    def backend(self) -> str:
        return getattr(self.client, "name", type(self.client).__name__)

    def read_result(self, response: object) -> Any:
        """The evaluator's result: the default score dict, or the answer in the shape of a custom schema."""
        parsed = self.read_parsed(response)
        if not self.schema.is_default:
            return self.schema.instance(parsed)
        if self.continuous and not 0 <= parsed["score"] <= 1:  # a remote judge is not held by our grammar
            content, _ = read_choice(response)
            raise OutputParseError(
                f"The judge's score {parsed['score']!r} is outside 0 to 1, the range its schema states",
                raw_output=content or "",  # it parsed, so it is text already: the "" is never used
                schema=self.schema.json_schema,
                backend=self.backend,
            )
        metadata = response_metadata(response, "score")
        if self.calibration is not None:
            parsed, metadata = recalibrate(parsed, metadata, "score", self.calibration, backend=self.backend)
        return {
            "key": self.feedback_key,
            "score": self._score(parsed["score"]),
            "comment": parsed.get("reasoning") if self.use_reasoning else None,
            "metadata": metadata,
        }

    def verdict_values(self) -> tuple[str, ...]:
        """The values this judge's verdict can take, as JSON text: what a calibration corrects."""
        from ..trust.correction import verdict_classes  # numpy, only for calibration

        field = self.verdict_field
        classes = verdict_classes(self.schema.json_schema, field) if field else None
        if classes is None:
            shape = (
                Message("a number ({continuous:continuous=True})")
                if self.continuous
                else "shaped by its own output schema"
            )
            raise UsageError(
                Message(
                    "calibration is for verdicts with a fixed set of values (true/false, choices, A/B); "
                    "this judge's answer is {shape}",
                    shape=shape,
                )
            )
        return classes

    def use_calibration(self, correction: Optional[Correction]) -> None:
        """Correct this judge's verdicts with ``correction`` from now on (None: not at all), where it fits them."""
        if correction is not None:
            from ..trust.correction import value_key

            classes = self.verdict_values()
            if {value_key(c) for c in classes} != {value_key(c) for c in correction.classes}:
                raise UsageError(
                    f"this calibration was fitted for the values {', '.join(correction.classes)}, "
                    f"but this judge answers {', '.join(classes)}"
                )
        self.calibration = correction

    def _score(self, score: Union[bool, float]) -> Union[bool, float]:
        """The score as the schema allows it (checked before): one of the choices, a number, or true/false."""
        if self.choices is not None:
            return next(c for c in self.choices if c == score)
        if self.continuous:
            return float(score)
        return score


def response_metadata(response: object, score_field: str) -> Optional[dict[str, Any]]:
    """Who answered (a fallback chain) and how likely each score was (a local model), merged; None for neither."""
    metadata: dict[str, Any] = {}
    extra = field_of(response, RESPONSE_METADATA_FIELD)
    if isinstance(extra, Mapping):
        metadata.update(extra)
    readout = field_of(response, READOUT_FIELD)
    if isinstance(readout, Mapping) and isinstance(readout.get(score_field), Mapping):
        metadata.update(readout[score_field])
    return plain_data(metadata) or None


def chain_record(metadatas: Sequence[Optional[Mapping[str, Any]]]) -> dict[str, Any]:
    """What a fallback chain said of a pair's requests, for the pair's metadata; empty unless a chain answered all.

    ``clients``: the member that answered each request, in the order asked;
    ``failures``: the members that failed first, each with its request's place in that order.
    """
    clients = [(metadata or {}).get("client") for metadata in metadatas]
    if not all(isinstance(client, str) for client in clients):
        return {}
    record: dict[str, Any] = {"clients": clients}
    failures = [
        {**failure, "request": place}
        for place, metadata in enumerate(metadatas)
        for failure in (metadata or {}).get("failures") or ()
    ]
    if failures:
        record["failures"] = failures
    return record


def recalibrate(
    parsed: Mapping[str, Any],
    metadata: Optional[Mapping[str, Any]],
    field: str,
    correction: Correction,
    *,
    backend: Optional[str] = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The answer with ``field`` set to the value the corrected probabilities favour, and the metadata.

    The metadata gets the corrected probabilities (and expected score); what
    the judge said, and its own figures, stay under ``uncalibrated``. Where
    the corrected probabilities tie, the judge's own verdict stands.
    """
    from ..trust.correction import correct, value_key

    raw = (metadata or {}).get("probabilities")
    if metadata is None or not isinstance(raw, Mapping):
        raise JudgeRuntimeError(
            "a calibrated judge needs its model's probabilities, and this answer came without them "
            "(only local models read them out)",
            backend=backend,
        )
    spelled = {value_key(text): text for text in raw}  # the corrected figures keep the judge's spelling
    if not any(value_key(c) in spelled and raw[spelled[value_key(c)]] > 0 for c in correction.classes):
        raise JudgeRuntimeError(
            f"the judge's probabilities ({dict(raw)}) hold none of the values the calibration corrects "
            f"({', '.join(correction.classes)})",
            backend=backend,
        )
    corrected = {spelled.get(value_key(c), c): p for c, p in correct(raw, correction).items()}
    own = value_key(json.dumps(parsed[field]))
    favoured = max(corrected, key=lambda text: (corrected[text], value_key(text) == own))  # a tie keeps its own
    uncalibrated = {field: parsed[field], "probabilities": dict(raw)}
    figures: dict[str, Any] = {"probabilities": corrected}
    if "expected_score" in (metadata or {}):
        uncalibrated["expected_score"] = metadata["expected_score"]
        figures["expected_score"] = sum(float(json.loads(text)) * p for text, p in corrected.items())
    return (
        {**parsed, field: json.loads(favoured)},
        {**metadata, **figures, "calibrated": True, "uncalibrated": uncalibrated},
    )


def build_core(
    *,
    prompt: Prompt,
    feedback_key: str,
    judge: Optional[JudgeClient],
    model: Optional[str],
    system: Optional[str],
    continuous: bool,
    choices: Optional[list[float]],
    use_reasoning: bool,
    few_shot_examples: Optional[list[FewShotExample]],
    output_schema: Optional[OutputSchemaSpec],
    few_shot_placement: str,
    cache: Union[bool, ResultCache, None],
    calibration: Union[Correction, str, None] = None,
    verdict_field: Optional[str] = None,
    few_shot_shape: ExampleShape = SINGLE_EXAMPLE,
    self_reference: bool = False,
    checklist: bool = False,
    reads_replies: bool = False,
    screen: Optional[str] = None,
) -> JudgeCore:
    """The judge's core; ``verdict_field`` names the field a calibration corrects (default: our score's)."""
    _check_arguments(prompt, feedback_key, system, few_shot_examples, few_shot_placement)
    schema, choices = _verdict_schema(prompt, output_schema, continuous, choices, use_reasoning)
    verdict_field = verdict_field or ("score" if schema.is_default else None)
    _check_written_places(prompt, self_reference, checklist, has_metadata=verdict_field is not None)
    if few_shot_examples:
        _check_few_shot_examples(few_shot_examples, schema, verdict_field, few_shot_shape, continuous=continuous)
    core = JudgeCore(
        prompt=prompt,
        feedback_key=feedback_key,
        client=_client(judge, model, cache, schema),
        model=model if judge is not None else None,  # without a judge, model= is a spec, not a name to send
        system=system,
        few_shot_examples=few_shot_examples,
        few_shot_placement=few_shot_placement,
        schema=schema,
        choices=choices,
        continuous=continuous,
        use_reasoning=use_reasoning,
        verdict_field=verdict_field,
        few_shot_shape=few_shot_shape,
        self_reference=SelfReference() if self_reference else None,
        checklist=Checklist() if checklist else None,
        reads_replies=reads_replies,
        screen=WATCH if screen is None else find_screen(screen),
    )
    core.use_calibration(_correction(core, calibration))
    return core


def _check_arguments(
    prompt: Optional[Prompt],
    feedback_key: str,
    system: Optional[str],
    few_shot_examples: Optional[Sequence[FewShotExample]],
    few_shot_placement: str,
) -> None:
    """What a judge's arguments must be on their own, refused before anything is built."""
    if prompt is None:
        raise UsageError("prompt is required: a template string, a callable returning messages or a LangChain prompt")
    if not isinstance(feedback_key, str) or not feedback_key:
        raise UsageError(f"feedback_key must be a non-empty string, got {feedback_key!r}")
    if system is not None and not isinstance(prompt, str):
        raise UsageError(
            "system= only works with a string prompt; with a callable or LangChain prompt, "
            "put the system message in the messages it returns"
        )
    if few_shot_examples is not None and not isinstance(few_shot_examples, (list, tuple)):
        raise UsageError(f"few_shot_examples must be a list of examples, got {type(few_shot_examples).__name__}")
    if few_shot_placement not in FEW_SHOT_PLACEMENTS:
        raise UsageError(f"few_shot_placement must be one of {FEW_SHOT_PLACEMENTS}, got {few_shot_placement!r}")


def _verdict_schema(
    prompt: Prompt,
    output_schema: Optional[OutputSchemaSpec],
    continuous: bool,
    choices: Optional[list[float]],
    use_reasoning: bool,
) -> tuple[OutputSchema, Optional[list[float]]]:
    """The answer's schema (the caller's, a LangChain prompt's own, or our score's) and the choices it allows."""
    if output_schema is None:
        output_schema = _schema_from_prompt(prompt)
    if output_schema is not None:
        return normalise_output_schema(output_schema), choices
    json_schema, _ = default_output_schema(continuous=continuous, choices=choices, use_reasoning=use_reasoning)
    return OutputSchema(json_schema, "score", True), json_schema["properties"]["score"].get("enum")


def _check_written_places(prompt: Prompt, self_reference: bool, checklist: bool, *, has_metadata: bool) -> None:
    """What the judge writes first (its own answer, its checks) needs a place in the prompt and in the result."""
    if self_reference:
        _check_has_place(
            prompt,
            "reference_outputs",
            option="{self_reference:self_reference=True}",
            what="the judge's own answer",
            add="add it (for one output, localjudge.evaluators.SAME_ANSWER_PROMPT is made for it)",
            has_metadata=has_metadata,
        )
    if checklist:
        _check_has_place(
            prompt,
            CHECKS_FIELD,
            option="{checklist:checklist=True}",
            what="the judge's checks",
            add="give a prompt with a section for them, such as <checks>\n{checks}\n</checks>, or judge without them",
            has_metadata=has_metadata,
        )


def _client(
    judge: Optional[JudgeClient], model: Optional[str], cache: Union[bool, ResultCache, None], schema: OutputSchema
) -> AnyModelClient:
    """The client that answers: the judge given (or the model named) behind the result cache, if asked for one."""
    client: AnyModelClient = _resolve_client(judge, model)
    if cache is not None and cache is not False:  # a ResultCache is falsy while empty
        from ..clients.cached import CachedClient
        from ..clients.result_cache import ResultCache

        client = CachedClient(client, cache if isinstance(cache, ResultCache) else ResultCache())
    if offers(client, SupportsCheckSchema):  # refuse a schema keyword this client cannot enforce, now rather than later
        client.check_schema(schema.json_schema)
    return client


#: ``calibration=`` naming the fit kept for this judge: the user's own (``localjudge calibrate``), else the one shipped
STORED = "stored"


def _correction(core: JudgeCore, calibration: Union[Correction, str, None]) -> Optional[Correction]:
    if not isinstance(calibration, str):
        return calibration
    if calibration != STORED:
        raise UsageError(
            f"calibration must be a Correction (localjudge.read_calibration(path).correction) or {STORED!r}, "
            f"got {calibration!r}"
        )
    from ..trust.fit import stored_correction

    correction, _ = stored_correction(core)
    return correction


def _check_has_place(prompt: Prompt, field: str, *, option: str, what: str, add: str, has_metadata: bool) -> None:
    """What the judge writes first goes into the prompt's ``field`` and into the result: both must have a place for it.

    ``option`` names the option (``{self_reference:self_reference=True}``), ``add`` says how to give the prompt the field.
    """
    named = Message(option)
    if isinstance(prompt, str) and field not in template_fields(prompt):
        raise UsageError(
            Message(
                "{option} shows {what} as {{{field}}}, and this prompt has no {{{field}}}: {add}",
                option=named,
                what=what,
                field=field,
                add=add,
            )
        )
    if not has_metadata:
        raise UsageError(
            Message(
                "{option} keeps {what} in the result's metadata, and a custom {output_schema:output_schema} "
                "gives a result without one",
                option=named,
                what=what,
            )
        )


def _check_few_shot_examples(
    examples: Sequence[Mapping[str, Any]],
    schema: OutputSchema,
    verdict_field: Optional[str],
    shape: ExampleShape,
    *,
    continuous: bool,
) -> None:
    """Examples that cannot be shown fail when the evaluator is built; odd verdicts are a warning.

    OpenEvals writes examples into the prompt without checking them (its own
    tests give a boolean judge scores of 0.0 and 1.0), so an example verdict
    this judge could never give is allowed, with a warning that says so.
    """
    format_few_shot_examples(examples, shape=shape)  # raises on a missing field
    if verdict_field is None:
        return
    verdict_schema = schema.json_schema["properties"][verdict_field]
    for number, example in enumerate(examples):
        if shape.verdict not in example:  # OpenEvals shows an example without its verdict as it is
            continue
        verdict = example[shape.verdict]
        problem = validate(verdict, verdict_schema)
        if not problem and continuous and not 0 <= verdict <= 1:
            problem = f"{verdict!r} is outside 0 to 1, the range the score's description states"
        if problem:
            warn_caller(
                f"few_shot_examples[{number}] has {shape.verdict} {example[shape.verdict]!r}, which this judge "
                f"could never give ({problem.removeprefix('at (root): ')}); it is shown to the model as it is"
            )


def _schema_from_prompt(prompt: Prompt) -> Any:
    """A LangChain StructuredPrompt carries its own output schema."""
    return getattr(prompt, "schema_", None) if not isinstance(prompt, str) else None


def _resolve_client(judge: Optional[JudgeClient], model: Optional[str]) -> Any:
    if judge is None:
        from ..clients.resolve import default_model_spec, resolve_model
        from ..specs.options import LIBRARY_PARALLEL
        from ..specs.parse import parse_spec

        spec = model or default_model_spec()
        # calls gathered by the caller decode side by side, as `batch -j` rows do
        batching: dict[str, Any] = {"parallel": LIBRARY_PARALLEL} if parse_spec(spec).runs_here else {}
        return resolve_model(spec, **batching)
    if _is_langchain_chat_model(judge):
        from ..clients.langchain import LangChainClient

        return LangChainClient(judge)
    chat = getattr(judge, "chat", None)
    if not callable(getattr(getattr(chat, "completions", None), "create", None)):
        raise UsageError(
            f"judge must have chat.completions.create(...) (an OpenAI-style client) or be a LangChain "
            f"chat model; got {type(judge).__name__}"
        )
    from ..clients.adapter import adapt_response_format

    return adapt_response_format(cast("AnyModelClient", judge))  # it has chat.completions.create, checked above


def _is_langchain_chat_model(judge: Optional[JudgeClient]) -> bool:
    return any(cls.__name__ == "BaseChatModel" for cls in type(judge).__mro__)
