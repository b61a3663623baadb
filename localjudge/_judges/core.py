"""The judge's core, shared by every evaluator: build a request from a row, read a score from the answer.

:class:`JudgeCore` holds the prompt, the score's schema and the client;
:func:`.building.build_core` checks the factories' arguments and makes one. A
judgement is a plan (:meth:`JudgeCore.plan`): a generator that yields the
requests to send together and is sent their responses (:mod:`.plan`), so
that sync and async judging share it. The evaluator objects in
:mod:`.single` and :mod:`.pairwise` only drive plans.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from .._clients.base import plain_data
from .._clients.completion import read_completion
from .._clients.fallback import FALLBACK_FIELD
from .._prompts.parsing import parse_json_output
from .._prompts.prompting import (
    SINGLE_EXAMPLE,
    ExampleShape,
    build_messages,
)
from .._prompts.schema import OutputSchema
from .._wording import Message
from ..errors import JudgeRuntimeError, OutputParseError, UsageError
from ..types import (
    JudgeRequest,
    Prompt,
)
from .checklist import CHECKS_FIELD, Checklist, given_checks, refuse_hidden_checks
from .plan import Step
from .screen import WATCH, Screen, mark, without_asking
from .self_reference import SelfReference, own_answer_comment
from .written import Writer, with_written, write_first

if TYPE_CHECKING:
    from .._trust.correction import Correction

__all__ = [
    "READOUT_FIELD",
    "RESPONSE_METADATA_FIELD",
    "JudgeCore",
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
    ) -> JudgeRequest:
        values = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs, **kwargs}
        messages = build_messages(
            self.prompt,
            values=values,
            system=self.system,
            few_shot_examples=self.few_shot_examples,
            few_shot_placement=self.few_shot_placement,
            few_shot_shape=self.few_shot_shape,
        )
        request: JudgeRequest = {"messages": messages}
        if self.model is not None:
            request["model"] = self.model
        request["response_format"] = self.schema.response_format()
        return request

    def read_parsed(self, response: object) -> Any:
        """The answer, parsed and checked against the schema (an error with the raw text otherwise)."""
        completion = read_completion(response, backend=self.backend)
        return parse_json_output(
            completion.text,
            self.schema.json_schema,
            finish_reason=completion.finish_reason,
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
            raise OutputParseError(
                f"The judge's score {parsed['score']!r} is outside 0 to 1, the range its schema states",
                raw_output=read_completion(response).text
                or "",  # it parsed, so it is text already: the "" is never used
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
        from .._trust.correction import verdict_classes  # numpy, only for calibration

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
            from .._trust.correction import value_key

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
    completion = read_completion(response)
    if completion.answered_by is not None:
        metadata.update(completion.answered_by)
    readout = completion.readout or {}
    score_readout = readout.get(score_field)
    if isinstance(score_readout, Mapping):
        metadata.update(score_readout)
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
    from .._trust.correction import correct, value_key

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
