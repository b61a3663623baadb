"""Results files for the viewer's tests, written by the project's own writer (ResultsFile), as a run writes them.

The records are shaped as the judges write them (seen in real runs of the
tiny model and of check-judge): a verdict with probabilities, a reasoning
comment, an error with the model's raw output, a pair asked in both orders.
The hostile ones carry what an evaluated output may hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from localjudge._datasets.results_file import ResultsFile

#: texts an evaluated output may hold; a page must show each as text and run none of it
HOSTILE = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "<a href=\"javascript:window.__pwned='link'\">click</a>",
    "</textarea><script>window.__pwned = 'textarea'</script>",
    "</script><script>window.__pwned = 'closing'</script>",
    "\u202eevil\u202c right-to-left \u2066isolate\u2069 and \u200f marks",
    "<!-- <script>window.__pwned='comment'</script>",
]


def write_results(path: Path, records: Iterable[Mapping[str, Any]]) -> Path:
    """The records appended through ResultsFile and closed, as a finished run leaves the file."""
    out = ResultsFile(path).open()
    for record in records:
        out.append(dict(record))
    out.close()
    return path


def answer(row_id: str, score: bool, p_true: float, *, comment: str = "", way: str = "plain") -> dict[str, Any]:
    """A true/false verdict with the probabilities the judge gave."""
    return {
        "id": row_id,
        "result": {
            "key": "score",
            "score": score,
            "comment": comment or None,
            "metadata": {"probabilities": {"true": p_true, "false": 1 - p_true}, "way": way, "requests": 1},
        },
    }


def failure(row_id: str, raw: str = '{"score": tru') -> dict[str, Any]:
    """An error line with the model's raw output, as a run writes a row it could not judge."""
    return {
        "id": row_id,
        "error": {"type": "OutputParseError", "message": "the output is not valid JSON", "raw_output": raw},
    }


def pair(row_id: str, verdicts: tuple[str, str], p_a: float) -> dict[str, Any]:
    """A pair asked in both orders; orders that disagree make a tie."""
    consistent = verdicts[0] == verdicts[1]
    winner = verdicts[0] if consistent else "tie"
    score = {"A": 1.0, "B": 0.0, "tie": 0.5}[winner]
    return {
        "id": row_id,
        "result": {
            "key": "preference",
            "score": score,
            "comment": None,
            "metadata": {
                "winner": winner,
                "consistent": consistent,
                "verdicts": list(verdicts),
                "probabilities": {"A": p_a, "B": 1 - p_a},
                "order_probabilities": [{"A": p_a, "B": 1 - p_a}, {"A": 1 - p_a, "B": p_a}],
                "way": "plain",
                "requests": 2,
            },
        },
    }


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def answers_run(folder: Path, name: str = "answers", *, flip: Iterable[str] = ()) -> tuple[Path, Path]:
    """A run of 120 answers (3 failed, some contradicting, some hostile) and its data file with labels.

    ``flip``: ids whose verdict is turned, for a second run to compare.
    """
    flipped = set(flip)
    rows, records = [], []
    for number in range(1, 121):
        row_id = f"q{number:03d}"
        label = number % 2 == 0
        output = HOSTILE[number % len(HOSTILE)] if number % 10 == 3 else f"answer {number}"
        rows.append({"id": row_id, "inputs": f"question {number}", "outputs": output, "label": label})
        if number in (7, 50, 99):
            records.append(failure(row_id, raw=HOSTILE[number % len(HOSTILE)]))
            continue
        score = label if number % 5 else not label  # every fifth verdict wrong
        if row_id in flipped:
            score = not score
        p_true = 0.55 if number % 7 == 0 else (0.95 if score else 0.05)
        comment = "Thus, the score should be: false." if number == 12 else f"Reasoning {number}. {output}"
        record = answer(row_id, score, p_true, comment=comment)
        if number % 10 == 3:  # kept as `batch --keep-exchanges` keeps them: the hostile text inside the request too
            sent = [{"role": "user", "content": f"Is this right? {output}"}]
            record["result"]["metadata"]["exchanges"] = [{"messages": sent, "output": json.dumps({"score": score})}]
        records.append(record)
    results = write_results(folder / f"{name}.results.jsonl", records)
    data = write_jsonl(folder / f"{name}-data.jsonl", rows)
    return results, data


def describe_judge(results: Path, fingerprint: str = "j1", *, prompt: str = "Is {outputs} right?") -> Path:
    """The file beside ``results`` describing its judge, as ``batch`` writes it (a card's model, one way, one run)."""
    from localjudge._datasets.judge_file import record_judge

    described = {
        "localjudge": "0.1.0",
        "models": [
            {
                "role": "judge",
                "spec": "tiny",
                "kind": "local",
                "card": "gemma-3-270m",
                "file": "gemma-3-270m-q4_k_m.gguf",
                "sha256": "a5" * 32,
                "sha256_from": "model card",
            }
        ],
        "asked": [
            {
                "rows": "with inputs",
                "way": {"label": "plain", "described": "the prompt as written"},
                "prompt": prompt,
                "schema": {"type": "object", "properties": {"score": {"type": "boolean"}}, "required": ["score"]},
            }
        ],
        "options": {"reasoning": False},
    }
    run = {
        "started": "2026-01-02T03:04:05+00:00",
        "finished": "2026-01-02T03:05:05+00:00",
        "rows": 120,
        "seconds": 60.0,
        "rows_per_second": 2.0,
    }
    return record_judge(results, fingerprint, described, run)


def check_judge_on_tiny(folder: Path, *options: str) -> tuple[Any, list[dict[str, Any]]]:
    """``localjudge check-judge -m tiny OPTIONS --no-cache``, its report in ``folder``: the outcome and each set's report."""
    from click.testing import CliRunner

    from localjudge._cli import main

    report = folder / "report.json"
    outcome = CliRunner().invoke(main, ["check-judge", "-m", "tiny", *options, "--no-cache", "--json", str(report)])
    assert outcome.exit_code == 0, outcome.output
    return outcome, json.loads(report.read_text())["sets"]
