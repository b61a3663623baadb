"""Write docs/defaults.md, "How the defaults were chosen", from the check-judge records in docs/records/.

Each record is what ``localjudge check-judge --json FILE`` wrote. The page's tables come from
them and from the default ways in the code, never typed by hand; ``tests/test_docs.py`` checks
that the committed page is what this script writes.

    python benchmarks/defaults_page.py           # rewrite docs/defaults.md
    python benchmarks/defaults_page.py --check   # exit 1 when docs/defaults.md is not current
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "docs" / "records"
PAGE = ROOT / "docs" / "defaults.md"

INTRO = """\
# How the defaults were chosen

<!-- written by benchmarks/defaults_page.py from docs/records/*.json: edit the script, not this page -->

With no way named (`--way`, `way=`), each kind of question is judged the way
measured best for it on the labelled sets that ship with localjudge
([How far to trust a verdict](trust.md)). A default is chosen on the sets'
`dev` rows, and reported on their `test` rows, which have other questions and
were not used to choose it. `localjudge check-judge` names the way of each set,
"(the default)" or "(as asked)"; each result names it in `metadata.way`, with
the model requests it took in `metadata.requests`. `--way plain` asks as
OpenEvals does.
"""

WAYS_INTRO = """\
## The default way of each question

From `localjudge._judges.ways.DEFAULT_WAYS`. A default way that is calibrated
uses a fit only where one exists for the judge and its prompt (fits ship for
the default judge); elsewhere it runs uncalibrated and says so.
"""

RECORDS_INTRO = """\
## What the records say

The default judge on each set, from the `check-judge --json` records in
`docs/records/`. Accuracy is against the labels, with its 95% interval
(Wilson's); kappa is Cohen's; ECE is the calibration error of the verdict's
probabilities; s/row is the wall time of the run (two rows at a time on two
CPU cores) over its rows, where answers already in the result cache cost none.
For the graded sets the judge's score from 0 to 1 is read as the nearest of
three grades, so chance is 0.33; for the others it is 0.50.
"""

REPRODUCE_INTRO = """\
## Reproduce a record

Each record comes from one command; run it to measure again, or with
`--model SPEC` to measure another judge the same way:
"""

CLOSING = """\
Figures from earlier runs that no record here backs (other ways of judging,
the other model cards, the pair weights' fit) are on
[Measurements](measurements.md).
"""


def load_records(directory: Path = RECORDS) -> dict[str, dict[str, Any]]:
    """The records by file stem, in name order."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(directory.glob("*.json"))}


def _figure(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _way(entry: dict[str, Any]) -> str:
    way = entry["way"]
    return f"`{way['name']}`" + (" (the default)" if way["default"] else "")


def _accuracy(entry: dict[str, Any]) -> str:
    low, high = entry["agreement"]["accuracy_interval"]
    return f"{entry['accuracy']:.2f} ({low:.2f}-{high:.2f})"


def command(record: dict[str, Any], stem: str) -> str:
    """The check-judge command that writes this record."""
    words = ["localjudge", "check-judge"]
    if record.get("judge") not in (None, "default"):
        words += ["--model", record["judge"]]
    for entry in record["sets"]:
        words += ["--set", entry["set"]]
    words += ["--split", record["split"]]
    if record.get("limit") is not None:
        words += ["--limit", str(record["limit"])]
    named = {entry["way"]["name"] for entry in record["sets"] if not entry["way"]["default"]}
    if len(named) == 1:
        words += ["--way", named.pop()]
    words += ["-j", "2", "--json", f"docs/records/{stem}.json"]
    return " ".join(words)


def ways_table() -> list[str]:
    from localjudge._judges.ways import ASKING_PAIR_DEFAULT, DEFAULT_WAYS

    lines = ["| question | default way | what the judge does |", "| --- | --- | --- |"]
    for question, way in DEFAULT_WAYS.items():
        pair = question.name == "PAIR"
        lines.append(f"| {question.value} | `{way.label}` | {way.describe(pair=pair)} |")
    lines += [
        "",
        f"A pair judged by a judge that cannot score replies (a server), or with ties allowed, "
        f"gets `{ASKING_PAIR_DEFAULT.label}`: {ASKING_PAIR_DEFAULT.describe(pair=True)}.",
    ]
    return lines


def records_table(records: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| set | split | way | rows | accuracy (95% interval) | kappa | ECE | s/row | record |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    entries = [(stem, entry) for stem, record in records.items() for entry in record["sets"]]
    entries.sort(key=lambda item: (item[1]["set"], item[1]["split"] != "dev", item[0]))
    for stem, entry in entries:
        failed = f" ({entry['failed']} failed)" if entry["failed"] else ""
        lines.append(
            f"| {entry['set']} | {entry['split']} | {_way(entry)} | {entry['rows']}{failed} | {_accuracy(entry)} "
            f"| {_figure(entry['kappa'])} | {_figure(entry['ece'])} | {_figure(entry['seconds_per_row'], 1)} "
            f"| [{stem}.json](records/{stem}.json) |"
        )
    return lines


def render(records: dict[str, dict[str, Any]]) -> str:
    """The whole page."""
    parts = [INTRO, WAYS_INTRO, "\n".join(ways_table()) + "\n", RECORDS_INTRO, "\n".join(records_table(records)) + "\n"]
    reproduce = [REPRODUCE_INTRO]
    for stem, record in records.items():
        reproduce.append(f"- `{stem}.json`: `{command(record, stem)}`")
    parts += ["\n".join(reproduce) + "\n", CLOSING]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is not what the records give")
    arguments = parser.parse_args(argv)
    page = render(load_records())
    if arguments.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != page:
            print(f"{PAGE.relative_to(ROOT)} is not current: run python benchmarks/defaults_page.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)} from {len(list(RECORDS.glob('*.json')))} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
