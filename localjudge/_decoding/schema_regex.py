"""JSON schema -> regular expression for constrained decoding.

We compile a schema ourselves instead of handing it to a generic converter so
that every keyword is either enforced or refused: ``check_schema`` walks the
schema and raises :class:`UnsupportedSchemaError` naming the path and the
keyword, and ``schema_to_regex`` only ever sees schemas that passed.

The output is compact JSON (no whitespace at all), because small models pad
with spaces and newlines until ``max_tokens`` when the grammar lets them.
Properties come in the schema's order. Numbers are plain decimals with at
most :data:`MAX_FRACTION_DIGITS` fraction digits and :data:`MAX_INT_DIGITS`
integer digits, so a rambling model cannot grow one number forever. Strings
are unbounded unless the schema says otherwise; their length is held by a
token budget at decode time (see :mod:`localjudge._decoding.guide`), since a
``maxLength`` in the regex makes the token index slow and large.

A number's bounds are read by :func:`localjudge._prompts.schema.stated_bounds`, so
OpenEvals' continuous score, whose range is in its description only, is
decoded within [0, 1]; the answer stays valid under the schema as sent.

The regex dialect is the common subset understood by Python's ``re`` and by
outlines-core (Rust ``regex-automata``), so tests can check instances here
with ``re.fullmatch``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UnsupportedSchemaError
from .schema_limits import SCHEMA_LIMITS, SchemaLimits, estimated_states
from .value_regex import (
    BOOLEAN,
    MAX_FRACTION_DIGITS,
    MAX_INT_DIGITS,
    NULL,
    STRING,
    STRING_CHAR,
    alternatives,
    any_json_object,
    any_json_value,
    count,
    json_type,
    literal,
    number_regex,
    refusal,
    string_regex,
)

__all__ = [
    "ANY_JSON_OBJECT_SCHEMA",
    "MAX_FRACTION_DIGITS",
    "MAX_INT_DIGITS",
    "STRING_CHAR",
    "check_schema",
    "schema_to_regex",
]

ANY_JSON_OBJECT_SCHEMA: dict[str, Any] = {"type": "object"}

# Keywords that describe but do not constrain.
_ANNOTATIONS = {
    "title",
    "description",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
}
_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_KEYWORDS_BY_TYPE = {
    "object": {"properties", "required", "additionalProperties"},
    "array": {"items", "minItems", "maxItems", "uniqueItems"},
    "string": {"minLength", "maxLength"},
    "number": {"minimum", "maximum"},
    "integer": {"minimum", "maximum"},
    "boolean": set(),
    "null": set(),
}
_GENERIC = {"type", "enum", "const", "anyOf", "allOf", "$ref"}


def check_schema(schema: Mapping[str, Any], limits: SchemaLimits = SCHEMA_LIMITS) -> None:
    """Raise :class:`UnsupportedSchemaError` unless every keyword can be enforced within ``limits``.

    Cheap and model-free: call it when an evaluator is built so a bad schema
    fails there, not at the first evaluation.
    """
    schema_to_regex(schema, limits)


def schema_to_regex(schema: Mapping[str, Any], limits: SchemaLimits = SCHEMA_LIMITS) -> str:
    """The regex whose matches are exactly the compact JSON texts we let a model write.

    A schema past ``limits`` raises :class:`SchemaTooLargeError` as soon as a
    count or a partly built regex shows it, never after building the whole.
    """
    return _Compiler(schema, limits).compile(schema, "#")


# The keywords that make a schema large, in the order a refusal names them.
_SIZE_KEYWORDS = ("maxItems", "minItems", "maxLength", "minLength", "properties", "enum", "anyOf", "items")


class _Compiler:
    def __init__(self, root: Mapping[str, Any], limits: SchemaLimits) -> None:
        if not isinstance(root, Mapping):
            raise UnsupportedSchemaError(f"A JSON schema must be an object, got {type(root).__name__}", path="#")
        self.root = root
        self.limits = limits
        self.resolving: list[str] = []
        self.depth = 0

    def fail(self, message: str, path: str, keyword: str) -> UnsupportedSchemaError:
        return refusal(message, path, keyword)

    def compile(self, schema: object, path: str) -> str:
        """One subschema's regex, refused as soon as it is nested too deep or has grown too large."""
        self.depth += 1
        try:
            self.limits.check("depth", self.depth, path=path, keyword=_last_keyword(path), why="levels of nesting")
            regex = self.compile_unbounded(schema, path)
        finally:
            self.depth -= 1
        keyword = next((k for k in _SIZE_KEYWORDS if isinstance(schema, Mapping) and k in schema), "type")
        self.limits.check("regex_chars", len(regex), path=path, keyword=keyword, why="characters of grammar")
        self.limits.check("states", estimated_states(regex), path=path, keyword=keyword, why="grammar states")
        return regex

    def compile_unbounded(self, schema: object, path: str) -> str:
        if schema is True or schema == {}:
            return any_json_value()
        if schema is False:
            raise self.fail("a false schema admits no value", path, "false")
        if not isinstance(schema, Mapping):
            raise UnsupportedSchemaError(f"A schema must be an object or boolean, got {schema!r}", path=path)
        types = self.types_of(schema, path)
        for key in schema:
            if key in _ANNOTATIONS or key in _GENERIC:
                continue
            if not any(key in _KEYWORDS_BY_TYPE[t] for t in types):
                raise self.fail(self.unknown_reason(key, types), path, key)
        if "$ref" in schema:
            return self.ref(schema, path)
        if "allOf" in schema:
            return self.all_of(schema, path)
        if "anyOf" in schema:
            return self.any_of(schema, path)
        if "const" in schema or "enum" in schema:
            return self.enum(schema, types, path)
        return alternatives([self.typed(t, schema, path) for t in types])

    @staticmethod
    def unknown_reason(key: str, types: tuple[str, ...]) -> str:
        if key == "oneOf":
            return "'exactly one branch matches' is not checkable while decoding; use anyOf"
        if key == "pattern":
            return "JSON schema patterns match anywhere in the string and are not supported"
        if key == "format":
            return "string formats are not supported; describe the format in the prompt instead"
        return f"not supported for type {' | '.join(types)}"

    def types_of(self, schema: Mapping[str, Any], path: str) -> tuple[str, ...]:
        declared = schema.get("type")
        if declared is None:
            constraints = [k for k in schema if k not in _ANNOTATIONS and k not in _GENERIC]
            if not constraints:
                return _TYPES
            for kind in _TYPES:
                if all(k in _KEYWORDS_BY_TYPE[kind] for k in constraints):
                    return (kind,)
            key = next(
                (k for k in constraints if not any(k in ks for ks in _KEYWORDS_BY_TYPE.values())), constraints[0]
            )
            raise self.fail(self.unknown_reason(key, _TYPES), path, key)
        names = [declared] if isinstance(declared, str) else list(declared)
        for name in names:
            if name not in _TYPES:
                raise self.fail(f"unknown type {name!r}", path, "type")
        return tuple(names)

    # --- combinators -------------------------------------------------

    def ref(self, schema: Mapping[str, Any], path: str) -> str:
        extra = [k for k in schema if k not in _ANNOTATIONS and k != "$ref"]
        if extra:
            raise self.fail(f"$ref next to {extra} is not supported", path, extra[0])
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise self.fail(f"only local references are supported, got {ref!r}", path, "$ref")
        if ref in self.resolving:
            raise self.fail(f"recursive reference {ref!r}", path, "$ref")
        target: object = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise UnsupportedSchemaError(f"Reference {ref!r} points nowhere", path=path, keyword="$ref")
            target = target[part]
        self.resolving.append(ref)
        try:
            return self.compile(target, ref)
        finally:
            self.resolving.pop()

    def all_of(self, schema: Mapping[str, Any], path: str) -> str:
        branches = schema["allOf"]
        rest = [k for k in schema if k not in _ANNOTATIONS and k != "allOf"]
        if not isinstance(branches, list) or len(branches) != 1 or rest:
            raise self.fail("only a single-branch allOf (a wrapped $ref) is supported", path, "allOf")
        return self.compile(branches[0], f"{path}/allOf/0")

    def any_of(self, schema: Mapping[str, Any], path: str) -> str:
        branches = schema["anyOf"]
        rest = [k for k in schema if k not in _ANNOTATIONS and k != "anyOf"]
        if rest:
            raise self.fail(f"anyOf next to {rest} is not supported", path, rest[0])
        if not isinstance(branches, list) or not branches:
            raise UnsupportedSchemaError("anyOf must be a non-empty list", path=path, keyword="anyOf")
        self.limits.check("branches", len(branches), path=path, keyword="anyOf", why="branches")
        return alternatives([self.compile(b, f"{path}/anyOf/{i}") for i, b in enumerate(branches)])

    def enum(self, schema: Mapping[str, Any], types: tuple[str, ...], path: str) -> str:
        keyword = "const" if "const" in schema else "enum"
        values = [schema["const"]] if keyword == "const" else schema["enum"]
        if keyword == "const" and "enum" in schema:
            values = [v for v in schema["enum"] if v == schema["const"]]
        if not isinstance(values, list) or not values:
            raise UnsupportedSchemaError(f"{keyword} must list at least one value", path=path, keyword=keyword)
        self.limits.check("enum_values", len(values), path=path, keyword=keyword, why="values")
        parts = []
        for value in values:
            if json_type(value) not in types and not (json_type(value) == "integer" and "number" in types):
                continue
            try:
                parts.append(literal(value))
            except ValueError:
                raise self.fail(f"value {value!r} has no JSON form", path, keyword) from None
        for key in schema:
            if key not in _ANNOTATIONS and key not in ("type", "enum", "const"):
                raise self.fail(f"{key!r} next to {keyword} is not supported", path, key)
        if not parts:
            raise UnsupportedSchemaError(f"No {keyword} value has the declared type", path=path, keyword=keyword)
        return alternatives(parts)

    # --- types ---------------------------------------------------------

    def typed(self, kind: str, schema: Mapping[str, Any], path: str) -> str:
        if kind == "object":
            return self.object(schema, path)
        if kind == "array":
            return self.array(schema, path)
        if kind == "string":
            return string_regex(schema, path, self.limits)
        if kind in ("number", "integer"):
            return number_regex(schema, path, integer=kind == "integer")
        return BOOLEAN if kind == "boolean" else NULL

    def object(self, schema: Mapping[str, Any], path: str) -> str:
        props = schema.get("properties")
        extra = schema.get("additionalProperties", True)
        if not isinstance(extra, (bool, Mapping)):
            raise UnsupportedSchemaError("additionalProperties must be a boolean or a schema", path=path)
        if props is None:
            if schema.get("required"):
                raise self.fail("required keys without properties to describe them", path, "required")
            if extra is False:
                return r"\{\}"
            if extra is True:
                return any_json_object()
            member = f"{STRING}:{self.compile(extra, f'{path}/additionalProperties')}"
            return rf"\{{({member}(,{member})*)?\}}"
        if not isinstance(props, Mapping):
            raise UnsupportedSchemaError("properties must be an object", path=path, keyword="properties")
        self.limits.check("properties", len(props), path=path, keyword="properties", why="properties")
        required = list(schema.get("required", []))
        unknown = [name for name in required if name not in props]
        if unknown:
            raise self.fail(f"required {unknown} not in properties", path, "required")
        # additionalProperties (true, false or a schema) is honoured by never writing extra keys.
        members = [
            (f"{literal(name)}:{self.compile(sub, f'{path}/properties/{name}')}", name in required)
            for name, sub in props.items()
        ]
        if not members:
            return r"\{\}"

        def tail(start: int) -> str:
            return "".join(f",{m}" if req else f"(,{m})?" for m, req in members[start:])

        first_required = next((i for i, (_, req) in enumerate(members) if req), None)
        last_first = first_required if first_required is not None else len(members) - 1
        # Each optional leading member repeats the tail after it: check the size before writing it out.
        lengths = [len(m) + 3 for m, _ in members]
        size = sum(sum(lengths[i:]) for i in range(last_first + 1))
        self.limits.check("regex_chars", size, path=path, keyword="properties", why="characters of grammar")
        heads = [members[i][0] + tail(i + 1) for i in range(last_first + 1)]
        body = alternatives(heads)
        if first_required is None:
            body = f"({body})?"
        return rf"\{{{body}\}}"

    def array(self, schema: Mapping[str, Any], path: str) -> str:
        if schema.get("uniqueItems", False):
            raise self.fail("unique items cannot be checked while decoding", path, "uniqueItems")
        items = schema.get("items", True)
        if isinstance(items, list):
            raise self.fail("tuple-style items lists are not supported", path, "items")
        low = count(schema, "minItems", path, 0)
        high = count(schema, "maxItems", path, None)
        for keyword, bound in (("minItems", low), ("maxItems", high)):
            self.limits.check("items_bound", bound or 0, path=path, keyword=keyword, why="items")
        item = self.compile(items, f"{path}/items")
        if high is not None and high < low:
            raise UnsupportedSchemaError("maxItems < minItems admits nothing", path=path, keyword="maxItems")
        if high == 0:
            return r"\[\]"
        more_low = max(low - 1, 0)
        more_high = "" if high is None else str(high - 1)
        seq = f"{item}(,{item}){{{more_low},{more_high}}}"
        return rf"\[{seq}\]" if low > 0 else rf"\[({seq})?\]"


def _last_keyword(path: str) -> str:
    """The schema keyword that opened the innermost level of ``path`` (``#/properties/a/items`` -> ``items``)."""
    parts = path.split("/")
    for i in range(len(parts) - 1, 0, -1):
        if parts[i - 1] == "properties":
            return "properties"
        if parts[i] in ("items", "additionalProperties", "anyOf", "allOf"):
            return parts[i]
    return "$ref" if path.startswith("#/") and len(parts) > 1 else "type"
