"""Grammars of the six default score schemas, as the outlines regex and as llama.cpp GBNF.

The regex is what the decoder enforces; the GBNF is translated from that same
regex, so both describe exactly one language and ``grammars/`` can be checked
against the code that produced it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Optional, cast

if sys.version_info >= (3, 11):
    import re._constants as sre_constants
    import re._parser as sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_constants
    import sre_parse

from .._prompts.schema import decoding_order, default_output_schema

__all__ = [
    "DEFAULT_VARIANTS",
    "default_grammar",
    "grammar_file_names",
    "is_grammar_file",
    "regex_to_gbnf",
    "write_default_grammars",
]

#: file stem -> default_output_schema arguments; choices as in OpenEvals' own example
DEFAULT_VARIANTS: dict[str, dict[str, Any]] = {
    "boolean": {},
    "boolean-no-reasoning": {"use_reasoning": False},
    "continuous": {"continuous": True},
    "continuous-no-reasoning": {"continuous": True, "use_reasoning": False},
    "choices": {"choices": [0.0, 0.5, 1.0]},
    "choices-no-reasoning": {"choices": [0.0, 0.5, 1.0], "use_reasoning": False},
}


def default_grammar(
    *, continuous: bool = False, choices: Optional[list[float]] = None, use_reasoning: bool = True, fmt: str = "gbnf"
) -> str:
    from . import schema_to_regex

    schema, _ = default_output_schema(continuous=continuous, choices=choices, use_reasoning=use_reasoning)
    regex = schema_to_regex(dict(decoding_order(schema)))  # as a local judge decodes it: the verdict first
    return regex if fmt == "regex" else regex_to_gbnf(regex)


def grammar_files() -> Iterator[tuple[str, str]]:
    """(file name, text) for every default grammar, in a stable order."""
    for stem, arguments in DEFAULT_VARIANTS.items():
        for fmt in ("regex", "gbnf"):
            yield f"{stem}.{fmt}", default_grammar(fmt=fmt, **arguments) + "\n"


def grammar_file_names() -> list[str]:
    """The files :func:`write_default_grammars` writes into its folder."""
    return [*(f"{stem}.{fmt}" for stem in DEFAULT_VARIANTS for fmt in ("regex", "gbnf")), "schemas.json"]


def is_grammar_file(path: Path) -> bool:
    """Whether ``path`` holds what :func:`write_default_grammars` writes: a score's grammar, or the schemas' index."""
    text = Path(path).read_text(encoding="utf-8")
    if path.name == "schemas.json":
        document = json.loads(text)
        return isinstance(document, dict) and set(document) <= set(DEFAULT_VARIANTS)
    return text.startswith(('root ::= "{\\"score\\":', '\\{"score":')) and text.count("\n") <= 1


def write_default_grammars(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in grammar_files():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    index = {stem: default_output_schema(**args)[0] for stem, args in DEFAULT_VARIANTS.items()}
    schemas = directory / "schemas.json"
    schemas.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return [*written, schemas]


# --- regex -> GBNF -----------------------------------------------------------------------


def regex_to_gbnf(regex: str) -> str:
    """Translate a regular expression (the subset outlines emits) into a one-rule GBNF grammar."""
    return f"root ::= {_sequence(sre_parse.parse(regex).data)}"


# A parsed regex is a list of (opcode, argument) items, the argument's shape decided by the opcode;
# each branch below casts the argument to the shape its opcode gives it (see ``sre_parse``).
_Items = Iterable[tuple[int, object]]


def _char(code: int, in_class: bool) -> str:
    char = chr(code)
    specials = '\\"' if not in_class else "\\]-^["
    if char in specials:
        return "\\" + char
    if 0x20 <= code < 0x7F:
        return char
    return f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}"


def _sequence(items: _Items) -> str:
    parts: list[str] = []
    literal = ""
    for op, value in items:
        if op is sre_constants.LITERAL:
            literal += _char(cast(int, value), in_class=False)
            continue
        if literal:
            parts.append(f'"{literal}"')
            literal = ""
        parts.append(_item(op, value))
    if literal:
        parts.append(f'"{literal}"')
    return " ".join(parts) if parts else '""'


def _item(op: int, value: object) -> str:
    if op is sre_constants.NOT_LITERAL:
        return f"[^{_char(cast(int, value), in_class=True)}]"
    if op is sre_constants.IN:
        return _class(cast("list[tuple[int, object]]", value))
    if op is sre_constants.ANY:
        return "[^\\x0A]"
    if op is sre_constants.BRANCH:
        branches = cast("tuple[None, list[sre_parse.SubPattern]]", value)[1]
        return "(" + " | ".join(_sequence(branch.data) for branch in branches) + ")"
    if op is sre_constants.SUBPATTERN:
        inner = cast("tuple[object, ...]", value)[-1]
        items = cast("sre_parse.SubPattern", inner).data
        return _sequence(items) if len(items) == 1 and items[0][0] is sre_constants.BRANCH else f"({_sequence(items)})"
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
        return _repeat(*cast("tuple[int, int, sre_parse.SubPattern]", value))
    raise ValueError(f"regex construct {op} has no GBNF translation")


def _repeat(low: int, high: int, item: sre_parse.SubPattern) -> str:
    body = _sequence(item.data)
    if len(item.data) != 1:
        body = f"({body})"
    unbounded = high is sre_constants.MAXREPEAT
    if (low, unbounded) == (0, True):
        return body + "*"
    if (low, unbounded) == (1, True):
        return body + "+"
    if (low, high) == (0, 1):
        return body + "?"
    return body + (f"{{{low},}}" if unbounded else f"{{{low}}}" if low == high else f"{{{low},{high}}}")


_CATEGORIES: dict[object, str] = {
    sre_constants.CATEGORY_DIGIT: "0-9",
    sre_constants.CATEGORY_SPACE: " \\t\\n\\r\\x0B\\x0C",
}


def _class(items: _Items) -> str:
    negate = ""
    body = ""
    for op, value in items:
        if op is sre_constants.NEGATE:
            negate = "^"
        elif op is sre_constants.LITERAL:
            body += _char(cast(int, value), in_class=True)
        elif op is sre_constants.RANGE:
            low, high = cast("tuple[int, int]", value)
            body += f"{_char(low, True)}-{_char(high, True)}"
        elif op is sre_constants.CATEGORY and value in _CATEGORIES:
            body += _CATEGORIES[value]
        else:
            raise ValueError(f"character class item {op} {value} has no GBNF translation")
    return f"[{negate}{body}]"
