"""A run's results file: one JSON line per row, appended as rows finish, whole or not at all.

A run may be killed at any moment, also in the middle of writing a line. So:

- before appending, a last line without its newline (a torn write, perhaps
  cut inside a multi-byte character) is cut off, and its row is scored
  again, instead of the next record being glued onto it;
- a line that is not a JSON object with an ``id`` is not a result: its row
  is scored again;
- a row's later line supersedes its earlier ones (a retried error), and a
  result is never superseded by an error, unless the error was judged from
  other values of the row or by another judge (its ``judged`` stamp);
- at the end of a run the file is re-read and rewritten, atomically, with
  each id once.

Two runs must never write one file: each would rewrite it at the end with
only what it knew, and the other's rows would be gone. So a run holds an
advisory lock (``flock`` on ``.NAME.lock`` beside the file, since the file
itself is replaced at the end) from opening to closing, and a second run
stops at once with a message naming the first. It does not wait: a run that
hangs without a word looks broken, and the second run was usually a mistake
(another dataset, the same ``-o``). The lock dies with its process, so a
killed run never leaves the file locked.

The path must name a regular file or nothing: a symlink (whose target could
be any file) or a device is refused rather than written through.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, TextIO, TypeVar

from .. import _bounded_json as bounded_json
from .._wording import Message
from ..errors import ResultsFileError, ResultsWriteError, UsageError
from .record_check import kept_record_problem, say_set_aside

Record = TypeVar("Record", bound=Mapping[str, Any])
#: where a record's line is in a results file and what it is: (offset, length, is a result, digest of its stamp)
Entry = tuple[int, int, bool, int]

__all__ = ["ResultsFile", "is_results_file", "latest_records", "parse_line", "read_results", "replace_atomically"]


#: failures of the machine, not of the path asked for, even before the first row is written
_MACHINE = frozenset({errno.ENOSPC, errno.EIO, errno.EDQUOT})


@contextlib.contextmanager
def writing_to(path: Path, *, during_run: bool = False) -> Iterator[None]:
    """OS errors on ``path`` (a read-only directory, a full disk) as one clear error, not a traceback.

    ``during_run``: the path was fine when the run began, so any failure now
    (a full disk, a folder removed, a disk remounted read-only) is the run's,
    not a bad call; errno only picks the advice.
    """
    try:
        yield
    except OSError as exc:
        if isinstance(exc, (ResultsFileError, ResultsWriteError)):
            raise
        advice = {
            errno.ENOSPC: "free some disk space, then run again: the rows written so far are kept",
            errno.ENOENT: "its folder was removed during the run; make it again and rerun to resume",
            errno.EIO: "the disk failed a write; check it, then run again to resume",
            errno.EDQUOT: "free some of your disk quota, then run again: the rows written so far are kept",
            errno.EACCES: "choose a results path you may write ({results:results=})",
            errno.EROFS: "choose a results path on a writable disk ({results:results=})",
            errno.EEXIST: "a part of the path is a file, not a folder; check the path ({results:results=})",
            errno.ENOTDIR: "a part of the path is a file, not a folder; check the path ({results:results=})",
        }.get(exc.errno or 0, "check the path ({results:results=})")
        if during_run or exc.errno in _MACHINE:
            if during_run and exc.errno not in _MACHINE and exc.errno != errno.ENOENT:
                advice = "check the disk and the path, then run again to resume: the rows written so far are kept"
            raise ResultsWriteError(
                Message("Cannot write {path}: {why}; " + advice, path=path, why=exc.strerror or str(exc))
            ) from exc
        why = "" if exc.errno in (errno.EEXIST, errno.ENOTDIR) else f": {exc.strerror or exc}"  # mkdir's words mislead
        raise ResultsFileError(Message("Cannot write {path}{why}; " + advice, path=path, why=why)) from exc


class ResultsFile:
    """The results of one run at ``path``: what is there, appending, and the final compaction."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        # Memory is bounded by this index, not by the records: about 200 bytes a row (the id, the offset and length
        # of its kept line in the file, whether it is a result, a digest of its stamp); records are read back by offset.
        self.index: dict[str, Entry] = {}  # id -> where its kept line is (a result wins over an error)
        self.opened_size = 0  # the file's size once opened: an entry below it was written by an earlier run
        self.torn_bytes = 0  # bytes of a torn last line cut off when the file was opened
        self.invalid_lines = 0  # complete lines that were not a record
        self.set_aside: list[str] = []  # why each verdict not of the shape a run writes was judged again
        self._out: Any = None
        self._lock: int | None = None

    def open(self) -> ResultsFile:
        """Take the file's lock, read what an earlier run left, cut a torn last line, and get ready to append."""
        with writing_to(self.path):
            _check_regular(self.path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = _lock(self.path)
            try:
                _check_regular(self.path)  # again, now that no other run of ours can be changing it
                for stale in self.path.parent.glob(f".{self.path.name}.*.tmp"):  # a compaction a kill cut short
                    stale.unlink(missing_ok=True)
                if self.path.exists():
                    with self.path.open("rb") as handle:
                        self.opened_size, self.invalid_lines = _scan(handle, self.index, self.set_aside)
                    say_set_aside(self.path, self.set_aside)
                    self.torn_bytes = self.path.stat().st_size - self.opened_size
                    if self.torn_bytes:
                        with self.path.open("r+b") as out:
                            out.truncate(self.opened_size)
                flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW  # a symlink made since: refused
                self._out = os.fdopen(os.open(self.path, flags, 0o644), "r+b", buffering=0)
                self._mode = self.path.stat().st_mode & 0o777  # kept by the compacted file (mkstemp's is 0600)
            except BaseException:
                self._unlock()
                raise
        return self

    def scored(self, row_id: str) -> bool:
        entry = self.index.get(row_id)
        return entry is not None and entry[2]

    def record(self, row_id: str) -> dict[str, Any] | None:
        """The record kept for ``row_id``, read back from the file; None if it has none."""
        entry = self.index.get(row_id)
        return None if entry is None else _record(os.pread(self._out.fileno(), entry[1], entry[0]))

    def differs(self, row_id: str, judged: Any) -> bool:
        """Whether ``row_id``'s kept result was stamped other than ``judged`` (False where it has no result)."""
        entry = self.index.get(row_id)
        return entry is not None and entry[2] and entry[3] != _digest(judged)

    def earlier(self, row_id: str) -> bool:
        """Whether ``row_id``'s kept line was there before this run appended anything."""
        entry = self.index.get(row_id)
        return entry is not None and entry[0] < self.opened_size

    def append(self, record: dict[str, Any]) -> None:
        """One whole line, written in one call, so that a kill after this call loses nothing."""
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        with writing_to(self.path, during_run=True):
            descriptor, written = self._out.fileno(), 0
            while written < len(line):  # a write may take only part of it
                written += os.write(descriptor, line[written:])
            offset = os.lseek(descriptor, 0, os.SEEK_CUR) - len(line)  # appended at the end, wherever that was
        _keep_entry(
            self.index, str(record.get("id")), (offset, len(line), "result" in record, _digest(record.get("judged")))
        )

    def close(self, order: Iterable[str] = ()) -> None:
        """Rewrite the file atomically with each id once, ``order`` first, then any other ids it held.

        What is on disk is read again first, so the rewrite keeps every line
        there, whoever wrote it.
        """
        if self._out is None:
            return
        try:
            ours, self._out = self._out, None
            with writing_to(self.path, during_run=True), ours, self.path.open("rb") as disk:
                index: dict[str, Entry] = {}
                _scan(disk, index, whole_only=False)  # what is on disk now, whoever wrote it
                from_ours: set[str] = set()
                if os.fstat(ours.fileno()).st_ino != os.fstat(disk.fileno()).st_ino:
                    for row_id, entry in self.index.items():  # the file was replaced: what this run wrote is in its own
                        if _keep_entry(index, row_id, entry):
                            from_ours.add(row_id)
                self.index = {}

                def line(row_id: str, entry: Entry) -> str:
                    source = ours if row_id in from_ours else disk
                    return json.dumps(_record(os.pread(source.fileno(), entry[1], entry[0])), ensure_ascii=False) + "\n"

                def write(out: TextIO) -> None:
                    for row_id in map(str, order):  # order first, then any other ids, each once
                        entry = index.pop(row_id, None)
                        if entry is not None:
                            out.write(line(row_id, entry))
                    for row_id, entry in index.items():
                        out.write(line(row_id, entry))

                replace_atomically(self.path, write, mode=self._mode)
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the flock
            self._lock = None


def _check_regular(path: Path) -> None:
    """Refuse a symlink or a special file: writing through it would touch a file the user did not name."""
    if path.is_symlink():
        raise ResultsFileError(
            Message(
                "{path} is a symbolic link (to {target}); give the file's own path as {results:results=}, "
                "so that the results cannot land in a file you did not name",
                path=path,
                target=os.readlink(path),
            )
        )
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        raise ResultsFileError(
            Message("{path} is not a regular file; choose a file path for the results ({results:results=})", path=path)
        )


def _lock(path: Path) -> int:
    """The descriptor holding ``path``'s run lock; a :class:`ResultsFileError` if another run holds it."""
    lock_path = path.parent / f".{path.name}.lock"
    descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(descriptor)
        raise ResultsFileError(
            Message(
                "Another run (process {holder}) is writing {path}, and two runs on one results file would lose rows. "
                "Run this again once it has finished (it then resumes where that run stopped), "
                "or give it another {results:results=}",
                holder=holder,
                path=path,
            )
        ) from None
    except BaseException:
        os.close(descriptor)
        raise
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
    return descriptor


def _record(line: bytes) -> dict[str, Any] | None:
    """The record a line holds: a JSON object with an id and a result or an error; None for anything else."""
    try:
        record = bounded_json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict) or "id" not in record or not ("result" in record or "error" in record):
        return None
    return record


