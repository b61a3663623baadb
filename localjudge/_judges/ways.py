"""Ways of judging as values: how a judge is asked, named, checked, and chosen per question by measurement.

A :class:`Way` says what the judge writes before its verdict (its own
answer, its checks), how a pair is asked (both orders side by side, each
answer alone, or by likelihood), what a pair whose orders disagree becomes,
and whether the verdict's probabilities are calibrated. It checks its own
parts when it is made, so a combination that cannot work is refused in one
place, and it names itself (:attr:`Way.label`) for results and reports.

:data:`WAYS` holds the named ways (``--way NAME``); :func:`default_way`
gives, for each kind of question (:class:`Question`), the way measured
best for it on held-out labelled rows: the command line and the
ready-made evaluators use it when no way is named.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Optional

from ..errors import OptionError
from .plan import Step

__all__ = [
    "ASKING_PAIR_DEFAULT",
    "DEFAULT_WAYS",
    "PAIR_METHODS",
    "WAYS",
    "Question",
    "Way",
    "default_way",
    "find_way",
    "question_of",
    "stamp",
    "stamped",
]

#: how a pair can be asked, each in a few words: both orders side by side, each answer alone, no question
#: (likelihood), or the judge's checks side by side and likelihood at once, weighed (:mod:`.weighed`); a method
#: of one's own joins them through :func:`localjudge._judges.pair_methods.register_pair_method`
#: why a method registered in code may be missing: registration lives in one process, not in its workers
ONLY_WHERE_REGISTERED = (
    "a pair method registered in code (register_pair_method) exists only in the process that registered it; "
    "worker processes (Ray, a process pool) must register it too, e.g. in a module each worker imports"
)
PAIR_METHODS: dict[str, str] = {
    "both-orders": "both orders side by side",
    "pointwise": "each answer judged alone",
    "likelihood": "no verdict asked: the answer the instruction makes likelier wins",
    "weighed": "both orders side by side after the judge's own checks, and the likelihood gain, "
    "weighed by a fit on labelled pairs",
}
ON_DISAGREEMENT = ("tie", "probabilities")


class Question(Enum):
    """The kinds of question a judge is asked, each with its own measured default way."""

    ANSWER = "is this answer right, with no reference"
    ANSWER_WITH_REFERENCE = "is this answer right, against a reference"
    OWN_PROMPT = "a prompt, score or schema of the caller's own"
    PAIR = "which of two answers does what was asked"
    TRAJECTORY = "an agent's trajectory"


@dataclass(frozen=True)
class Way:
    """How the judge is asked, apart from the prompt and the model.

    ``self_reference``: the judge first answers the question itself and
    judges against its own answer. ``same_answer``: the judge is asked
    whether the answer gives the same result as the reference the row
    gives, not whether it is right (a way with ``self_reference`` always
    asks so, of the judge's own answer). ``checklist``: it first writes yes/no
    checks from the request (pairs). ``pairs``: how a pair is asked.
    ``on_disagreement``: what a pair whose two orders disagree becomes.
    ``calibrated``: the verdict's probabilities corrected by the fit kept for
    this judge (a default way uses one only where it exists).
    """

    self_reference: bool = False
    same_answer: bool = False
    checklist: bool = False
    pairs: str = "both-orders"
    on_disagreement: str = "tie"
    calibrated: bool = False

    def __post_init__(self) -> None:
        if self.pairs not in PAIR_METHODS:
            raise OptionError(
                f"a pair is asked one of these ways: {', '.join(PAIR_METHODS)}; got {self.pairs!r} "
                f"({ONLY_WHERE_REGISTERED})"
            )
        if self.on_disagreement not in ON_DISAGREEMENT:
            raise OptionError(
                f"{{on_disagreement}} is one of {', '.join(ON_DISAGREEMENT)}, got {self.on_disagreement!r}"
            )
        if self.pairs != "both-orders" and self.on_disagreement != "tie":
            raise OptionError(
                f"{{on_disagreement}} settles a pair's two orders, and {method_named(self.pairs)} has none"
            )
        if self.same_answer and (self.self_reference or self.pairs_only):
            raise OptionError(
                "the same-answer way compares one answer with the reference its row gives: "
                "it does not go with pairs or {self_reference}, which compares with the judge's own"
            )
        if self.pairs == "likelihood" and (self.self_reference or self.checklist):
            given = [f"{{{name}}}" for name in ("self_reference", "checklist") if getattr(self, name)]
            raise OptionError(
                f"{method_named('likelihood')} does not go with {', '.join(given)}: it asks the judge nothing"
            )
        if self.pairs == "weighed" and (self.self_reference or self.calibrated or not self.checklist):
            given = [f"{{{name}}}" for name in ("self_reference", "calibrated") if getattr(self, name)]
            raise OptionError(
                f"the weighed way does not go with {', '.join(given) or 'no checklist'}: it weighs the judge's "
                "checks side by side against likelihood, and its weights are its calibration"
            )
        if self.pairs == "pointwise" and self.calibrated:
            raise OptionError(f"{{calibrated}} corrects a pair's positions, and {method_named('pointwise')} has none")

    @property
    def pairs_only(self) -> bool:
        """Whether only a pair can be asked this way (its checks, its method, its settling of orders)."""
        return self.checklist or self.pairs != "both-orders" or self.on_disagreement != "tie"

    @property
    def label(self) -> str:
        """The way's name, as results and reports give it: a named way's name, else its parts joined by ``+``."""
        for name, way in tuple(WAYS.items()):  # a snapshot: a method may be registered meanwhile
            if way == self:
                return name
        parts: list[str] = [self.pairs] if self.pairs != "both-orders" else []
        parts += [
            name.replace("_", "-") for name in ("self_reference", "same_answer", "checklist") if getattr(self, name)
        ]
        if self.on_disagreement != "tie":
            parts.append(f"ties-to-{self.on_disagreement}")
        if self.calibrated:
            parts.append("calibrated")
        label = "+".join(parts) or "plain"
        named = WAYS.get(label)
        if named is None:
            return label
        # the parts spell a named way that differs: say how
        if replace(self, calibrated=True) == named:
            return f"{label}+uncalibrated"
        return f"{label}+ties-to-{self.on_disagreement}"

    def describe(self, *, pair: bool) -> str:
        """The way in a few words, for a judgement of one output or of a pair."""
        parts = []
        if pair:
            settled = "to the likelier side" if self.on_disagreement == "probabilities" else "a tie"
            method = PAIR_METHODS.get(self.pairs, self.pairs)
            parts.append(f"{method}, a disagreement {settled}" if self.pairs == "both-orders" else method)
        if self.self_reference:
            parts.append("against the judge's own answer, written first")
        if self.same_answer:
            parts.append("whether it gives the same result as the reference")
        if self.checklist and self.pairs != "weighed":
            parts.append("after the judge's own checks")
        if not (pair or self.self_reference or self.same_answer):
            parts.insert(0, "the prompt as written")
        if self.calibrated:
            parts.append("calibrated")
        return ", ".join(parts)

    def uncalibrated(self) -> Way:
        """This way without its calibration: what runs where no fit exists for the judge."""
        return replace(self, calibrated=False)


def method_named(pairs: str) -> str:
    """A pair method as a message names it: its flag on the command line and ``way=`` in code, where it has one."""
    return f'{{{pairs}:way="{pairs}"}}' if pairs in _FLAGGED_METHODS else f"the {pairs} way"


_FLAGGED_METHODS = ("pointwise", "likelihood")  # the methods with a flag of their own (--pointwise, --likelihood)


#: the named ways, for ``--way NAME``; ``plain`` is OpenEvals' own (a pair: both orders, a disagreement a tie)
WAYS: dict[str, Way] = {
    "plain": Way(),
    "self-reference": Way(self_reference=True, calibrated=True),
    "same-answer": Way(same_answer=True, calibrated=True),
    "checklist": Way(checklist=True, on_disagreement="probabilities"),
    "pointwise": Way(pairs="pointwise"),
    "likelihood": Way(pairs="likelihood"),
    "weighed": Way(pairs="weighed", checklist=True),
}

#: each question's default way, chosen on the shipped sets' dev rows and reported on their test rows
#: (docs/defaults.md, "How the defaults were chosen")
DEFAULT_WAYS: dict[Question, Way] = {
    Question.ANSWER: WAYS["self-reference"],
    Question.ANSWER_WITH_REFERENCE: WAYS["same-answer"],
    Question.OWN_PROMPT: Way(calibrated=True),  # as written; its probabilities corrected where a fit exists
    Question.PAIR: WAYS["weighed"],
    Question.TRAJECTORY: WAYS["plain"],
}
#: a pair's default where the weighed way cannot run (a judge that does not read replies, such as a server, or
#: ties asked for): the best measured way that only asks questions
ASKING_PAIR_DEFAULT = WAYS["checklist"]


def find_way(name: str) -> Way:
    """The way called ``name``, or an error that lists them."""
    way = WAYS.get(name)
    if way is None:
        raise OptionError(
            f"no way of judging named {name!r}; the ways: {', '.join(WAYS)} (or leave {{way}} out). "
            f"{ONLY_WHERE_REGISTERED[0].upper()}{ONLY_WHERE_REGISTERED[1:]}"
        )
    return way


def default_way(question: Question, *, reads_replies: bool = True, allow_ties: bool = False) -> Way:
    """The way measured best for ``question`` that this judge can run: what runs when none is named.

    ``reads_replies``: the judge scores replies (a local model), which likelihood
    needs; ``allow_ties``: the judge may answer a tie, which weighed odds never are.
    """
    way = DEFAULT_WAYS[question]
    if way.pairs == "weighed" and (allow_ties or not reads_replies):
        return ASKING_PAIR_DEFAULT
    return way


def question_of(
    *,
    pairwise: bool,
    trajectory: bool,
    has_inputs: bool,
    has_reference: bool,
    own_question: bool,
    evaluator: Optional[str] = None,
) -> Question:
    """The kind of question a judgement asks: what its default way depends on.

    ``own_question``: the caller gave a prompt, a score's shape or a schema of
    their own, which is judged as they wrote it. The ``correctness`` and
    ``same_answer`` evaluators ask whether an answer is right, with or
    without a reference; any other evaluator asks its own question.
    """
    if trajectory:
        return Question.TRAJECTORY
    if pairwise:
        return Question.PAIR if evaluator in (None, "pairwise_preference") else Question.OWN_PROMPT
    if own_question or evaluator not in (None, "correctness", "same_answer"):
        return Question.OWN_PROMPT
    if has_reference:
        return Question.ANSWER_WITH_REFERENCE
    return Question.ANSWER if has_inputs else Question.OWN_PROMPT


def stamp(result: object, way: Way, requests: int) -> Any:
    """The result with the way it was judged (``way``) and the model requests it took (``requests``) in its metadata.

    A result without metadata (a custom schema's answer) is returned as it is.
    """
    if not isinstance(result, dict) or "metadata" not in result:
        return result
    return {**result, "metadata": {**(result["metadata"] or {}), "way": way.label, "requests": requests}}


def stamped(plan: Step, way: Optional[Way]) -> Step:
    """``plan``, its result stamped (:func:`stamp`) with ``way`` and the requests it sent; as it is for no way."""
    if way is None:
        return (yield from plan)
    sent = 0
    try:
        requests = next(plan)
    except StopIteration as done:  # answered without asking
        return stamp(done.value, way, sent)
    while True:
        sent += len(requests)
        responses = yield requests
        try:
            requests = plan.send(responses)
        except StopIteration as done:
            return stamp(done.value, way, sent)
