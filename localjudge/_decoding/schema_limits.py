"""How large a schema the decoder agrees to build, decided before anything is built.

outlines-core builds its token index one automaton state at a time, walking
the whole vocabulary at each state. So time grows with states x vocabulary,
and memory with the states that admit free text (each admits nearly every
token). A schema sets the number of states: ``maxLength: 10000000`` asks for
tens of millions of them, and the builder eats memory until the process is
killed. Every schema is therefore measured here first, from its own numbers
and from the regex it compiles to, and refused past a limit with an error
that names the keyword, the path and the limit.

Measured on this machine (2 cores; Gemma's 262k-token vocabulary, the largest
we ship), building one index:

- a lone string of ``maxLength`` 16: 147 states, 8 s, +200 MB; of 20: over
  90 s and 3.8 GB before we stopped it; of 32: 8 minutes and 13 GB, then
  outlines-core gave up;
- the same string of 32 as an object's property: 297 states, 4.7 s, +87 MB;
  two of them: 592 states, 7.3 s;
- a ``const`` of 800 characters: 803 states, 9 s, no memory to speak of;
- the six default score schemas: 15 to 52 estimated states, 0.2 s.

So size is not plain from a schema, and the limits work in two steps. The
counts here refuse, in milliseconds, whatever is plainly too large; a regex
that passes them but is not plainly small is built in a child process bounded
in memory and time (:mod:`.index_build`), so a surprise costs at most
``index_seconds``, never this process.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SchemaTooLargeError

__all__ = ["SCHEMA_LIMITS", "SchemaLimits", "estimated_states"]


@dataclass(frozen=True)
class SchemaLimits:
    """The largest schema the decoder builds; each field is checked before any memory is spent."""

    depth: int = 16  # nested objects, arrays and combinators
    properties: int = 64  # per object
    enum_values: int = 256  # per enum
    branches: int = 32  # per anyOf
    length_bound: int = 16  # minLength / maxLength: each character is ~9 states that admit free text
    items_bound: int = 32  # minItems / maxItems: each item repeats the item's states
    regex_chars: int = 200_000  # the compiled regex, checked at every level
    states: int = 3_000  # the automaton's estimated states (see :func:`estimated_states`)
    # A regex estimated above this many states is built in a child process (:mod:`.index_build`), bounded
    # by the two limits below; the default score schemas are 15 to 52 and build here in 0.2 s.
    in_process_states: int = 120
    index_seconds: float = 30.0
    index_memory_bytes: int = 2 << 30

    def check(self, name: str, value: int, *, path: str, keyword: str, why: str) -> None:
        limit = getattr(self, name)
        if value > limit:
            raise SchemaTooLargeError(
                f"Schema keyword {keyword!r} asks for {value:,} ({why}); local constrained decoding "
                f"allows at most {limit:,}, since the token index grows with it. Lower it, or leave it out "
                f"and describe it in the prompt (answers are held by max_tokens anyway)",
                path=path,
                keyword=keyword,
                limit=limit,
                value=value,
            )


SCHEMA_LIMITS = SchemaLimits()

# A negated character class (any character of a JSON string) is a small UTF-8
# automaton of its own: measured 147 states for 16 characters, so ~9 each.
_TEXT_CHARACTER_STATES = 9


def estimated_states(regex: str) -> int:
    """An upper estimate of the automaton states of ``regex``, written in our own dialect (one linear scan).

    Counted repetitions are what make a short regex large: ``X{0,99}`` is 99
    copies of ``X``. Alternatives add up; ``*``, ``+`` and ``?`` cost nothing
    more. Only the constructs :mod:`.schema_regex` writes are understood.
    """
    sums = [0]  # the states of each open group so far
    last = 0  # the states of the atom or group a quantifier would repeat
    i, n = 0, len(regex)
    while i < n:
        char = regex[i]
        if char == "(":
            sums.append(0)
            i += 1
            continue
        if char == ")":
            last = sums.pop()
            sums[-1] += last
            i += 1
            continue
        if char == "|":
            i += 1
            continue
        if char in "*+?":
            i += 1
            continue
        if char == "{":
            close = regex.index("}", i)
            low, comma, high = regex[i + 1 : close].partition(",")
            copies = int(high) if high else int(low or 0) + (1 if comma else 0)  # {a,} is a copies and a loop
            sums[-1] += last * (max(copies, 1) - 1)
            i = close + 1
            continue
        if char == "\\":
            width = 4 if regex[i + 1] == "x" else 2
            last = 1
            i += width
        elif char == "[":
            close = i + 1
            while regex[close] != "]":
                close += 2 if regex[close] == "\\" else 1
            last = _TEXT_CHARACTER_STATES if regex[i + 1] == "^" else 1
            i = close + 1
        else:
            last = len(char.encode("utf-8"))
            i += 1
        sums[-1] += last
    return sums[0]
