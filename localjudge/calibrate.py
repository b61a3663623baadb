"""Fitting a judge's calibration on labelled rows, and finding it again when the same judge scores.

A correction belongs to one model judging with one prompt: the same model
with another prompt has other biases. :func:`calibration_key` names that
pair from the evaluator itself (the model's identity and the request it
builds), so ``localjudge calibrate`` and ``--calibrated`` agree on which
file is meant without the user naming one.

The content-free readout is the judge shown the placeholders of "calibrate
before use" (Zhao et al., 2021) in every field: whatever it prefers then,
it prefers before reading anything. For a pair, its two orders are two
readouts by position, so the prior is a preference for a position.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .agreement import label_text
from .calibration import Fit, choose_correction, verdict_classes
from .clients.cached import cache_identity
from .errors import UsageError
from .prompting import template_fields

__all__ = [
    "CONTENT_FREE",
    "Samples",
    "calibration_key",
    "content_free_prior",
    "content_free_values",
    "describe_fit",
    "fit_calibration",
    "labelled_samples",
    "mean_readout",
]

#: the placeholders shown in every field for the content-free readout
CONTENT_FREE = ("N/A", "[MASK]", "")
_SWAP = {'"A"': '"B"', '"B"': '"A"', '"tie"': '"tie"'}


def calibration_key(evaluator: Any) -> str:
    """Which calibration file is this evaluator's: its model's identity and the request it builds, hashed."""
    core = evaluator.core
    identity = cache_identity(core.client)
    if identity is None:
        raise UsageError("this judge cannot say which model answers, so no calibration can be kept for it")
    fields = set(template_fields(core.prompt)) if isinstance(core.prompt, str) else set()
    placeholders = {name: f"{{{name}}}" for name in fields | {"inputs", "outputs", "reference_outputs"}}
    request = core.build_request(None, None, None, placeholders)
    text = json.dumps({"model": identity, "request": request}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verdict_field(pairwise: bool) -> str:
    return "winner" if pairwise else "score"


def classes_of(evaluator: Any, pairwise: bool) -> tuple[str, ...]:
    classes = verdict_classes(evaluator.core.schema.json_schema, verdict_field(pairwise))
    if classes is None:
        raise UsageError("calibration is for verdicts with a fixed set of values: drop --continuous")
    return classes


@dataclass(frozen=True)
class Samples:
    """Readouts over the classes, with each one's label (an index into the classes)."""

    probabilities: list[list[float]]
    labels: list[int]
    skipped: int  # labelled rows without a readout (failed, or no probabilities)


def _readouts(result: Mapping[str, Any], pairwise: bool) -> list[dict[str, float]] | None:
    """A result's readouts as value text -> probability: one, or a pair's two by position."""
    metadata = result.get("metadata") if isinstance(result.get("metadata"), Mapping) else {}
    if pairwise:
        orders = metadata.get("order_probabilities")
        if not (isinstance(orders, list) and len(orders) == 2):
            return None
        return [{json.dumps(side): float(p) for side, p in order.items()} for order in orders]
    probabilities = metadata.get("probabilities")
    return [dict(probabilities)] if isinstance(probabilities, Mapping) else None


def labelled_samples(
    records: Iterable[Mapping[str, Any]], labels: Mapping[str, Any], classes: Sequence[str], *, pairwise: bool
) -> Samples:
    """The readouts of the labelled results; a pair gives two, its second order's label swapped to its position."""
    by_text = {label_text(json.loads(name)): index for index, name in enumerate(classes)}
    if set(by_text) == {"true", "false"}:
        by_text.update({"1": by_text["true"], "0": by_text["false"]})
    if pairwise:
        by_text.update({name.lower(): index for name, index in list(by_text.items())})
    probabilities, indices, skipped = [], [], 0
    for record in records:
        row_id = str(record.get("id"))
        if row_id not in labels:
            continue
        label = label_text(labels[row_id])
        index = by_text.get(label.lower() if pairwise else label)
        if index is None:
            raise UsageError(
                f"row {row_id}: the label {labels[row_id]!r} is none of this judge's values "
                f"({', '.join(json.loads(c) if pairwise else c for c in classes)})"
            )
        readouts = _readouts(record["result"], pairwise) if isinstance(record.get("result"), Mapping) else None
        if readouts is None:
            skipped += 1
            continue
        for order, readout in enumerate(readouts):
            position = index if order == 0 else classes.index(_SWAP[classes[index]])
            probabilities.append([readout.get(name, 0.0) for name in classes])
            indices.append(position)
    return Samples(probabilities, indices, skipped)


