"""The default score schema and the normalisation of user-supplied output schemas."""

from __future__ import annotations

import copy
import re
import sys
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional, Protocol, TypeVar, Union, cast

from .. import _bounded_json as bounded_json
from ..errors import SchemaTooLargeError, UsageError

__all__ = ["OutputSchema", "decoding_order", "default_output_schema", "normalise_output_schema", "stated_bounds"]

_Schema = TypeVar("_Schema")

#: the verdict fields of our score and pair schemas, which a local judge decodes before the reasoning
VERDICT_FIELDS = ("score", "winner")

# These strings are part of the OpenEvals interface: models and users see them verbatim.
REASONING_DESCRIPTION = (
    "A human-readable explanation of the score. You MUST end the reasoning with a sentence "
    "that says: Thus, the score should be: SCORE_YOU_ASSIGN."
)
BOOLEAN_DESCRIPTION = "A score that is true if criteria in the prompt are met, and false otherwise."
NUMBER_DESCRIPTION = "A number that represents the degree to which the criteria in the prompt are met."
CONTINUOUS_DESCRIPTION = (
    "A number that represents the degree to which the criteria in the prompt are met, from 0.0 to 1.0. "
    "1.0 means the criteria are met perfectly. 0.0 means none of the criteria are met, 0.5 means exactly "
    "half of the criteria are met."
)


def stated_bounds(field: Mapping[str, object]) -> tuple[object, object]:
    """A number field's ``(minimum, maximum)``, each None when not given, read as the decoder reads them.

    OpenEvals' continuous score states its range in words only ("from 0.0 to
    1.0", no ``minimum`` or ``maximum``), and a small model takes the missing
    bound at its word (200000000000000.0 was seen): a field described by that
    text is held to [0, 1]. The schema a remote judge is sent stays OpenEvals'.
    """
    low, high = field.get("minimum"), field.get("maximum")
    if low is None and high is None and field.get("description") == CONTINUOUS_DESCRIPTION:
        return 0, 1
    return low, high


