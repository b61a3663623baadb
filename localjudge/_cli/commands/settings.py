"""The judge options ``score``, ``batch``, ``compare``, ``calibrate`` and ``check-judge`` share, as one typed value.

:class:`JudgeSettings` holds which model judges (its spec, servers, fallbacks,
ensemble members and the typed :class:`~localjudge._specs.ModelOptions`) and
how it is asked (prompt, examples, the score's shape, pairs). It is frozen and
picklable: a command line builds it once, the library changes it only with
:func:`dataclasses.replace`, and a batch run sends it to Ray's actors as it
is. Each field is named as the keyword an
:class:`~localjudge.errors.OptionError` names it by (``{prompt_file}``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Optional

from ..._judges.ways import Way
from ..._specs import ModelOptions, parse_spec
from ..._specs.options import MAX_DEFAULT_PARALLEL
from ...errors import OptionError

__all__ = ["JudgeSettings", "WayFlags"]


@dataclass(frozen=True)
class WayFlags:
    """The way options given one by one (self-reference, checklist, a pair method, ...), each adding to the way.

    They are what was asked, kept apart from :attr:`JudgeSettings.way`, the
    way that judges: a way named adds them (``--way plain --calibrated``), and
    with none of either a question's default judges.
    """

    self_reference: bool = False
    checklist: bool = False
    pointwise: bool = False
    likelihood: bool = False
    on_disagreement: Optional[str] = None
    calibrated: bool = False

    def given(self) -> dict[str, Any]:
        """The flags set, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def added_to(self, base: Way) -> Way:
        """``base`` with what these flags add to it (the way checks the whole when it is made)."""
        if self.pointwise and self.likelihood:
            raise OptionError("{likelihood} does not go with {pointwise}: each is a way of asking a pair, give one")
        changes: dict[str, Any] = {
            name: True for name in ("self_reference", "checklist", "calibrated") if getattr(self, name)
        }
        if self.pointwise or self.likelihood:
            changes["pairs"] = "pointwise" if self.pointwise else "likelihood"
        if self.on_disagreement:
            changes["on_disagreement"] = self.on_disagreement
        return replace(base, **changes)


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
    # what screening changes in the judged answer (judges.screen.SCREENS); None: full for our own question of
    # whether an answer is right, none for a prompt or evaluator that asks another
    screen: Optional[str] = None
    # the shape of a single output's score
    continuous: bool = False
    choices: Optional[tuple[float, ...]] = None
    output_schema: Optional[Path] = None
    # pairs and trajectories
    pairwise: bool = False
    allow_ties: bool = False
    trajectory: bool = False
    # the way of judging: one named (--way NAME), or the one resolved for the rows; None: the question's default
    way: Optional[Way] = None
    # the way flags given, which add to it
    way_flags: WayFlags = field(default_factory=WayFlags)

    def __post_init__(self) -> None:
        if self.choices is not None and not isinstance(self.choices, tuple):  # a list from a caller: kept immutable
            object.__setattr__(self, "choices", tuple(self.choices))

    def way_of_judging(self) -> dict[str, Any]:
        """What, besides the model, shapes these settings' verdicts: a measured figure means little without it.

        The same keys always; None where an option has no place (a pair read
        by likelihood is asked nothing, so it has no reasoning).
        """
        way = self.judging_way()
        pairs = way.pairs.replace("-", " ") if self.pairwise else None
        asked = pairs != "likelihood"
        return {
            "pairs": pairs,
            "on_disagreement": way.on_disagreement if pairs == "both orders" else None,
            "reasoning": self.reasoning if asked else None,
            "self_reference": way.self_reference if asked else None,
            "checklist": way.checklist if asked else None,
            "few_shot": str(self.few_shot) if self.few_shot is not None and asked else None,
            "few_shot_first": self.few_shot_first if self.few_shot is not None and asked else None,
            "calibrated": way.calibrated,
            "screen": self.screen,
            "system": self.system,
        }

    def judging_way(self) -> Way:
        """The way these settings name with the flags added: the way that judges once it is resolved for rows."""
        return self.way_flags.added_to(self.way or Way())

    def fingerprint(self) -> str:
        """A short digest of everything here that shapes a verdict, files' contents included.

        Options that only change how fast or where a run goes (``parallel``,
        threads, timeouts) leave it as it is, so a run resumed with another
        ``-j`` is the same judge.
        """
        from ..._judges.ways import ASKING_PAIR_DEFAULT, DEFAULT_WAYS
        from ..._specs.registry import identity_options
        from ..._trust.fit import SHIPPED

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
    from ..._paths import file_sha256

    try:
        return file_sha256(path)
    except OSError as exc:
        return type(exc).__name__