def content_free_values(variables: Iterable[str], pairwise: bool) -> list[dict[str, str]]:
    """One set of values per placeholder, for the fields a labelled row fills."""
    fields = set(variables) | ({"outputs_a", "outputs_b"} if pairwise else {"outputs"})
    return [{name: placeholder for name in sorted(fields)} for placeholder in CONTENT_FREE]


def content_free_prior(
    evaluator: Callable[..., Any], variables: Iterable[str], classes: Sequence[str], *, pairwise: bool
) -> list[float]:
    """The judge's mean readout over the content-free inputs (both orders of each for a pair)."""
    results = [evaluator(**values) for values in content_free_values(variables, pairwise)]
    return mean_readout(results, classes, pairwise=pairwise)


def mean_readout(results: Iterable[Mapping[str, Any]], classes: Sequence[str], *, pairwise: bool) -> list[float]:
    """The mean over results' readouts (each order of a pair counts as one) of each class's probability."""
    readouts = []
    for result in results:
        found = _readouts(result, pairwise)
        if found is None:
            raise UsageError(
                "the judge gave no probabilities for its verdict: calibration needs a local model "
                "(gguf:, hf:, outlines:), not a server"
            )
        readouts += found
    return [sum(readout.get(name, 0.0) for readout in readouts) / len(readouts) for name in classes]


def fit_calibration(samples: Samples, classes: Sequence[str], prior: Sequence[float] | None, *, folds: int) -> Fit:
    import numpy as np

    if len(set(samples.labels)) < 2:
        raise UsageError("the labelled rows hold one label only: calibration needs examples of at least two verdicts")
    return choose_correction(np.array(samples.probabilities), samples.labels, classes, prior=prior, folds=folds)


def describe_fit(fit: Fit, *, skipped: int, where: Any) -> str:
    """The fit in a few lines: each candidate's held-out figures, then what was kept and where."""
    before = next(iter(fit.validations.values()))
    lines = [
        f"{fit.rows} readouts from labelled rows ({skipped} rows without one); "
        f"held out over {before.folds} folds, uncorrected: ECE {before.before_ece:.3f}, "
        f"accuracy {before.before_accuracy:.3f}"
    ]
    if fit.prior is not None:
        shown = ", ".join(f"{name} {p:.3f}" for name, p in zip(fit.classes, fit.prior, strict=True))
        lines.append(f"content-free readout (the judge's bias before reading anything): {shown}")
    for name, validation in fit.validations.items():
        verdict = "kept" if name == fit.chosen else ("would help" if validation.keep else "hurts: dropped")
        lines.append(
            f"  {name:<26} ECE {validation.after_ece:.3f}, accuracy {validation.after_accuracy:.3f}  ({verdict})"
        )
    if fit.correction is None:
        lines.append(f"no correction helped on held-out rows: none will be applied (recorded in {where})")
    else:
        lines.append(
            f"kept {fit.chosen} (temperature {fit.correction.temperature:.3f}) in {where}; "
            "apply it with --calibrated and the same model and prompt options"
        )
    return "\n".join(lines)


def stored_correction(evaluator: Any, pairwise: bool) -> tuple[Any, str]:
    """The correction ``localjudge calibrate`` kept for this evaluator (None if none helped), and a note on it."""
    from .calibration_file import calibration_path, read_calibration

    path = calibration_path(calibration_key(evaluator))
    if not path.is_file():
        raise UsageError(
            "--calibrated: no calibration was fitted for this judge (this model with this prompt and these "
            "options); fit one first: localjudge calibrate LABELLED.jsonl with the same options"
        )
    stored = read_calibration(path)
    if stored.correction is None:
        return None, f"the calibration fitted for this judge ({path}) was not kept: it did not help on held-out rows"
    return stored.correction, f"calibrated: {stored.chosen} ({path})"