def decoding_order(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema in the order a local judge decodes it: a verdict before the reasoning that explains it.

    OpenEvals' score schema (and our pair schema) asks for the reasoning first.
    A small local judge that reasons first argues itself into verdicts (it
    wrote "The answer '5' is correct because 2 + 2 equals 5") and is less
    often right than one that gives the verdict first (docs/measurements.md,
    "Ways of judging"). Decoded verdict first, the reasoning explains
    the verdict given. The request is unchanged, and so is any schema other
    than exactly ``reasoning`` then a verdict field.
    """
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or list(properties)[:1] != ["reasoning"] or len(properties) != 2:
        return schema
    (verdict,) = [name for name in properties if name != "reasoning"]
    if verdict not in VERDICT_FIELDS:
        return schema
    reordered = {verdict: properties[verdict], "reasoning": properties["reasoning"]}
    required = schema.get("required")
    if isinstance(required, list) and set(required) == set(properties):
        required = [verdict, "reasoning"]
    return {**schema, "properties": reordered, **({"required": required} if "required" in schema else {})}


def default_output_schema(
    *,
    continuous: bool = False,
    choices: Optional[list[float]] = None,
    use_reasoning: bool = True,
) -> tuple[dict[str, Any], str]:
    """The score schema for the judge's answer and the description of its score.

    ``reasoning`` comes before ``score`` so a model that writes left to right
    reasons before it commits to a score.
    """
    if choices is not None:
        choices = _check_choices(choices)
        description = NUMBER_DESCRIPTION
        score: dict[str, Any] = {"type": "number", "description": description, "enum": choices}
    elif continuous:
        description = CONTINUOUS_DESCRIPTION
        # OpenEvals' schema exactly, as a remote judge gets it; our decoder reads the range from the words
        score = {"type": "number", "description": description}
    else:
        description = BOOLEAN_DESCRIPTION
        score = {"type": "boolean", "description": description}

    properties: dict[str, Any] = {}
    if use_reasoning:
        properties["reasoning"] = {"type": "string", "description": REASONING_DESCRIPTION}
    properties["score"] = score
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "required": list(properties),
    }
    return schema, description


def _check_choices(choices: object) -> list[float]:
    if isinstance(choices, (str, bytes)) or not isinstance(choices, Iterable):
        raise UsageError(f"choices must be a list of numbers, got {choices!r}")
    values: list[object] = list(choices)
    if not values:
        raise UsageError("choices must hold at least one number, got an empty list")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError(f"choices must be numbers, got {value!r} in {values!r}")
    if len(set(values)) != len(values):
        raise UsageError(f"choices must not repeat a value: {values!r}")
    return cast("list[float]", values)  # each one checked above


@dataclass(frozen=True)
class OutputSchema:
    """A schema the judge asks for: its JSON schema, request name and how to validate."""

    json_schema: dict[str, Any]
    name: str
    is_default: bool
    model_type: Optional[type] = None  # a Pydantic model or TypedDict to validate with, when one was given

    def instance(self, parsed: dict[str, Any]) -> Any:
        """The answer as the caller's type: an instance of a Pydantic model (as OpenEvals gives), else the dict."""
        build = getattr(self.model_type, "model_validate", None)
        return build(parsed) if callable(build) else parsed

    def response_format(self) -> dict[str, Any]:
        return {
            "type": "json_schema",
            "json_schema": {"name": self.name, "strict": True, "schema": self.json_schema},
        }


def normalise_output_schema(output_schema: Union[Mapping[str, object], type]) -> OutputSchema:
    """Accept a JSON-schema dict, a Pydantic model class or a TypedDict class."""
    if isinstance(output_schema, Mapping):
        levels = bounded_json.depth(dict(output_schema))
        if levels > bounded_json.MAX_DEPTH:  # before deepcopy recurses into it
            raise SchemaTooLargeError(
                f"output_schema nests {levels} levels deep; at most {bounded_json.MAX_DEPTH} are accepted",
                path="#",
                keyword="properties",
                limit=bounded_json.MAX_DEPTH,
                value=levels,
            )
        schema = copy.deepcopy(dict(output_schema))
        if schema.get("type", "object") != "object" and "properties" not in schema:
            raise UsageError(
                f'output_schema must describe a JSON object ("type": "object"), got type {schema.get("type")!r}'
            )
        named = isinstance(schema.get("properties"), Mapping) and schema["properties"]
        if not named and not schema.get("additionalProperties"):  # strict: only what it names may be written
            raise UsageError(
                "output_schema names no properties, so the judge's answer could hold no verdict; "
                'give the fields it must write, e.g. {"properties": {"score": {"type": "boolean"}}, "required": ["score"]}'
            )
        return OutputSchema(_strict_objects(schema), _schema_name(schema.get("title")), False)
    if isinstance(output_schema, type):
        model_type = _pydantic_typeddict(output_schema) if _is_typeddict(output_schema) else output_schema
        return OutputSchema(
            _strict_objects(_type_json_schema(output_schema)), _schema_name(output_schema.__name__), False, model_type
        )
    raise UsageError(
        "output_schema must be a JSON-schema dict, a Pydantic model class or a TypedDict class, "
        f"got {type(output_schema).__name__}"
    )


def _type_json_schema(cls: type) -> dict[str, Any]:
    try:
        import pydantic
    except ImportError as exc:  # pragma: no cover - pydantic is a core dependency
        raise UsageError("Pydantic and TypedDict output schemas need pydantic installed") from exc
    try:
        if isinstance(cls, type) and issubclass(cls, pydantic.BaseModel):
            return cls.model_json_schema()
        if _is_typeddict(cls):
            return pydantic.TypeAdapter(_pydantic_typeddict(cls)).json_schema()
    except pydantic.PydanticUserError as exc:
        raise UsageError(f"Could not build a JSON schema from {cls.__name__}: {exc}") from exc
    raise UsageError(f"output_schema class {cls.__name__} is neither a Pydantic model nor a TypedDict")


def _is_typeddict(cls: type) -> bool:
    return (
        isinstance(cls, type)
        and issubclass(cls, dict)
        and hasattr(cls, "__annotations__")
        and hasattr(cls, "__total__")
    )


class _TypedDictClass(Protocol):
    __required_keys__: frozenset[str]


def _pydantic_typeddict(cls: type) -> type:
    """``typing.TypedDict`` as pydantic accepts it: before Python 3.12 pydantic refuses
    the ``typing`` one (only ``typing_extensions.TypedDict`` works), yet that is what
    OpenEvals users write. Rebuild it as a ``typing_extensions`` TypedDict, same keys."""
    if sys.version_info >= (3, 12) or type(cls).__module__ != "typing":
        return cls
    import typing_extensions as te

    # Only TypedDict classes come here (the callers checked), and every one carries its required keys.
    required_keys = cast(_TypedDictClass, cls).__required_keys__
    fields = {}
    for name, hint in typing.get_type_hints(cls, include_extras=True).items():
        if typing.get_origin(hint) in (te.Required, te.NotRequired):
            fields[name] = hint  # explicit marks win (string annotations hide them from __required_keys__)
        else:
            fields[name] = te.Required[hint] if name in required_keys else te.NotRequired[hint]
    rebuilt = te.TypedDict(cls.__name__, fields)  # type: ignore[misc]  # built at run time: mypy wants a literal name
    rebuilt.__module__ = cls.__module__
    return rebuilt


def _strict_objects(schema: _Schema) -> _Schema:
    """Close every object schema that lists its properties, unless it says otherwise.

    A bare ``{"type": "object"}`` stays open: closing it would allow only ``{}``.
    """
    if isinstance(schema, dict):
        if isinstance(schema.get("properties"), dict) and schema.get("type", "object") == "object":
            schema.setdefault("additionalProperties", False)
        for value in schema.values():
            _strict_objects(value)
    elif isinstance(schema, list):
        for value in schema:
            _strict_objects(value)
    return schema


def _schema_name(title: object) -> str:
    name = re.sub(r"[^a-zA-Z0-9_-]+", "_", str(title or "")).strip("_")[:64]
    return name or "output"
