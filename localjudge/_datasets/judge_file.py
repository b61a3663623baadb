"""The judge a results file was judged by, described beside it: ``NAME.judge.json`` for ``NAME.jsonl``.

A results record names its judge by a fingerprint only (``judged.judge``);
this file says what the fingerprint stands for, once per judge: the
localjudge version, the model (its spec, file and checksum), each way of
judging with the prompt template as sent and the answer's JSON schema, and
each run's start, end and speed. It sits beside the results, not in them,
so that the results stay one record per line for pandas, jq and
:func:`~localjudge._datasets.results_file.read_results`.

The file is written whole or not at all
(:func:`~localjudge._datasets.results_file.replace_atomically`), by the run
that holds the results file's lock; a run resumed with the same judge
updates that judge's entry and adds its run, another judge adds an entry.
Like the results file, its path must name a regular file or nothing: a
symlink is refused, not written through.

What describes the judge is the caller's (:mod:`localjudge._cli.commands.described`
builds it from the judge options); nothing here adds an API key, a header
or a server's credentials, and the caller's description holds none.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from .. import _bounded_json as bounded_json
from .._wording import Message
from ..errors import ResultsFileError
from .results_file import replace_atomically, writing_to

__all__ = [
    "FORMAT",
    "MAX_BYTES",
    "RUNS_KEPT",
    "JudgeRun",
    "check_judge_file",
    "is_judge_file",
    "judge_file_path",
    "read_judge_file",
    "record_judge",
    "run_entry",
]

#: what the file's ``format`` says, for a reader to tell this layout from a later one
FORMAT = "localjudge judge 1"
#: a judge's last runs kept in its entry (a file resumed a thousand times need not list them all)
RUNS_KEPT = 100
#: the largest file a reader takes (a prompt and a schema are small; anything bigger is not ours)
MAX_BYTES = 8 << 20
#: levels a description may nest: the answer's schema (bounded_json.MAX_DEPTH) inside a few of ours
_DEPTH = bounded_json.MAX_DEPTH + 8


def judge_file_path(results: Path) -> Path:
    """Where the judge of ``results`` is described: ``NAME.judge.json`` for ``NAME.jsonl``, else the name + ``.judge.json``."""
    results = Path(results)
    name = results.name
    stem = name[: -len(".jsonl")] if name.lower().endswith(".jsonl") else name
    return results.with_name(f"{stem}.judge.json")


def check_judge_file(results: Path) -> Path:
    """The judge file of ``results``, or a :class:`ResultsFileError` where writing it would touch a file not ours.

    Refused, as the results file itself is: a symlink (it could point
    anywhere), anything but a regular file.
    """
    path = judge_file_path(results)
    if path.is_symlink():
        raise ResultsFileError(
            Message(
                "{path} is a symbolic link (to {target}), and the judge of {results_path} is described there: "
                "remove the link, or write the results elsewhere, so that nothing lands in a file you did not name",
                path=path,
                target=os.readlink(path),
                results_path=results,
            )
        )
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        raise ResultsFileError(
            Message(
                "{path} is not a regular file, and the judge of {results_path} is described there: "
                "remove it, or write the results elsewhere",
                path=path,
                results_path=results,
            )
        )
    return path


def now() -> str:
    """The time now, as the file gives times: UTC, to the second (ISO 8601)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class JudgeRun:
    """One run of one judge on a results file: started now, counted as rows are written, finished once.

    ``described`` is the judge's description (JSON-ready); :meth:`start` and
    :meth:`finish` write it with this run's times into the judge file.
    """

    def __init__(self, results: Path, fingerprint: str, described: Mapping[str, Any]) -> None:
        self.results = Path(results)
        self.fingerprint = fingerprint
        self.described = dict(described)
        self.rows = 0
        self.started = ""
        self._clock = 0.0

    def start(self) -> None:
        started, self._clock = now(), time.monotonic()
        self._write(started, finished=None, seconds=None, update=False)
        self.started = started  # only once written: a run whose start was not written has no run to finish

    def count(self) -> None:
        self.rows += 1

    def finish(self) -> None:
        self._write(self.started, finished=now(), seconds=time.monotonic() - self._clock, update=True)

    def _write(self, started: str, *, finished: Optional[str], seconds: Optional[float], update: bool) -> None:
        run = run_entry(started, finished, self.rows, seconds)
        record_judge(self.results, self.fingerprint, self.described, run, update=update)


def run_entry(started: str, finished: Optional[str], rows: int, seconds: Optional[float]) -> dict[str, Any]:
    """One run as the file lists it: its times, rows, and (once it has ended) its seconds and speed."""
    run: dict[str, Any] = {"started": started, "finished": finished, "rows": rows}
    if seconds is not None:
        run["seconds"] = round(seconds, 3)
        run["rows_per_second"] = round(rows / seconds, 4) if seconds > 0 else None
    return run


def record_judge(
    results: Path,
    fingerprint: str,
    described: Mapping[str, Any],
    run: Mapping[str, Any],
    *,
    update: bool = False,
    alone: bool = False,
) -> Path:
    """Write the judge ``fingerprint`` and its ``run`` into the judge file of ``results``; its path.

    ``update``: ``run`` replaces the judge's last run (the same run, written
    again as it ends), rather than being added. Other judges' entries are
    kept, unless ``alone`` (a results file written whole, with this judge's
    records only).
    """
    path = check_judge_file(results)
    with writing_to(path):
        for stale in path.parent.glob(f".{path.name}.*.tmp"):  # a write a kill cut short
            stale.unlink(missing_ok=True)
        judges: dict[str, Any] = {}
        if not alone:
            try:
                judges = dict(read_judge_file(path) or {})
            except ValueError:
                judges = {}  # not a file of ours any more: replaced by one that is
        runs = [r for r in judges.get(fingerprint, {}).get("runs", []) if isinstance(r, Mapping)]
        runs = [*(runs[:-1] if update and runs else runs), dict(run)]
        judges.pop(fingerprint, None)  # the judge written last comes last
        judges[fingerprint] = {**described, "runs": runs[-RUNS_KEPT:]}
        document = {"format": FORMAT, "results": Path(results).name, "judges": judges}
        text = json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False, default=_plain) + "\n"
        replace_atomically(path, lambda out: out.write(text))
    return path


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def is_judge_file(path: Path) -> bool:
    """Whether ``path`` holds judges described as this module writes them (a run may update it)."""
    try:
        return read_judge_file(path) is not None
    except ValueError:
        return False


def read_judge_file(path: Path) -> Optional[dict[str, dict[str, Any]]]:
    """The judges a judge file describes (fingerprint -> description), None where there is no file.

    A ValueError says why a file there is not one (a symlink, too big, not
    JSON, not in this layout).
    """
    path = Path(path)
    if path.is_symlink():
        raise ValueError(f"{path} is a symbolic link, not read")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path} is over {MAX_BYTES} bytes, not a judge's description")
    try:
        document = bounded_json.loads(data.decode("utf-8"), max_depth=_DEPTH, allow_nan=False)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    judges = document.get("judges") if isinstance(document, dict) else None
    if not isinstance(judges, dict) or not all(isinstance(entry, dict) for entry in judges.values()):
        raise ValueError(f"{path} does not describe judges (no judges object of fingerprints)")
    return {str(fingerprint): entry for fingerprint, entry in judges.items()}
