"""A judge's core made from the factories' arguments: each checked, and refused with what to do, before any call.

The prompt and the places it has for what the judge writes first, the
verdict's schema, the few-shot examples, the client a model name or judge
resolves to, and a calibration by name or value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union, cast

from .._caller_warnings import warn_caller
from .._prompts.parsing import validate
from .._prompts.prompting import (
    FEW_SHOT_PLACEMENTS,
    SINGLE_EXAMPLE,
    ExampleShape,
    format_few_shot_examples,
    template_fields,
)
from .._prompts.schema import OutputSchema, default_output_schema, normalise_output_schema
from .._wording import Message
from ..errors import UsageError
from ..types import AnyModelClient, FewShotExample, JudgeClient, OutputSchemaSpec, Prompt, SupportsCheckSchema, offers
from .checklist import CHECKS_FIELD, Checklist
from .core import JudgeCore
from .screen import WATCH, find_screen
from .self_reference import SelfReference

if TYPE_CHECKING:
    from .._clients.result_cache import ResultCache
    from .._trust.correction import Correction

__all__ = ["STORED", "build_core"]


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
        from .._clients.cached import CachedClient
        from .._clients.result_cache import ResultCache

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
    from .._trust.fit import stored_correction

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
        from .._clients.resolve import default_model_spec, resolve_model
        from .._specs.options import LIBRARY_PARALLEL
        from .._specs.parse import parse_spec

        spec = model or default_model_spec()
        # calls gathered by the caller decode side by side, as `batch -j` rows do
        batching: dict[str, Any] = {"parallel": LIBRARY_PARALLEL} if parse_spec(spec).runs_here else {}
        return resolve_model(spec, **batching)
    if _is_langchain_chat_model(judge):
        from .._clients.langchain import LangChainClient

        return LangChainClient(judge)
    chat = getattr(judge, "chat", None)
    if not callable(getattr(getattr(chat, "completions", None), "create", None)):
        raise UsageError(
            f"judge must have chat.completions.create(...) (an OpenAI-style client) or be a LangChain "
            f"chat model; got {type(judge).__name__}"
        )
    from .._clients.adapter import adapt_response_format

    return adapt_response_format(cast("AnyModelClient", judge))  # it has chat.completions.create, checked above


def _is_langchain_chat_model(judge: Optional[JudgeClient]) -> bool:
    return any(cls.__name__ == "BaseChatModel" for cls in type(judge).__mro__)
