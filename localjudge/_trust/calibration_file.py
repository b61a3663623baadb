"""A fitted calibration on disk: written by ``localjudge calibrate``, read back (and checked) when asked for.

One file per judge, under the cache directory's ``calibration/``, named by
a key of the model's identity and everything that shapes its prompt (see
:func:`localjudge._trust.fit.calibration_key`). The file is JSON: the
correction, and the held-out figures that decided whether to keep it. A
file is read as untrusted: every field is checked before it can change a
verdict.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from .. import _bounded_json as bounded_json
from .._datasets.results_file import replace_atomically
from .._paths import cache_dir
from .._text import clip
from ..errors import UsageError
from .correction import CANDIDATES, Correction, Fit, Validation

__all__ = ["StoredCalibration", "calibration_path", "read_calibration", "write_calibration"]

FORMAT = 1
MAX_BYTES = 1 << 20  # a calibration file is a few hundred bytes; a larger one is not ours
_TEMPERATURES = (0.01, 100.0)  # the fit searches 0.05 to 20; beyond this range a file was edited or damaged


def calibration_path(key: str) -> Path:
    return cache_dir() / "calibration" / f"{key}.json"


@dataclass(frozen=True)
class StoredCalibration:
    """The correction to apply (None when fitting found none that helped), and the figures behind the choice."""

    correction: Correction | None
    chosen: str | None
    rows: int
    validations: dict[str, Validation]
    about: dict[str, Any]


def write_calibration(path: Path, fit: Fit, about: dict[str, Any]) -> None:
    """Write atomically: a calibration half written must never be read as one."""
    document = {
        "format": FORMAT,
        "classes": list(fit.classes),
        "chosen": fit.chosen,
        "prior": list(fit.correction.prior) if fit.correction and fit.correction.prior else None,
        "temperature": fit.correction.temperature if fit.correction else 1.0,
        "rows": fit.rows,
        "validations": {name: vars(validation) for name, validation in fit.validations.items()},
        "about": about,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(path, lambda out: out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n"))


def read_calibration(path: Path) -> StoredCalibration:  # noqa: C901  one check per field of the file, in order
    """The calibration in ``path``, every field checked; a damaged file is an error that says how to mend it."""

    def damaged(why: str) -> UsageError:
        return UsageError(f"the calibration file {path} is damaged ({why}); run localjudge calibrate again")

    try:
        if path.stat().st_size > MAX_BYTES:
            raise damaged(f"over {MAX_BYTES} bytes")
        document = bounded_json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise damaged(f"not JSON: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read the calibration file {path}: {exc.strerror or exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise damaged(f"not a format {FORMAT} calibration")
    classes = document.get("classes")
    if not (isinstance(classes, list) and len(classes) >= 2 and all(isinstance(c, str) for c in classes)):
        raise damaged("classes must be a list of two or more value texts")
    if len(set(classes)) != len(classes):
        raise damaged("classes repeat")
    for text in classes:
        if not _scalar_text(text):
            raise damaged(f'class {clip(repr(text), 40)} is not the JSON text of a verdict (like true, 0.5 or "A")')
    chosen, prior, temperature = document.get("chosen"), document.get("prior"), document.get("temperature")
    if chosen is not None and chosen not in CANDIDATES:
        raise damaged(f"chosen must be one of {', '.join(CANDIDATES)}, or null")
    if chosen is not None and CANDIDATES[chosen][0] != (prior is not None):
        raise damaged(
            f"{chosen} {'divides out' if CANDIDATES[chosen][0] else 'has no'} prior, and prior says otherwise"
        )
    if prior is not None and not (
        isinstance(prior, list) and len(prior) == len(classes) and all(_finite(p) and 0 < p <= 1 for p in prior)
    ):
        raise damaged("prior must hold one probability above 0 per class")
    if not (_finite(temperature) and _TEMPERATURES[0] <= temperature <= _TEMPERATURES[1]):
        raise damaged(f"temperature must be a number from {_TEMPERATURES[0]} to {_TEMPERATURES[1]}")
    rows = document.get("rows")
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
        raise damaged("rows must be a count")
    validations = {}
    if not isinstance(document.get("validations"), dict):
        raise damaged("validations must map each candidate to its figures")
    for name, figures in document["validations"].items():
        if not (
            isinstance(figures, dict)
            and set(figures) == set(Validation.__dataclass_fields__)
            and all(_finite(value) for value in figures.values())
        ):
            raise damaged(f"the figures of {name!r} are not before/after ECE and accuracy over folds")
        validations[name] = Validation(**figures)
    correction = Correction(tuple(classes), tuple(prior) if prior else None, float(temperature)) if chosen else None
    found = document.get("about")
    about: dict[str, Any] = found if isinstance(found, dict) else {}
    return StoredCalibration(correction, chosen, rows, validations, about)


def _finite(value: Any) -> TypeGuard[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer past any float
        return False


def _scalar_text(text: str) -> bool:
    """Whether ``text`` is the JSON of one verdict value: a boolean, a finite number or a string."""
    try:
        value = bounded_json.loads(text, max_depth=0, allow_nan=False)
    except json.JSONDecodeError:
        return False
    return isinstance(value, (bool, str)) or _finite(value)
