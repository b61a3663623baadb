"""``score`` and ``compare``: judge one output, or two against each other, given on the command line."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import click

from ..errors import OptionError
from .commands.judging import evaluator_from_settings
from .commands.settings import JudgeSettings
from .options import TEXT_FORMS, judge_options, model_options, pair_options, parse_vars, prompt_options, text
from .output import echo_json, handle_errors

__all__ = ["compare", "note", "score"]


def note(message: str) -> None:
    """A note from the library (which calibration was applied), on stderr."""
    click.echo(message, err=True)


def note_way(evaluator: object, *, pair: bool) -> None:
    """Which way judges, on stderr: a verdict means little without it."""
    way = getattr(evaluator, "way", None)
    if way is not None:
        note(f"way: {way.label} ({way.describe(pair=pair)}); --way plain asks as OpenEvals does")


def note_empty(answers: dict[str, Optional[str]]) -> None:
    """An empty answer is judged as given, and said to be empty: a small judge may well call it right."""
    for flag, value in answers.items():
        if value is not None and not value.strip():
            note(f"note: {flag} is empty; the judge is shown an empty answer, which a small judge may call right")


@click.command()
@click.option("--inputs", callback=text, help="The input the evaluated application received." + TEXT_FORMS)
@click.option("--outputs", callback=text, help="The output to judge." + TEXT_FORMS)
@click.option("--reference-outputs", callback=text, help="A reference answer to compare against." + TEXT_FORMS)
@click.option(
    "--var",
    "variables",
    multiple=True,
    callback=parse_vars,
    metavar="KEY=VALUE",
    help="Extra template variable (repeatable).",
)
@judge_options
@handle_errors
def score(
    inputs: Optional[str],
    outputs: Optional[str],
    reference_outputs: Optional[str],
    variables: dict[str, str],
    settings: JudgeSettings,
) -> None:
    """Score one output and print the result as JSON.

    \b
    localjudge score --inputs "What is 2+2?" --outputs 4
    localjudge score --outputs @answer.txt --reference-outputs @gold.txt --continuous
    echo "4" | localjudge score --inputs "2+2?" --outputs - -m qwen2.5-coder-1.5b-instruct
    localjudge score --prompt "Is {outputs} polite?" --outputs "Thanks!" --no-reasoning
    """
    if settings.prompt is None and settings.prompt_file is None and outputs is None:
        raise OptionError("Nothing to judge: pass {outputs} (and usually {inputs})")
    note_empty({"--outputs": outputs})
    evaluator = evaluator_from_settings(
        settings, has_inputs=inputs is not None, has_reference=reference_outputs is not None, notify=note
    )
    note_way(evaluator, pair=False)
    echo_json(evaluator(inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables))


@click.command()
@click.option("--inputs", callback=text, help="The request both outputs answer." + TEXT_FORMS)
@click.option("--output-a", "outputs_a", required=True, callback=text, help="The first output." + TEXT_FORMS)
@click.option("--output-b", "outputs_b", required=True, callback=text, help="The second output." + TEXT_FORMS)
@click.option("--reference-outputs", callback=text, help="A reference answer both are measured against." + TEXT_FORMS)
@pair_options
@prompt_options(pairs=True)
@model_options
@handle_errors
def compare(
    inputs: Optional[str],
    outputs_a: str,
    outputs_b: str,
    reference_outputs: Optional[str],
    settings: JudgeSettings,
) -> None:
    """Say which of two outputs is better, asking in both orders (--pointwise: of each alone; --likelihood:
    asking nothing); print the result as JSON.

    The score is 1.0 when A is better, 0.0 when B is, 0.5 for a tie or when
    the two orders disagree (metadata.consistent is then false).

    \b
    localjudge compare --inputs "Name a prime." --output-a 7 --output-b 8
    localjudge compare --output-a @a.txt --output-b @b.txt --allow-ties --no-reasoning
    localjudge compare --inputs @q.txt --output-a @a.txt --output-b @b.txt --on-disagreement probabilities
    """
    settings = replace(settings, pairwise=True).with_parallel_for(1)  # the two orders, decoded side by side
    note_empty({"--output-a": outputs_a, "--output-b": outputs_b})
    evaluator = evaluator_from_settings(
        settings, has_inputs=inputs is not None, has_reference=reference_outputs is not None, notify=note
    )
    note_way(evaluator, pair=True)
    echo_json(evaluator(inputs=inputs, outputs_a=outputs_a, outputs_b=outputs_b, reference_outputs=reference_outputs))
