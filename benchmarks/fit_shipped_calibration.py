"""Fit the calibrations that ship for the default judge, on the dev splits of the check sets only.

Run: ``python benchmarks/fit_shipped_calibration.py [--model SPEC] [-j N] [--folds N]
[--set NAME [--evaluator NAME] | --self-reference | --likelihood | --checklist]``
(``make calibrations`` fits every one that ships)

It is ``localjudge calibrate`` on those rows, written into
``localjudge/_trust/shipped/`` under the judge's calibration key, where
``--calibrated`` (and every default way, where a fit exists) finds it when
the user has fitted none of their own:

- ``--set NAME``: a check set of single answers (default `answers`), verdict
  only, asked as the set asks (its prompt and scale); with ``--evaluator``,
  with that ready-made evaluator's prompt (``--set answers-reference
  --evaluator same_answer`` is the default for an answer with a reference);
- ``--self-reference``: the `answers` set's rows, with the same-answer prompt
  against the judge's own answer;
- ``--likelihood``: the dev pairs of both pair sets (`llmbar-natural` and
  `adversarial`), read by likelihood;
- ``--checklist``: the same pairs, verdict only, both orders side by side
  after the judge's own checks.

The test splits are never seen here: ``localjudge check-judge --split test
--calibrated`` with the same options then measures each fit on held-out rows.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path

from localjudge._cli.commands.check import CHECK_SETS, load_set
from localjudge._cli.commands.runs import plan_calibration
from localjudge._cli.commands.settings import JudgeSettings, WayFlags
from localjudge._judges.ways import WAYS
from localjudge._trust.fit import SHIPPED, calibration_key


def base_settings(args: argparse.Namespace) -> JudgeSettings:
    """The judge options the flags ask for; with no way flag, the plain way (not the question's default)."""
    flags = WayFlags(self_reference=args.self_reference, likelihood=args.likelihood, checklist=args.checklist)
    return JudgeSettings(model_spec=args.model, way_flags=flags, way=None if flags.given() else WAYS["plain"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds (fewer for a small set)")
    parser.add_argument("--evaluator", help="a ready-made evaluator's prompt instead of the set's own")
    way = parser.add_mutually_exclusive_group()
    way.add_argument("--set", default="answers", help="a check set of single answers, asked as it asks")
    way.add_argument("--self-reference", action="store_true", help="the judge writes its own reference first")
    way.add_argument("--likelihood", action="store_true", help="pairs read by likelihood")
    way.add_argument("--checklist", action="store_true", help="pairs side by side, after the judge's own checks")
    args = parser.parse_args()
    pairwise = args.likelihood or args.checklist
    names = ["llmbar-natural", "adversarial"] if pairwise else [args.set]
    rows = [row for name in names for row in load_set(CHECK_SETS[name], "dev")]
    with tempfile.TemporaryDirectory() as work:
        data = Path(work) / "dev.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        settings = CHECK_SETS[names[0]].settings(base_settings(args))
        if args.evaluator:  # another prompt for the same rows
            settings = replace(settings, evaluator=args.evaluator)
        plan = plan_calibration(settings, data, pairwise=pairwise, concurrency=args.j, folds=args.folds)
        result = plan.run()
    document = json.loads(result.path.read_text(encoding="utf-8"))
    sets = " and ".join(f"the {name} check set" for name in names)
    document["about"]["data"] = f"the dev split of {sets} ({len(rows)} rows)"
    target = SHIPPED / f"{calibration_key(plan.evaluator)}.json"
    if target.exists() and json.loads(target.read_text(encoding="utf-8"))["about"]["data"] != document["about"]["data"]:
        result.path.unlink()
        raise SystemExit(f"{target.name} ships a fit for this judge and prompt on other rows; delete it to refit")
    result.path.unlink()  # the copy calibrate keeps for this user would stand in front of the shipped one
    for name, validation in result.fit.validations.items():
        print(f"{name:26} held-out ECE {validation.after_ece:.3f}, accuracy {validation.after_accuracy:.3f}")
    if result.fit.chosen is None:  # a fit that helps nowhere ships nowhere: the judge's verdicts stay as they come
        target.unlink(missing_ok=True)
        print("kept none: no correction did better on the held-out folds; nothing ships for this prompt")
        return
    target.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"kept {result.fit.chosen}; written to {target}")


if __name__ == "__main__":
    main()
