"""The options several commands share, each declared once and applied as a decorator.

- :func:`model_options`: which judge model, and how a local one loads (the
  model flags come from the registry in :mod:`localjudge._specs`); it hands
  the command every judge option it was given, and the defaults of the rest,
  as one ``settings`` (a :class:`~localjudge._cli.commands.settings.JudgeSettings`);
- :func:`prompt_options`: the prompt, system message, examples, key and
  calibration, for one output or for pairs;
- :func:`judge_options`: those two and the shape of a single output's score;
- :func:`data_options`: a data file's format, column map, ids, rows in
  flight and the result cache;
- :func:`pair_options`: ties and what to do when a pair's two orders disagree;
- :func:`labels_options`: the human labels a run is measured against.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

import click

from .._specs import ModelOptions, Option
from .._specs.registry import command_line_options
from .commands.settings import JudgeSettings, WayFlags

__all__ = [
    "CALIBRATED",
    "CHECKLIST",
    "CONCURRENCY",
    "LIKELIHOOD",
    "NO_CACHE",
    "ON_DISAGREEMENT",
    "POINTWISE",
    "REASONING",
    "SELF_REFERENCE",
    "TEXT_FORMS",
    "WAY",
    "data_options",
    "judge_options",
    "labels_options",
    "model_options",
    "pair_options",
    "parse_choices",
    "parse_vars",
    "prompt_options",
    "text",
    "without_options",
]

Decorator = Callable[[Any], Any]
FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _apply(command: Callable[..., Any], options: Sequence[Decorator]) -> Callable[..., Any]:
    """``options`` applied so that ``--help`` lists them in this order."""
    for option in reversed(options):
        command = option(command)
    return command


def parse_choices(_ctx: Any, _param: Any, value: Optional[str]) -> Optional[list[float]]:
    if value is None:
        return None
    try:
        return [float(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, like 0,0.5,1; got {value!r}") from None


def parse_vars(_ctx: Any, _param: Any, values: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}")
        parsed[key.strip()] = value
    return parsed


TEXT_FORMS = " '-' reads standard input, '@FILE' a file ('@@' for a text that starts with @)."
MAX_TEXT_BYTES = 8 << 20  # a text to judge; past this it is a mistake (a model file, a log), not an answer


def text(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    """A text option's value: as given, or standard input (``-``) or a file's text (``@FILE``).

    Both lose one final newline, as the shell's ``$(...)`` does: a file or a
    piped ``echo`` ends its text with one, which is not part of the answer.
    """
    if value is None or not (value == "-" or value.startswith("@")):
        return value
    if value.startswith("@@"):
        return value[1:]
    if value == "-":
        first = ctx.meta.setdefault("localjudge.stdin", param.opts[0])
        if first != param.opts[0]:
            raise click.BadParameter(f"standard input (-) already feeds {first}")
        if sys.stdin.isatty():
            raise click.BadParameter("- reads standard input, and nothing is piped into it")
        try:
            read = sys.stdin.read(MAX_TEXT_BYTES + 1)
        except UnicodeDecodeError as exc:  # where stdin decodes strictly; else its bytes arrive as surrogates
            raise click.BadParameter(
                f"standard input is not UTF-8 (byte {exc.start + 1}); give text in UTF-8"
            ) from None
        if len(read) > MAX_TEXT_BYTES:
            raise click.BadParameter(f"standard input holds more than {MAX_TEXT_BYTES} characters")
    else:
        if value == "@":
            raise click.BadParameter("@ needs a file name (@answer.txt); @@ starts a text with @")
        path = Path(value[1:]).expanduser()
        if not path.exists() or path.is_dir():
            raise click.BadParameter(f"{value}: no file {path} (write @@ for a text that starts with @)")
        with path.open("rb") as handle:  # a pipe (@/dev/stdin, @<(cmd)) has no size to ask beforehand
            data = handle.read(MAX_TEXT_BYTES + 1)
        if len(data) > MAX_TEXT_BYTES:
            raise click.BadParameter(f"{value} is over {MAX_TEXT_BYTES} bytes")
        try:
            read = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise click.BadParameter(f"{value} is not UTF-8 (line {line}); save it as UTF-8") from None
    return read[:-1] if read.endswith("\n") else read


MODEL_HELP = (
    "Judge model spec: default, tiny, a card name, PATH.gguf, hf:DIR or hf:FILE.gguf, or "
    "openai:NAME (when not given: $LOCALJUDGE_MODEL, else default)."
)
_ENSEMBLE_HELP = " Repeat it with --ensemble for several judges."


def model_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Which judge model, and how a local one is loaded (each option refused where it does not apply)."""
    return _apply(
        _one_judge_or_an_ensemble(command),
        [
            click.option(
                "--model",
                "-m",
                "model_specs",
                multiple=True,
                help=MODEL_HELP + _ENSEMBLE_HELP,
            ),
            click.option(
                "--ensemble",
                is_flag=True,
                help="Ask every --model and combine their verdicts (a vote, or the mean and spread of scores).",
            ),
            click.option(
                "--base-url",
                "base_urls",
                multiple=True,
                metavar="URL",
                help="Server URL for openai:NAME specs (else $OPENAI_BASE_URL, $LOCALJUDGE_BASE_URL, OpenAI's API). "
                "Repeat it for a pool of servers of the model: requests spread over them and move on when one fails.",
            ),
            click.option(
                "--fallback",
                "fallbacks",
                multiple=True,
                metavar="SPEC",
                help="Try this model spec when the one before fails (repeatable).",
            ),
            *map(_model_flag, command_line_options()),
        ],
    )


