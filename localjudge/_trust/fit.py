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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .._clients.cached import cache_identity
from .._prompts.prompting import SWAP, template_fields
from ..errors import NoCalibrationError, UsageError
from .agreement import label_text
from .correction import Fit, choose_correction, gain_readout, value_key

if TYPE_CHECKING:
    from .correction import Correction

__all__ = [
    "CONTENT_FREE",
    "Samples",
    "calibration_key",
    "content_free_prior",
    "content_free_values",
    "fit_calibration",
    "label_index",
    "labelled_samples",
    "mean_readout",
]

#: the placeholders shown in every field for the content-free readout
CONTENT_FREE = ("N/A", "[MASK]", "")


def calibration_key(evaluator: Any) -> str:
    """Which calibration file is this evaluator's (or judge core's): its model's identity and the request it builds, hashed."""
    core = getattr(evaluator, "core", evaluator)
    identity = cache_identity(core.client)
    if identity is None:
        raise NoCalibrationError("this judge cannot say which model answers, so no calibration can be kept for it")
    identity = {name: value for name, value in identity.items() if name != "decoder"}  # outlives a release
    if getattr(core, "reads_replies", False):  # a likelihood pair: what it reads depends on its system message alone
        return _digest({"model": identity, "likelihood": {"system": core.system}})
    fields = set(template_fields(core.prompt)) if isinstance(core.prompt, str) else set()
    placeholders = {name: f"{{{name}}}" for name in fields | {"inputs", "outputs", "reference_outputs"}}
    request = core.build_request(None, None, None, placeholders)
    document: dict[str, Any] = {"model": identity, "request": request}
    if core.self_reference is not None:  # a reference the judge writes itself is not one a row gives
        document["self_reference"] = core.self_reference.request(placeholders["inputs"], core.model)
    if core.checklist is not None:  # so are checks the judge writes itself
        document["checklist"] = core.checklist.request(placeholders["inputs"], core.model)
    return _digest(document)


