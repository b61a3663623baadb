"""The way rows of one shape are judged, from the options given: a way named, the way flags, or the question's default."""

from __future__ import annotations

from dataclasses import replace

from ..._judges.ways import Way, default_way, question_of
from ...errors import OptionError, UsageError
from .settings import JudgeSettings

__all__ = ["resolve_way"]


_NEEDS_INPUTS = {
    "self_reference": "has the judge answer each row's question",
    "checklist": "has the judge write checks for each row's request",
}


def resolve_way(settings: JudgeSettings, *, has_inputs: bool, has_reference: bool) -> tuple[JudgeSettings, Way, bool]:
    """The way these options judge rows of this shape, the options with it applied, and whether it is a default.

    ``--way NAME`` names one (the way flags given beside it add to it); the way
    flags alone describe one; with neither, the question's default
    (:func:`~localjudge._judges.ways.default_way`) judges, as measured best.
    """
    flags = settings.way_flags.given()
    if "on_disagreement" in flags and not settings.pairwise:
        raise OptionError("{on_disagreement} is for pairs: use it with a pairwise judge ({pairwise})")
    own_question = settings.continuous or any(
        getattr(settings, name) is not None
        for name in ("prompt", "prompt_file", "output_schema", "few_shot", "choices")
    )
    question = question_of(
        pairwise=settings.pairwise,
        trajectory=settings.trajectory,
        has_inputs=has_inputs,
        has_reference=has_reference,
        own_question=own_question,
        evaluator=settings.evaluator,
    )
    defaulted = settings.way is None and not flags
    if settings.way is not None:
        base = settings.way
    elif defaulted:
        base = default_way(question, reads_replies=_reads_replies(settings), allow_ties=settings.allow_ties)
    else:
        base = Way()
    way = settings.way_flags.added_to(base)
    if way.pairs_only and not settings.pairwise:
        if base.pairs_only and settings.way is not None:
            raise OptionError(f"the {base.label} way judges pairs: use it with a pairwise judge ({{pairwise}})")
        name = next((name for name in ("checklist", "pointwise", "likelihood") if name in flags), "way")
        raise OptionError(f"{{{name}}} is for pairs: use it with a pairwise judge ({{pairwise}})")
    if way.same_answer and (own_question or settings.evaluator not in (None, "correctness", "same_answer")):
        raise OptionError(
            "the same-answer way asks a question of its own: it does not go with a prompt, a scale "
            "or an evaluator of yours"
        )
    if way.same_answer and (settings.pairwise or settings.trajectory or not (has_inputs and has_reference)):
        if not defaulted:
            raise OptionError(
                "the same-answer way asks whether an answer gives the same result as its row's reference: "
                "use it on rows with inputs and reference_outputs, not pairs or trajectories"
            )
        way = Way()  # rows without the question are judged as asked
    written = [name for name in ("self_reference", "checklist") if getattr(way, name)]
    if written and not has_inputs:
        if not defaulted:
            raise OptionError(f"{{{written[0]}}} {_NEEDS_INPUTS[written[0]]}, and these rows give no inputs")
        way = Way()  # what the default writes first needs the question: such rows are judged as asked
    return replace(settings, way=way), way, defaulted


def _reads_replies(settings: JudgeSettings) -> bool:
    """Whether every model the settings name runs here, and so can score a reply (likelihood needs it)."""
    from ..._specs.parse import parse_spec

    try:
        return parse_spec(settings.model_spec).all_here
    except UsageError:  # reported where the judge is built
        return True
