"""Does a result's comment state the opposite of its verdict? Read from the words a judge closes with.

A judge that writes its reasoning before its verdict can argue for one
verdict and give the other, and a reader trusts the words. This reads the
verdict a comment states outright, and nothing more: the closing sentence
OpenEvals asks for ("Thus, the score should be: true."), or, for a verdict
of true or false, a last sentence that calls the answer correct or wrong.
A comment that states no verdict contradicts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional, Union

__all__ = ["contradicts", "stated_verdict"]

Verdict = Union[bool, float]

_SCORE_SHOULD_BE = re.compile(
    r"score\s+(?:should|would|must|will)\s+be\s*:?\s*[*\"'`]*\s*(true|false|yes|no|-?\d+(?:\.\d+)?)\b",
    re.IGNORECASE,
)
_CALLED = re.compile(
    r"\b(?:answer|response|output)\b[^.!?\n]*?\b(?:is|was)\s+(not\s+)?(correct|right|incorrect|wrong)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"[^.!?\n]+[.!?]*")
_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def stated_verdict(comment: str, *, boolean: bool) -> Optional[Verdict]:
    """The verdict ``comment`` states outright, or None where it states none.

    The last "score should be: X" wins; without one, for a ``boolean``
    verdict, the last sentence that calls the answer correct or wrong.
    """
    lowered = comment.casefold()  # the words each pattern needs, looked for first: most comments have neither
    closings = _SCORE_SHOULD_BE.findall(comment) if "score" in lowered else []
    if closings:
        said = closings[-1].lower()
        if said in _WORDS:
            return _WORDS[said] if boolean else float(_WORDS[said])
        number = float(said)
        return bool(number) if boolean and number in (0.0, 1.0) else number
    if not boolean or not ("correct" in lowered or "right" in lowered or "wrong" in lowered):
        return None
    sentences = [s for s in _SENTENCES.findall(comment) if s.strip()]
    if not sentences:
        return None
    called = _CALLED.findall(sentences[-1])
    if not called:
        return None
    negated, word = called[-1]
    positive = word.lower() in ("correct", "right")
    return positive != bool(negated)


def contradicts(result: Mapping[str, Any]) -> bool:
    """Whether a result's comment states a verdict other than its score (false where it states none)."""
    comment, score = result.get("comment"), result.get("score")
    if not isinstance(comment, str) or not comment.strip():
        return False
    if isinstance(score, bool):
        stated = stated_verdict(comment, boolean=True)
        return stated is not None and stated != score
    if isinstance(score, (int, float)):
        stated = stated_verdict(comment, boolean=False)
        return stated is not None and abs(float(stated) - float(score)) > 1e-9
    return False