def without_options(command: click.Command, *names: str) -> click.Command:
    """The command without the shared options it can never take, so that ``--help`` does not offer them."""
    unknown = set(names) - {param.name for param in command.params}
    assert not unknown, f"{command.name} has no options {sorted(unknown)}"
    command.params = [param for param in command.params if param.name not in names]
    if "ensemble" in names:  # --model can then be given once only: its help must not say to repeat it
        (model,) = [param for param in command.params if param.name == "model_specs"]
        assert isinstance(model, click.Option)
        model.help = MODEL_HELP
    return command


def _model_flag(option: Option) -> Decorator:
    """The click option for a declared model option; not given, it passes None (the engine's default)."""
    assert option.flag is not None  # command_line_options() gives only options with a flag
    if option.type is bool:  # the flag sets the opposite of the default: --no-format-instructions
        return click.option(option.flag, option.name, flag_value=not option.default, default=None, help=option.help)
    kind: Any = option.type
    if option.type is int and option.minimum is not None:
        kind = click.IntRange(min=option.minimum)
    return click.option(option.flag, option.name, type=kind, metavar=option.metavar, help=option.help)


#: the parameters of a command that are judge options: they go into its ``settings``
SETTINGS_FIELDS = frozenset(f.name for f in dataclasses.fields(JudgeSettings))
#: those that pick a way of judging flag by flag: they go into its ``way_flags``
WAY_FLAG_FIELDS = frozenset(f.name for f in dataclasses.fields(WayFlags))