def parse_line(line: bytes) -> dict[str, Any] | None:
    """One line of a results file as the record it holds, or None where it holds none (as a run reads it)."""
    return _record(line)


def is_results_file(path: Path) -> bool:
    """Whether ``path`` holds a run's results (so a run may resume into it): a record on some line.

    A file whose only line is an unfinished record (a run killed during its
    first write) is one too; a data file, whose rows are no records, is not.
    """
    lines = []
    with Path(path).open("rb") as handle:
        for line in handle:
            if _record(line) is not None:
                return True
            if line.strip():
                lines.append(line)
                if len(lines) > 1:
                    return False
    return not lines or (not lines[0].endswith(b"\n") and lines[0].startswith(b'{"id": '))


def _keep(records: dict[str, Record], record: Record) -> None:
    """A row's later line supersedes its earlier ones; an error never supersedes a result judged alike (``judged``)."""
    row_id = str(record.get("id"))
    kept: Mapping[str, Any] = records.get(row_id, {})
    if "result" not in kept or "result" in record or kept.get("judged") != record.get("judged") or _unsound(kept):
        records[row_id] = record


def _digest(judged: Any) -> int:
    """A ``judged`` stamp as 8 bytes: stamps compare equal where their digests do."""
    text = json.dumps(judged, sort_keys=True, ensure_ascii=False, default=repr)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def _keep_entry(index: dict[str, Entry], row_id: str, entry: Entry) -> bool:
    """:func:`_keep` for index entries: whether ``entry`` supersedes what ``index`` held for ``row_id``."""
    kept = index.get(row_id)
    if kept is None or not kept[2] or entry[2] or kept[3] != entry[3]:
        index[row_id] = entry
        return True
    return False


