"""Wordings of the reasoning field told to a local model, measured with ``localjudge check-judge``.

Run: ``python benchmarks/reasoning_wordings.py [--split dev] [-j 2]``

The format instructions pass on OpenEvals' description of the reasoning
field, which asks for a closing sentence "Thus, the score should be:
SCORE_YOU_ASSIGN." written before the score: the default judge ends it
with "1" for a boolean. Each wording here replaces that description in the
instructions alone (a remote judge's schema is not touched) and is one
check-judge run, reasoning first, on the answers and graded sets.

The rule, fixed before the runs: a wording replaces OpenEvals' only if, on
the dev rows, it is right on no fewer answers rows and no fewer graded rows,
with 0 failed rows; only then is it run on test.

Measured on dev (2 cores, -j 2; answers 160 rows, graded 18):

| wording | answers | graded |
| --- | --- | --- |
| OpenEvals' (what ships) | 0.61 (97) | 0.56 (10) |
| its closing sentence naming the score's values | 0.64 (102) | 0.50 (9) |
| ours: what a right output would be, then whether this one agrees; no closing sentence | 0.62 (99) | 0.33 (6) |

Neither passed (each was right on fewer graded rows), so neither ships.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

WORDING_ENV = "LOCALJUDGE_BENCH_REASONING_WORDING"
SETS = ("answers", "graded")


def _naming_the_values(score: Mapping[str, Any]) -> str:
    from localjudge._prompts.format_instructions import _kind
    from localjudge._prompts.schema import REASONING_DESCRIPTION

    head, _, _ = REASONING_DESCRIPTION.partition("You MUST")
    values = [True, False] if score.get("type") == "boolean" else score.get("enum")
    if isinstance(values, list) and values:
        endings = " or ".join(f'"Thus, the score should be: {json.dumps(v)}."' for v in values)
        return f"{head}You MUST end the reasoning with one of these sentences: {endings}"
    return f"{head}You MUST end the reasoning with the sentence: Thus, the score should be: SCORE, SCORE being {_kind(score)}."


def _ours(score: Mapping[str, Any]) -> str:
    return (
        "Your reasoning, in two or three sentences: first say what an output that meets the criteria would be, "
        "then whether this output agrees with it. End with one sentence saying whether the criteria are met."
    )


#: each wording: the reasoning field's description, given the score field after it (None: OpenEvals', as shipped)
WORDINGS: dict[str, Callable[[Mapping[str, Any]], str] | None] = {
    "OpenEvals' (what ships)": None,
    "its closing sentence naming the score's values": _naming_the_values,
    "ours: what a right output would be, then whether this one agrees; no closing sentence": _ours,
}


def _run_with_wording(name: str, arguments: list[str]) -> None:
    """check-judge in this process, the reasoning field described in the named wording."""
    import localjudge._prompts.format_instructions as instructions
    from localjudge._cli import main
    from localjudge._prompts.schema import REASONING_DESCRIPTION

    words, describe = WORDINGS[name], instructions.describe_schema
    if words is not None:

        def described(schema: Mapping[str, Any]) -> str | None:
            properties = schema.get("properties") or {}
            score, reasoning = properties.get("score"), properties.get("reasoning")
            if isinstance(score, Mapping) and isinstance(reasoning, Mapping):
                if reasoning.get("description") == REASONING_DESCRIPTION:
                    reasoning = {**reasoning, "description": words(score)}
                    schema = {**schema, "properties": {**properties, "reasoning": reasoning}}
            return describe(schema)

        instructions.describe_schema = described
    main(arguments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    parser.add_argument("-j", "--jobs", type=int, default=2)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        print(f"{'wording':<90} {'set':<8} {'accuracy':>8} {'right':>6} {'failed':>6} {'rows/s':>7}")
        for number, name in enumerate(WORDINGS):
            report = Path(work) / f"{number}.json"
            command = ["check-judge", "-m", arguments.model, "--split", arguments.split, "-j", str(arguments.jobs)]
            command += [item for name_ in SETS for item in ("--set", name_)] + ["--no-cache", "--json", str(report)]
            subprocess.run(
                [sys.executable, __file__, *command],
                env={**os.environ, WORDING_ENV: name},
                check=True,
                stdout=subprocess.DEVNULL,
            )
            for found in json.loads(report.read_text(encoding="utf-8"))["sets"]:
                right = round(found["accuracy"] * (found["rows"] - found["failed"]))
                print(
                    f"{name:<90} {found['set']:<8} {found['accuracy']:>8.2f} {right:>6} {found['failed']:>6} "
                    f"{found['rows_per_second']:>7.2f}"
                )


if __name__ == "__main__":
    if WORDING_ENV in os.environ:
        _run_with_wording(os.environ[WORDING_ENV], sys.argv[1:])
    else:
        main()