def _digest(document: Mapping[str, Any]) -> str:
    text = json.dumps(document, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def label_index(label: Any, classes: Sequence[str], *, pairwise: bool) -> int | None:
    """Which of the classes a human label names (None: the row is unlabelled); an error for anything else.

    Labels read as ``agreement`` reads them: 1 and 0 for true and false, A and B in any case.
    """
    if label is None or (isinstance(label, str) and not label.strip()) or (isinstance(label, float) and label != label):
        return None
    by_text = {label_text(json.loads(name)): index for index, name in enumerate(classes)}
    if set(by_text) == {"true", "false"}:
        by_text.update({"1": by_text["true"], "0": by_text["false"]})
    text = label_text(label)
    index = by_text.get(text.upper() if pairwise and text.lower() in ("a", "b") else text)
    if index is None:
        shown = ", ".join(label_text(json.loads(name)) for name in classes)
        raise UsageError(f"the label {label!r} is none of this judge's values ({shown})")
    return index


@dataclass(frozen=True)
class Samples:
    """Readouts over the classes, each one's label (an index into the classes) and its row (a pair gives two)."""

    probabilities: list[list[float]]
    labels: list[int]
    groups: list[int]
    without_readout: int  # labelled rows that gave none (failed, or no probabilities)


def _readouts(result: Mapping[str, Any], pairwise: bool) -> list[dict[str, float]] | None:
    """A result's readouts as value text -> probability: one, or a pair's two by position."""
    found = result.get("metadata")
    metadata: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    if pairwise and isinstance(metadata.get("likelihood_gain"), Mapping):  # a pair read by likelihood
        readout = gain_readout(metadata["likelihood_gain"])
        # mirrored, as if asked the other way round: no side can then be preferred, so the fit rescales the gains only
        return [readout, {'"A"': readout['"B"'], '"B"': readout['"A"']}]
    if pairwise:
        orders = metadata.get("order_probabilities")
        if not (isinstance(orders, list) and len(orders) == 2):
            return None
        return [{json.dumps(side): float(p) for side, p in order.items()} for order in orders]
    probabilities = metadata.get("probabilities")
    return [dict(probabilities)] if isinstance(probabilities, Mapping) else None


def _row(readout: Mapping[str, float], classes: Sequence[str]) -> list[float]:
    given = {value_key(text): float(p) for text, p in readout.items()}
    return [given.get(value_key(name), 0.0) for name in classes]


def labelled_samples(
    records: Iterable[Mapping[str, Any]], labels: Mapping[str, int], classes: Sequence[str], *, pairwise: bool
) -> Samples:
    """The readouts of labelled results (``labels``: id -> class index, see :func:`label_index`).

    A pair gives two, one per order, each labelled by position: the caller's
    A was shown second in the second order.
    """
    probabilities, indices, groups, without_readout = [], [], [], 0
    for number, record in enumerate(records):
        index = labels.get(str(record.get("id")))
        if index is None:
            continue
        readouts = _readouts(record["result"], pairwise) if isinstance(record.get("result"), Mapping) else None
        if readouts is None:
            without_readout += 1
            continue
        for order, readout in enumerate(readouts):
            probabilities.append(_row(readout, classes))
            swapped = json.dumps(SWAP[json.loads(classes[index])]) if order else classes[index]
            indices.append(classes.index(swapped))
            groups.append(number)
    return Samples(probabilities, indices, groups, without_readout)


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
    rows = []
    for result in results:
        found = _readouts(result, pairwise)
        if found is None:
            raise UsageError(
                "the judge gave no probabilities for its verdict: calibration needs a local model "
                "(the default, a GGUF file or an hf: model), not a server"
            )
        rows += [_row(readout, classes) for readout in found]
    if not rows:
        raise UsageError("no results to average: the content-free input was never answered")
    return [sum(column) / len(rows) for column in zip(*rows, strict=True)]


def fit_calibration(
    samples: Samples,
    classes: Sequence[str],
    prior: Sequence[float] | None,
    *,
    folds: int,
    only: Sequence[str] | None = None,
) -> Fit:
    """The correction to keep, weighed on the samples (``only``: these candidates, of :data:`CANDIDATES`)."""
    if not samples.labels:
        raise UsageError(
            f"none of the labelled rows gave a readout ({samples.without_readout} failed or gave no "
            "probabilities): nothing to fit on"
        )
    if len(set(samples.labels)) < 2:
        raise UsageError("the labelled rows hold one label only: calibration needs examples of at least two verdicts")
    return choose_correction(
        np.array(samples.probabilities),
        samples.labels,
        classes,
        prior=prior,
        folds=folds,
        groups=samples.groups,
        only=only,
    )


def stored_correction(evaluator: Any) -> tuple[Optional[Correction], str]:
    """The correction kept for this evaluator or judge core (None if none helped), and a note on it.

    The user's own fit (``localjudge calibrate``) wins; without one, a fit
    that ships with localjudge for the same judge (:func:`shipped_calibration`).
    """
    from .calibration_file import calibration_path, read_calibration

    key = calibration_key(evaluator)
    path = calibration_path(key)
    if not path.is_file():
        shipped = shipped_calibration(key)
        if shipped is not None:
            stored = read_calibration(shipped)
            where = f"shipped with localjudge, fitted on {stored.about.get('data', 'labelled rows')}"
            return stored.correction, f"calibrated: {stored.chosen} ({where}; localjudge calibrate fits your own)"
        raise NoCalibrationError(
            "{calibrated:calibration='stored'}: no calibration was fitted for this judge. A calibration belongs to one local model "
            "and one prompt: the same {model}, prompt options ({prompt}, {evaluator}, {system}, {reasoning}, "
            "{choices}, {self_reference}, {checklist}, ...) and the same fields (whether {inputs} and {reference_outputs} are given). Fit one "
            "with: localjudge calibrate LABELLED.jsonl (with {pairwise} for compare, and {likelihood} for pairs read by "
            "likelihood) and those options"
        )
    stored = read_calibration(path)
    if stored.correction is None:
        return None, f"the calibration fitted for this judge ({path}) was not kept: it did not help on held-out rows"
    return stored.correction, f"calibrated: {stored.chosen} ({path})"


#: fits that ship with the package, named as the cache's are: for the default judge's own prompts
SHIPPED = Path(__file__).with_name("shipped")


def shipped_calibration(key: str) -> Path | None:
    """The shipped fit for the judge ``key`` names, if there is one (``make calibrations`` writes them)."""
    path = SHIPPED / f"{key}.json"
    return path if path.is_file() else None
