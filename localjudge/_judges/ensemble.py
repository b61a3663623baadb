"""One verdict from several judges: a vote for true/false, choices and pairs; mean and spread for scores.

A single small judge is often unsure; several (other models, other
clients, other prompts) that agree are worth more, and how far they agree
says how far to trust the verdict. A member whose model failed is left out
and named; the verdict fails only when every member failed. A member called
wrongly (a missing variable) is the caller's error, raised at once.
"""

from __future__ import annotations

import asyncio
import contextvars
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .._prompts.prompting import SCORES
from ..errors import AllClientsFailedError, JudgeRuntimeError, UsageError
from .single import AsyncEvaluator, Evaluator

__all__ = ["combine_verdicts", "create_async_ensemble_judge", "create_ensemble_judge"]


def combine_verdicts(
    results: Sequence[Mapping[str, Any]],
    *,
    key: str | None = None,
    vote_numbers: bool = False,
    names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The ensemble's result from its members' results (each ``{"key", "score", "comment", "metadata"}``).

    Booleans go by majority, pairwise results by their winner's majority, and
    numbers too when ``vote_numbers`` (scores from a set of choices); a tie
    between the most common goes to the one the members gave the higher mean
    probability, else to the earliest member's. Other numbers give their
    mean, and their spread (population standard deviation) in ``metadata``.
    ``metadata.agreement`` is the share of members behind the verdict (for a
    mean: 1 - 2 x spread, at least 0, for scores from 0 to 1);
    ``metadata.members`` each member's score, comment and metadata (and
    ``name``, given ``names``: one per result).
    """
    if not results:
        raise UsageError("an ensemble needs at least one result to combine")
    key = key or results[0].get("key") or "score"
    scores = [r.get("score") for r in results]
    winners = [(r.get("metadata") or {}).get("winner") for r in results]
    numbers = all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores)
    if all(isinstance(w, str) for w in winners):
        verdict, agreement, votes = _vote(winners, results)
        score: object = SCORES.get(verdict, 0.5)
        metadata: dict[str, Any] = {"winner": verdict, "votes": votes, "agreement": agreement}
    elif all(isinstance(s, bool) for s in scores) or (numbers and vote_numbers):
        score, agreement, votes = _vote(scores, results)
        metadata = {"votes": votes, "agreement": agreement}
    elif numbers:
        values: list[float] = [s for s in scores if isinstance(s, (int, float))]  # all of them, here
        score = statistics.fmean(values)
        spread = statistics.pstdev(values)
        metadata = {"spread": spread, "agreement": max(0.0, 1.0 - 2 * spread)}
    else:
        raise UsageError(f"the members' scores cannot be combined: {scores!r} (mixed kinds, or not scores)")
    members = [  # each member's own figures too: probabilities, likelihood gains, its own answer
        {"score": r.get("score"), "comment": r.get("comment"), "metadata": _copy(r.get("metadata"))} for r in results
    ]
    if names is not None:
        named = zip(_member_names(names, len(results)), members, strict=True)
        members = [{"name": name, **member} for name, member in named]
    metadata["members"] = members
    return {"key": key, "score": score, "comment": _majority_comment(results, score), "metadata": metadata}


def _copy(metadata: object) -> Any:
    """A member's metadata as the ensemble's own: a caller who edits the result leaves the member's (cached) one be."""
    return dict(metadata) if isinstance(metadata, Mapping) else metadata


def _vote(values: list[Any], results: Sequence[Mapping[str, Any]]) -> tuple[Any, float, dict[str, int]]:
    counts = Counter(values)
    top = max(counts.values())
    leaders = [v for v in dict.fromkeys(values) if counts[v] == top]  # in the members' order
    leaders.sort(key=lambda v: -_mean_probability(results, v))  # stable: equal probabilities keep that order
    return leaders[0], top / len(values), {_label(v): n for v, n in counts.most_common()}


def _label(value: object) -> str:
    return "true" if value is True else "false" if value is False else str(value)


def _mean_probability(results: Sequence[Mapping[str, Any]], value: object) -> float:
    """How likely the members thought ``value`` was, on average; 0 where none said."""
    seen = []
    for result in results:
        probabilities = (result.get("metadata") or {}).get("probabilities")
        if isinstance(probabilities, Mapping):
            seen.append(float(probabilities.get(_label(value), 0.0)))
    return statistics.fmean(seen) if seen else 0.0


def _majority_comment(results: Sequence[Mapping[str, Any]], score: object) -> Any:
    """The first comment of a member that gave the verdict (a vote), else of the first member."""
    for result in results:
        if result.get("score") == score and result.get("comment") is not None:
            return result.get("comment")
    return results[0].get("comment")


