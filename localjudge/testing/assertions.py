"""Judged assertions for test suites: ``assert_judged(result, at_least=..., equals=...)``.

A failed assertion shows what a person needs to decide whether the judge or
the code under test is wrong: the score, the judge's reasoning and what it
was shown. Every assertion is recorded, so the pytest plugin can sum them
up at the end of the session.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from .._text import clip
from ..errors import UsageError

__all__ = ["JudgedResult", "Judgement", "assert_judged", "judgements"]


class JudgedResult(dict):
    """An evaluator's result that also remembers what the judge was shown (``judged``)."""

    judged: dict[str, Any]


@dataclass(frozen=True)
class Judgement:
    """One judged assertion: where, the score, what it had to be, and whether it held."""

    test: str
    key: str
    score: Any
    expected: str
    passed: bool


_lock = threading.Lock()
_records: list[list[Judgement]] = []  # one list per pytest session (innermost last); none outside pytest


def judgements() -> list[Judgement]:
    """The judged assertions made so far in this pytest session (none are kept outside one)."""
    with _lock:
        return list(_records[-1]) if _records else []


def start_recording() -> None:
    with _lock:
        _records.append([])


def stop_recording() -> list[Judgement]:
    with _lock:
        return _records.pop() if _records else []


def assert_judged(result: Any, *, at_least: Optional[float] = None, equals: Any = None) -> None:
    """Fail unless the verdict is what it must be: ``equals`` exactly, or at least ``at_least``.

    With neither, a true/false verdict must be true. A pair's score (1.0 A,
    0.0 B, 0.5 tie) is a number like any other.
    """
    if at_least is not None and equals is not None:
        raise UsageError("assert_judged takes at_least or equals, not both")
    if not isinstance(result, Mapping) or "score" not in result:
        raise AssertionError(f"not an evaluator's result (a dict with a score): {clip(result)}")
    score = result["score"]
    if equals is not None:
        expected, passed = f"== {equals!r}", score == equals and isinstance(score, bool) == isinstance(equals, bool)
    elif at_least is not None:
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise UsageError(f"at_least compares numbers; this verdict is {score!r}: use equals=")
        expected, passed = f">= {at_least!r}", score >= at_least
    elif isinstance(score, bool):
        expected, passed = "== True", score is True
    else:
        raise UsageError(f"the verdict {score!r} is a number: say what it must be with at_least= or equals=")
    with _lock:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        if _records:
            _records[-1].append(Judgement(test, str(result.get("key")), score, expected, passed))
    if not passed:
        raise AssertionError(_explain(result, expected))


def _explain(result: Mapping[str, Any], expected: str) -> str:
    lines = [f"the judge scored {result.get('key')!r} {result['score']!r}, which is not {expected}"]
    if result.get("comment"):
        lines.append(f"its reasoning: {clip(result['comment'])}")
    for name, value in (getattr(result, "judged", None) or {}).items():
        if value is not None:
            lines.append(f"{name}: {clip(value)}")
    return "\n".join(lines)
