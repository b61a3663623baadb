"""How far a judge screens the answer it judges before asking (:mod:`localjudge._prompts.screening`).

A :class:`Screen` says which of the screening steps change what the judge
is shown: invisible characters and markup neutralised, the parts that speak
to the judge taken out, an answer with nothing left to judge called wrong
without asking. Whatever it changes, the result's metadata says when the
answer addressed the judge (``addresses_judge``), so a run can count them.

Our own ways of judging whether an answer is right screen fully
(:data:`DEFAULT_SCREEN`), as measured on ``localjudge check-judge --set
injection``. A prompt of the caller's own is sent exactly as written
(:data:`WATCH`): only the metadata says what was found.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Optional

from .._prompts.screening import Screened, screen
from ..errors import OptionError

__all__ = [
    "ADDRESSES_JUDGE",
    "DEFAULT_SCREEN",
    "SCREENED_FIELD",
    "SCREENS",
    "WATCH",
    "Screen",
    "asking_always",
    "find_screen",
    "mark",
]

#: the metadata field that says the judged answer spoke to the judge
ADDRESSES_JUDGE = "addresses_judge"
#: the metadata field that says what screening changed in what the judge was shown
SCREENED_FIELD = "screened"


@dataclass(frozen=True)
class Screen:
    """Which screening steps change what the judge sees; none of them: the answer is shown as given."""

    neutralise: bool = False  # invisible characters out, markup in look-alike brackets
    strip: bool = False  # the parts that speak to the judge taken out
    content_free: bool = False  # nothing left that makes a claim: false, without asking the judge

    @property
    def name(self) -> str:
        return next((name for name, screen in SCREENS.items() if screen == self), "custom")

    def look(self, outputs: object) -> Optional[Screened]:
        """What screening finds in ``outputs`` (a text; anything else is not screened: None)."""
        return screen(outputs) if isinstance(outputs, str) else None

    def shown(self, outputs: object, found: Optional[Screened]) -> object:
        """The answer as the judge is shown it."""
        if found is None or not (self.neutralise or self.strip):
            return outputs
        if self.strip:
            return found.text
        from .._prompts.screening import neutralise

        return neutralise(str(outputs))[0]

    def answers_alone(self, found: Optional[Screened]) -> bool:
        """Whether the screen gives the verdict itself: an answer with nothing left to judge is wrong."""
        if found is None or not self.content_free:
            return False
        return found.content_free if self.strip else _content_free_as_given(found)


def _content_free_as_given(found: Screened) -> bool:
    """Content-free before any part was taken out: the parts that spoke to the judge count as content then."""
    return found.content_free and not found.addressed


#: the screens by name (``--screen NAME``): ``full`` is our default, ``off`` shows the answer as given
SCREENS: dict[str, Screen] = {
    "full": Screen(neutralise=True, strip=True, content_free=True),
    "strip": Screen(neutralise=True, strip=True),
    "neutralise": Screen(neutralise=True),
    "content-free": Screen(content_free=True),
    "off": Screen(),
}
DEFAULT_SCREEN = SCREENS["full"]
#: a prompt of the caller's own: nothing it sends changes, the metadata says what was found
WATCH = SCREENS["off"]


def find_screen(name: str) -> Screen:
    """The screen called ``name``, or an error that lists them."""
    if name not in SCREENS:
        raise OptionError(f"no screen named {name!r}; the screens: {', '.join(SCREENS)}")
    return SCREENS[name]


@contextlib.contextmanager
def asking_always(evaluator: object) -> Iterator[None]:
    """Within it, ``evaluator`` asks its judge even of an answer with no content (and screens as before otherwise).

    Calibration reads the judge's bias from content-free inputs: they must reach the judge.
    """
    core = getattr(evaluator, "core", None)
    kept = getattr(core, "screen", None)
    if not isinstance(kept, Screen) or not kept.content_free:
        yield
        return
    core.screen = replace(kept, content_free=False)  # type: ignore[union-attr]
    try:
        yield
    finally:
        core.screen = kept  # type: ignore[union-attr]


def mark(result: Any, screen: Screen, found: Optional[Screened]) -> Any:
    """``result`` with ``addresses_judge`` in its metadata where the answer spoke to the judge, and what was changed.

    A result without a metadata field (a custom schema's answer) is returned as it is.
    """
    if found is None or not isinstance(result, dict) or "metadata" not in result:
        return result
    changes = _changes(screen, found)
    if not (found.addresses_judge or changes):
        return result
    metadata = dict(result["metadata"] or {})
    if found.addresses_judge:
        metadata[ADDRESSES_JUDGE] = True
    if changes:
        metadata[SCREENED_FIELD] = changes
    return {**result, "metadata": metadata}


def _changes(screen: Screen, found: Screened) -> list[str]:
    """What the screen changed in what the judge was shown, in words a record keeps."""
    changes = []
    if screen.neutralise and found.invisible:
        changes.append(f"{found.invisible} invisible characters removed")
    if screen.strip and found.addressed:
        changes.append(f"{len(found.addressed)} parts addressing the judge taken out")
    return changes


def without_asking(feedback_key: str, screen: Screen, found: Screened) -> dict[str, Any]:
    """The verdict for an answer with nothing to judge: false, the judge never asked."""
    metadata: dict[str, Any] = {SCREENED_FIELD: [*_changes(screen, found), "nothing left to judge"]}
    if found.addresses_judge:
        metadata[ADDRESSES_JUDGE] = True
    return {
        "key": feedback_key,
        "score": False,
        "comment": "The answer makes no claim to judge"
        + (" once the parts addressing the judge are taken out" if found.addresses_judge and screen.strip else "")
        + ": false, without asking the judge.",
        "metadata": metadata,
    }