def _one_judge_or_an_ensemble(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--model`` given once, or several times with ``--ensemble``: ``model_spec`` and ``ensemble_specs``.

    The model flags given become one ``model_options`` (:class:`~localjudge._specs.ModelOptions`), and
    those with every other judge option the command takes one ``settings`` (:class:`JudgeSettings`).
    """
    names = [option.name for option in command_line_options()]

    @functools.wraps(command)
    def wrapper(*args: Any, model_specs: tuple[str, ...], ensemble: bool = False, **kwargs: Any) -> Any:
        from .._clients.resolve import default_model_spec

        model_specs = model_specs or (default_model_spec(),)
        if len(model_specs) > 1 and not ensemble:
            takes_ensemble = any(param.name == "ensemble" for param in click.get_current_context().command.params)
            advice = "add --ensemble to combine their verdicts" if takes_ensemble else "this command takes one judge"
            raise click.UsageError(f"--model is given more than once: {advice}")
        if ensemble and len(model_specs) < 2:
            raise click.UsageError("--ensemble needs two or more --model")
        flags = {name: kwargs.pop(name) for name in names}
        options = ModelOptions.of({name: value for name, value in flags.items() if value is not None})
        given = {name: kwargs.pop(name) for name in SETTINGS_FIELDS & kwargs.keys()}
        way_flags = WayFlags(**{name: kwargs.pop(name) for name in WAY_FLAG_FIELDS & kwargs.keys()})
        settings = JudgeSettings(
            model_spec=model_specs[0],
            ensemble_specs=model_specs[1:],
            model_options=options,
            way_flags=way_flags,
            **given,
        )
        return command(*args, settings=settings, **kwargs)

    return wrapper


ON_DISAGREEMENT = click.option(
    "--on-disagreement",
    type=click.Choice(["tie", "probabilities"]),
    help="Pairs: when the two orders disagree, a tie (the default), or the side the judge found likelier over "
    "both orders (local models).",
)
POINTWISE = click.option(
    "--pointwise",
    is_flag=True,
    help="Pairs: ask of each output alone whether it does what was asked, instead of showing both; the output "
    "the judge finds likelier to do so wins (no position to prefer).",
)
LIKELIHOOD = click.option(
    "--likelihood",
    is_flag=True,
    help="Pairs: ask nothing; score each output as the model's own reply to the instruction, and the one the "
    "instruction makes likelier (per token, against no instruction) wins. Local models.",
)
SELF_REFERENCE = click.option(
    "--self-reference",
    is_flag=True,
    help="Without a reference, the judge answers the question itself first and judges against its own "
    "answer (shown in the result's metadata).",
)


CHECKLIST = click.option(
    "--checklist",
    is_flag=True,
    help="Pairs: the judge first writes yes/no questions a response must pass to do what the request asks, "
    "and judges with them in view (kept in the result's metadata as checklist). A row's own checks "
    "column, one question per line, is shown instead and nothing is written.",
)


REASONING = click.option(
    "--reasoning/--no-reasoning",
    default=False,
    help="Ask the judge to explain its verdict too (a local judge decodes the verdict first, then the explanation). "
    "Default: the verdict only, measured as right and 3 to 6 times faster.",
)


class WayName(click.ParamType):
    """A way of judging by name, looked up when the command runs: a pair method registered by then is one too."""

    name = "way"

    def get_metavar(self, param: click.Parameter, ctx: Optional[click.Context] = None) -> str:
        # click 8.1 (which pyproject allows) passes the parameter alone; 8.2 on, the context too
        from .._judges.ways import WAYS

        return "[" + "|".join(WAYS) + "]"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        from .._judges.ways import WAYS

        return [CompletionItem(name) for name in WAYS if name.startswith(incomplete)]

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        from .._judges.ways import WAYS, Way

        if isinstance(value, Way):
            return value
        way = WAYS.get(value)
        if way is None:
            self.fail(f"{value!r} is not a way of judging; the ways: {', '.join(WAYS)}", param, ctx)
        return way


WAY = click.option(
    "--way",
    type=WayName(),
    help="How the judge is asked, by name (default: the way measured best for the question; "
    "the flags below pick one too): plain is OpenEvals' own.",
)
SCREEN = click.option(
    "--screen",
    type=click.Choice(["full", "strip", "neutralise", "content-free", "off"]),
    help="What is changed in the judged answer before the judge reads it. full (the default for whether an "
    "answer is right): invisible characters removed, markup shown in look-alike brackets, the parts that "
    "address the judge taken out, and an answer with nothing left to judge false without asking; strip: all "
    "but the last; neutralise: the first two; content-free: only the last; off: as given (the default for a "
    "prompt or evaluator of another question). Either way a result whose answer addressed the judge says so "
    "(metadata.addresses_judge).",
)
CALIBRATED = click.option(
    "--calibrated",
    is_flag=True,
    help="Correct the verdict's probabilities with what localjudge calibrate kept for this model and prompt.",
)
CONCURRENCY = click.option(
    "--concurrency", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="Rows in flight at once."
)
NO_CACHE = click.option(
    "--no-cache", is_flag=True, help="Ask the model again even where the result cache has its answer."
)


def labels_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--labels``, ``--label-field`` and ``--id-field``: the human labels that runs are measured against."""
    labels = click.option(
        "--labels",
        "labels_file",
        required=True,
        type=FILE,
        help="Rows with an id and a label: a labels file, or the data file that was scored (JSONL, CSV, Parquet).",
    )
    field = click.option("--label-field", default="label", show_default=True, help="The labels' column.")
    ids = click.option(
        "--id-field", default="id", show_default=True, help="The labels' id column (else the row number)."
    )
    return _apply(command, [labels, field, ids])


def pair_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--allow-ties``, ``--on-disagreement``, ``--pointwise``, ``--likelihood`` and ``--checklist``: pairs only."""
    ties = click.option("--allow-ties", is_flag=True, help="Pairs: let the judge answer that neither is better (tie).")
    return _apply(command, [ties, ON_DISAGREEMENT, POINTWISE, LIKELIHOOD, CHECKLIST])


def prompt_options(*, pairs: bool = False) -> Decorator:
    """What the judge is asked and how: ``pairs`` for a judge of two outputs (help only)."""
    names = (
        "{inputs}, {outputs_a}, {outputs_b}, {reference_outputs}, {checks} (with --checklist)"
        if pairs
        else ("{inputs}, {outputs}, {reference_outputs} and other names")
    )
    shots = (
        "inputs, outputs_a, outputs_b, winner, reasoning"
        if pairs
        else ("inputs, outputs, score, reasoning (pairs: outputs_a, outputs_b, winner)")
    )
    return functools.partial(
        _apply,
        options=[
            click.option("--prompt", help=f"Prompt template with {names}."),
            click.option("--prompt-file", type=FILE, help="Read the prompt template from a file."),
            click.option("--evaluator", metavar="NAME", help="A ready-made evaluator (localjudge evaluators list)."),
            click.option("--system", help="System message placed before the prompt."),
            REASONING,
            click.option("--few-shot", type=FILE, help=f"JSONL file of judged examples: {shots}."),
            click.option(
                "--few-shot-first",
                is_flag=True,
                help="Put the examples before the prompt, so every row's prompt starts alike (a local model reuses it).",
            ),
            click.option(
                "--feedback-key",
                help="The result's key (default: preference)."
                if pairs
                else ("The result's key (default: score; preference for pairs)."),
            ),
            WAY,
            CALIBRATED,
            SELF_REFERENCE,
            *([] if pairs else [SCREEN]),  # a pair's answers are shown as given
        ],
    )


def judge_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options that shape the judge of one output (or, in ``batch``, of pairs), and its model."""
    shape = [
        click.option("--continuous", is_flag=True, help="Score from 0.0 to 1.0 instead of true/false."),
        click.option("--choices", callback=parse_choices, metavar="0,0.5,1", help="Allowed scores."),
        click.option("--output-schema", type=FILE, help="JSON schema file for a custom answer shape."),
    ]
    return model_options(prompt_options()(_apply(command, shape)))


def data_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """DATA, a file of rows, and how to read it; the rows in flight and the result cache."""
    return _apply(
        command,
        [
            click.argument("data", type=FILE),
            click.option(
                "--format",
                "file_format",
                type=click.Choice(["jsonl", "csv", "parquet"]),
                help="DATA's format (default: its suffix).",
            ),
            click.option(
                "--map", "mapping", metavar="VAR=COLUMN,...", help="Take prompt variables from these columns."
            ),
            click.option(
                "--id-field",
                default="id",
                show_default=True,
                help="The column with each row's id (else its row number).",
            ),
            CONCURRENCY,
            NO_CACHE,
        ],
    )