def _check(evaluators: Sequence[Callable[..., Any]]) -> list[Callable[..., Any]]:
    if len(evaluators) < 2:
        raise UsageError("an ensemble needs two or more evaluators")
    if not all(callable(e) for e in evaluators):
        raise UsageError("every member of an ensemble must be an evaluator (a callable)")
    return list(evaluators)


def _member_names(names: Sequence[str] | None, count: int) -> list[str]:
    """The members' names as given (one distinct text each), else by position."""
    if names is None:
        return [f"member {i + 1}" for i in range(count)]
    given = [] if isinstance(names, str) else list(names)  # a text is one name, not a name per letter
    if len(given) != count or not all(isinstance(n, str) and n for n in given) or len(set(given)) != count:
        raise UsageError(f"names must give one distinct, non-empty name per member ({count}), got {names!r}")
    return given


def _all_choices(members: Sequence[Callable[..., Any]]) -> bool:
    """Whether every member scores from a set of choices (then numbers are voted on, not averaged)."""
    return all(getattr(getattr(m, "core", None), "choices", None) for m in members)


def _settle(outcomes: Sequence[Any], names: Sequence[str], key: str | None, vote_numbers: bool) -> dict[str, Any]:
    """Combine what succeeded; name what failed; fail only when everything did."""
    answered = [(n, o) for n, o in zip(names, outcomes, strict=True) if not isinstance(o, BaseException)]
    failures = [(n, o) for n, o in zip(names, outcomes, strict=True) if isinstance(o, BaseException)]
    results = [o for _, o in answered]
    for _, error in failures:
        if not isinstance(error, JudgeRuntimeError):
            raise error  # a bad call or a bug: the caller's to see, not a vote to drop
    if not results:
        raise AllClientsFailedError(failures, backend="ensemble")
    combined = combine_verdicts(results, key=key, vote_numbers=vote_numbers, names=[n for n, _ in answered])
    if failures:
        combined["metadata"]["failures"] = [
            {"member": n, "error": type(e).__name__, "message": str(e)} for n, e in failures
        ]
    return combined


class _Members:
    """What both ensemble evaluators hold: the members, their names in failures, and how verdicts combine."""

    def __init__(self, members: Sequence[Callable[..., Any]], key: str | None, names: Sequence[str] | None) -> None:
        self.members = _check(members)
        self.names = _member_names(names, len(self.members))
        self.key = key
        self.vote_numbers = _all_choices(self.members)


class EnsembleEvaluator(_Members, Evaluator):
    """What :func:`create_ensemble_judge` returns: every member asked at once, in threads, their verdicts combined."""

    def __call__(self, **kwargs: object) -> dict[str, Any]:
        def ask(member: Callable[..., Any]) -> Any:
            try:
                return member(**kwargs)
            except Exception as exc:  # judged in _settle: model failures are dropped votes, others are raised
                return exc

        # each member in a copy of the caller's context (what it keeps, such as exchanges, reaches the caller)
        contexts = [contextvars.copy_context() for _ in self.members]
        with ThreadPoolExecutor(max_workers=len(self.members)) as pool:
            asked = pool.map(lambda context, member: context.run(ask, member), contexts, self.members)
            return _settle(list(asked), self.names, self.key, self.vote_numbers)


class AsyncEnsembleEvaluator(_Members, AsyncEvaluator):
    """What :func:`create_async_ensemble_judge` returns: every async member awaited at once."""

    async def __call__(self, **kwargs: object) -> dict[str, Any]:
        outcomes = await asyncio.gather(*(member(**kwargs) for member in self.members), return_exceptions=True)
        return _settle(outcomes, self.names, self.key, self.vote_numbers)


def create_ensemble_judge(
    *evaluators: Callable[..., Any], key: str | None = None, names: Sequence[str] | None = None
) -> EnsembleEvaluator:
    """An evaluator that asks every member (at once) and combines their verdicts (:func:`combine_verdicts`).

    Members are evaluators from :func:`create_llm_as_judge` (or pairwise
    ones), on different models or clients, called with the same arguments.
    ``names`` (one per member, such as its model) label each member's
    verdict and failure; without them members are named by position.
    """
    return EnsembleEvaluator(evaluators, key, names)


def create_async_ensemble_judge(
    *evaluators: Callable[..., Any], key: str | None = None, names: Sequence[str] | None = None
) -> AsyncEnsembleEvaluator:
    """The async twin of :func:`create_ensemble_judge`, over async evaluators."""
    return AsyncEnsembleEvaluator(evaluators, key, names)
