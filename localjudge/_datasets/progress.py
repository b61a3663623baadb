"""How far a dataset run has got, on stderr: a rich progress bar on a terminal, plain lines elsewhere.

A terminal shows rows done out of the total, the rate, the time left and
the errors so far, redrawn in place; a row that fails is printed above the
bar, with the error's hint the first time that hint comes. A log file or a
pipe gets the same lines, one line of progress every
``interval`` seconds and one at the end, which reads well in CI logs and
``tail -f``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

__all__ = ["RunProgress"]


class RunProgress:
    """``advance(record)`` once per finished row; use as a context manager around the run."""

    def __init__(
        self, total: int, *, stream: TextIO | None = None, interval: float = 10.0, terminal: bool | None = None
    ):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.done = self.failed = 0
        self._started = self._last_line = time.monotonic()
        self._bar: Any = None
        self._task: Any = None
        self._hints_shown: set[str] = set()

    def __enter__(self) -> RunProgress:
        if self.terminal:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(file=self.stream, force_terminal=True)
            self._bar = Progress(
                TextColumn("[bold]scoring"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("rows"),
                TextColumn("{task.fields[rate]}"),
                TextColumn("[red]{task.fields[errors]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=console,
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task("rows", total=self.total, rate="", errors="0 errors")
        return self

    def _failure(self, error: Mapping[str, Any]) -> str:
        """A failed row's line after its id: the error, and its hint if no row before gave it."""
        line = f"{error['type']}: {error['message']}"
        hint = error.get("hint")
        if hint and hint not in self._hints_shown:
            self._hints_shown.add(hint)
            line += f"\n  Hint: {hint}"
        return line

    def advance(self, record: Mapping[str, Any]) -> None:
        self.done += 1
        if "error" in record:
            self.failed += 1
        if self._bar is not None:
            if "error" in record:
                from rich.markup import escape

                row_id, failure = escape(str(record["id"])), escape(self._failure(record["error"]))
                self._bar.console.print(f"[red]{row_id}[/]: {failure}", highlight=False)
            rate = self.done / max(time.monotonic() - self._started, 1e-9)
            self._bar.update(
                self._task,
                advance=1,
                rate=f"{rate:.2f} rows/s",
                errors=f"{self.failed} error{'s' if self.failed != 1 else ''}",
            )
            return
        if "error" in record:
            print(f"{record['id']}: {self._failure(record['error'])}", file=self.stream, flush=True)
        if time.monotonic() - self._last_line >= self.interval:
            self._line()

    def _line(self) -> None:
        elapsed = time.monotonic() - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        eta = f", about {left:.0f} s left" if rate > 0 and self.done < self.total else ""
        print(
            f"{self.done}/{self.total} rows, {self.failed} failed, {rate:.2f} rows/s{eta}",
            file=self.stream,
            flush=True,
        )
        self._last_line = time.monotonic()

    def __exit__(self, *exc_info: Any) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.done:
            self._line()
