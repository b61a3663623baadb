"""``calibrate``: fit a correction of one local judge's probabilities on labelled rows."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from .commands.settings import JudgeSettings
from .options import CHECKLIST, LIKELIHOOD, data_options, judge_options, without_options
from .output import handle_errors

if TYPE_CHECKING:
    from .._trust.correction import Fit
    from .._trust.fit import Samples

__all__ = ["calibrate", "describe_fit"]


@click.command()
@data_options
@click.option("--label-field", default="label", show_default=True, help="The column with each row's human label.")
@click.option("--pairwise", is_flag=True, help="The rows are pairs (outputs_a, outputs_b), labelled A or B.")
@LIKELIHOOD
@CHECKLIST
@click.option("--folds", type=click.IntRange(min=2, max=20), default=5, show_default=True, help="Cross-validation.")
@judge_options
@handle_errors
def calibrate(
    data: Path,
    label_field: str,
    file_format: Optional[str],
    mapping: Optional[str],
    id_field: str,
    concurrency: int,
    folds: int,
    no_cache: bool,
    settings: JudgeSettings,
) -> None:
    """Fit a correction of the judge's probabilities on labelled rows, for this model and prompt.

    The judge scores every labelled row and a content-free input; contextual
    calibration and temperature scaling are cross-validated, and the best is
    kept only if held-out calibration error and accuracy do not get worse.
    Score with --calibrated and the same options to apply it.

    \b
    localjudge calibrate labelled.jsonl --label-field human
    localjudge calibrate labelled.csv --map outputs=answer --evaluator correctness -j 2
    localjudge calibrate pairs.jsonl --pairwise && localjudge compare ... --calibrated
    localjudge calibrate pairs.jsonl --pairwise --likelihood   # a temperature for the gains; no content-free input
    """
    from .._datasets.progress import RunProgress
    from .commands.runs import plan_calibration

    plan = plan_calibration(
        settings,
        data,
        label_field=label_field,
        pairwise=settings.pairwise,
        file_format=file_format,
        mapping=mapping,
        id_field=id_field,
        concurrency=concurrency,
        folds=folds,
        use_cache=not no_cache,
    )
    with RunProgress(len(plan.rows)) as progress:
        result = plan.run(on_record=progress.advance)
    click.echo(describe_fit(result.fit, result.samples, where=result.path))


# one local model's own verdicts are fitted: plan_calibration refuses these for a caller of the library too
without_options(calibrate, "ensemble", "base_urls", "fallbacks", "calibrated", "output_schema")


def describe_fit(fit: Fit, samples: Samples, *, where: Any) -> str:
    """What the fit found, in a few lines: held-out figures before and after each correction, and what was kept."""
    before = next(iter(fit.validations.values()))
    lines = [
        f"{fit.rows} readouts from {len(set(samples.groups))} labelled rows "
        f"({samples.without_readout} rows gave none); "
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
