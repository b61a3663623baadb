"""The judge options ``score``, ``batch``, ``compare``, ``calibrate`` and ``check-judge`` share, as one typed value.

:class:`JudgeSettings` holds which model judges (its spec, servers, fallbacks,
ensemble members and the typed :class:`~localjudge.specs.ModelOptions`) and
how it is asked (prompt, examples, the score's shape, pairs). It is frozen and
picklable: a command line builds it once, the library changes it only with
:func:`dataclasses.replace`, and a batch run sends it to Ray's actors as it
is. Each field is named as the keyword an
:class:`~localjudge.errors.OptionError` names it by (``{prompt_file}``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

from ..judges.ways import Way
from ..specs import ModelOptions, parse_spec
from ..specs.options import MAX_DEFAULT_PARALLEL

__all__ = ["JudgeSettings"]


@dataclass(frozen=True)
class JudgeSettings:
    """Which model judges and how it is asked; every field has the default a command uses when its flag is absent."""

    # the model
    model_spec: str = "default"
    ensemble_specs: tuple[str, ...] = ()
    ensemble_names: tuple[str, ...] = ()  # the members as the user named them, kept where their specs were rewritten
    base_urls: tuple[str, ...] = ()
    fallbacks: tuple[str, ...] = ()
    model_options: ModelOptions = field(default_factory=ModelOptions)
    # the prompt
    prompt: Optional[str] = None
    prompt_file: Optional[Path] = None
    evaluator: Optional[str] = None
    system: Optional[str] = None
    reasoning: bool = False  # verdict only unless asked: as right, and 3 to 6 times faster (docs/measurements.md)
    few_shot: Optional[Path] = None
    few_shot_first: bool = False
    feedback_key: Optional[str] = None
    calibrated: bool = False
    self_reference: bool = False
    # what screening changes in the judged answer (judges.screen.SCREENS); None: full for our own question of
    # whether an answer is right, none for a prompt or evaluator that asks another
    screen: Optional[str] = None
    checklist: bool = False
    # the shape of a single output's score
    continuous: bool = False
    choices: Optional[tuple[float, ...]] = None
    output_schema: Optional[Path] = None
    # pairs and trajectories
    pairwise: bool = False
    allow_ties: bool = False
    on_disagreement: Optional[str] = None
    pointwise: bool = False
    likelihood: bool = False
    trajectory: bool = False
    # a way of judging (--way NAME); None: the flags' way, or, with none of them, the question's default
    way: Optional[Way] = None

    def __post_init__(self) -> None:
        if self.choices is not None and not isinstance(self.choices, tuple):  # a list from a caller: kept immutable
            object.__setattr__(self, "choices", tuple(self.choices))

    def way_of_judging(self) -> dict[str, Any]:
        """What, besides the model, shapes these settings' verdicts: a measured figure means little without it.

        The same keys always; None where an option has no place (a pair read
        by likelihood is asked nothing, so it has no reasoning).
        """
        pairs = None
        if self.pairwise:
            pairs = "likelihood" if self.likelihood else "pointwise" if self.pointwise else "both orders"
            if self.way is not None:  # the way the flags made, or one named: its method says
                pairs = self.way.pairs.replace("-", " ")
        asked = pairs != "likelihood"
        return {
            "pairs": pairs,
            "on_disagreement": (self.on_disagreement or "tie") if pairs == "both orders" else None,
            "reasoning": self.reasoning if asked else None,
            "self_reference": self.self_reference if asked else None,
            "checklist": self.checklist if asked else None,
            "few_shot": str(self.few_shot) if self.few_shot is not None and asked else None,
            "few_shot_first": self.few_shot_first if self.few_shot is not None and asked else None,
            "calibrated": self.calibrated,
            "screen": self.screen,
            "system": self.system,
        }

    def fingerprint(self) -> str:
        """A short digest of everything here that shapes a verdict, files' contents included.

        Options that only change how fast or where a run goes (``parallel``,
        threads, timeouts) leave it as it is, so a run resumed with another
        ``-j`` is the same judge.
        """
        from ..judges.ways import ASKING_PAIR_DEFAULT, DEFAULT_WAYS
        from ..specs.registry import identity_options
        from ..trust.fit import SHIPPED

        shaping = identity_options()
        # the defaults judge when no way is named: a release that changes them is another judge
        defaults = [(q.name, w.label) for q, w in DEFAULT_WAYS.items()] + [("ASKING_PAIR", ASKING_PAIR_DEFAULT.label)]
        described: dict[str, Any] = {"default_ways": defaults}
        # so are the fits that ship (calibrations, the weighed way's weights): a refit one judges otherwise
        described["shipped_fits"] = {path.name: _file_digest(path) for path in sorted(SHIPPED.glob("*.json"))}
        for name, value in vars(self).items():
            if name == "model_options":
                value = sorted((key, repr(option)) for key, option in value.items() if key in shaping)
            elif isinstance(value, Path):
                value = _file_digest(value)  # not its name: the same file named from elsewhere is the same judge
            described[name] = repr(value)
        return hashlib.sha256(json.dumps(described, sort_keys=True).encode("utf-8")).hexdigest()[:16]

    def with_parallel_for(self, concurrency: int) -> JudgeSettings:
        """These settings with the sequences a local model decodes side by side, unless ``parallel`` was given.

        ``concurrency`` rows in flight, each two sequences for a pair (its two orders).
        """
        if (concurrency > 1 or self.pairwise) and parse_spec(self.model_spec).runs_here:
            parallel = min(concurrency * (2 if self.pairwise else 1), MAX_DEFAULT_PARALLEL)
            return replace(self, model_options=self.model_options.with_default("parallel", parallel))
        return self


def _file_digest(path: Path) -> str:
    """A file's sha256, or why there is none (it is read, and refused if bad, where the judge is built)."""
    from ..paths import file_sha256

    try:
        return file_sha256(path)
    except OSError as exc:
        return type(exc).__name__