def _scan(
    handle: BinaryIO, index: dict[str, Entry], set_aside: list[str] | None = None, *, whole_only: bool = True
) -> tuple[int, int]:
    """Index a results file's lines into ``index``, streamed: (bytes up to the last newline, lines not a record).

    ``whole_only`` leaves out a last line without its newline (torn by a kill). A verdict no run could
    have written (hand-edited) is indexed as no verdict, so it is judged again, and why goes in ``set_aside``.
    """
    offset = invalid = 0
    for line in handle:
        if whole_only and not line.endswith(b"\n"):
            break
        if line.strip():
            record = _record(line)
            if record is None:
                invalid += 1
            else:
                problem = kept_record_problem(record) if "result" in record else None
                if problem is not None and set_aside is not None:
                    set_aside.append(problem)
                entry = (offset, len(line), "result" in record and problem is None, _digest(record.get("judged")))
                _keep_entry(index, str(record.get("id")), entry)
        offset += len(line)
    return offset, invalid


def _unsound(kept: Mapping[str, Any]) -> bool:
    """A verdict no run could have written (hand-edited): an error judged since replaces it."""
    return kept_record_problem(kept) is not None


def latest_records(records: Iterable[Record]) -> list[Record]:
    """One record per id, as :func:`read_results` keeps them from a file: the last, a result over an error."""
    kept: dict[str, Record] = {}
    for record in records:
        _keep(kept, record)
    return list(kept.values())


def read_results(path: Path) -> list[dict[str, Any]]:
    """A results file's records as a finished run leaves them: the last for each id, a result over an error.

    A torn last line (a kill mid-write, even inside a character) is skipped;
    any other line that is not a record is an error naming it.
    """
    lines = Path(path).read_bytes().split(b"\n")
    records: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record = _record(line)
        if record is None:
            if number == len(lines):  # no newline after it: cut by a kill; the next run of batch removes it
                continue
            raise UsageError(
                f"{path}:{number} is not a results line (a JSON object with an id and a result or an error)"
            )
        _keep(records, record)
    return list(records.values())


def replace_atomically(
    path: Path, write: Callable[[TextIO], object], *, mode: int = 0o644, newline: str | None = None
) -> None:
    """Write ``path`` through a temporary file beside it, synced and renamed over it: whole or not at all.

    The temporary file's name (``.NAME.*.tmp``) is the one :meth:`ResultsFile.open` clears when a kill left it.
    """
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline=newline) as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
