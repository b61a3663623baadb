"""Fit the calibration that ships for the default judge, on the dev split of the `answers` check set only.

Run: ``python benchmarks/fit_shipped_calibration.py [--model SPEC] [-j N] [--self-reference]`` (``make calibrations``
fits both)

It is ``localjudge calibrate`` on those rows with ``--no-reasoning`` (the
verdict-only prompt of a question and an answer, no reference; with
``--self-reference``, the same-answer prompt against the judge's own answer), written into
``localjudge/trust/shipped/`` under the judge's calibration key, where
``--calibrated`` finds it when the user has fitted none of their own. The
test split is never seen here: ``localjudge check-judge --set answers --split
test --no-reasoning --calibrated`` then measures the fit on held-out rows.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from localjudge.commands.check import CHECK_SETS, load_set
from localjudge.commands.runs import plan_calibration
from localjudge.commands.settings import JudgeSettings
from localjudge.trust.fit import SHIPPED, calibration_key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--self-reference", action="store_true", help="the judge writes its own reference first")
    args = parser.parse_args()
    check_set = CHECK_SETS["answers"]
    rows = load_set(check_set, "dev")
    with tempfile.TemporaryDirectory() as work:
        data = Path(work) / "answers-dev.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        settings = JudgeSettings(model_spec=args.model, no_reasoning=True, self_reference=args.self_reference)
        plan = plan_calibration(settings, data, concurrency=args.j)
        result = plan.run()
    document = json.loads(result.path.read_text(encoding="utf-8"))
    document["about"]["data"] = f"the dev split of the {check_set.name} check set ({len(rows)} rows)"
    target = SHIPPED / f"{calibration_key(plan.evaluator)}.json"
    target.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, validation in result.fit.validations.items():
        print(f"{name:26} held-out ECE {validation.after_ece:.3f}, accuracy {validation.after_accuracy:.3f}")
    print(f"kept {result.fit.chosen}; written to {target}")


if __name__ == "__main__":
    main()
