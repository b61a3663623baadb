"""One rule for every file a run writes: nothing the user gave is overwritten.

A run names its inputs (the data file, labels, results to read) and the
files it will write (results, the CSV beside them, a summary, the result
cache, a report, a plot). Before any work starts, each planned output must be:

- none of the inputs (by path, and by the file a path leads to: a hard link
  or a symlinked input is the same file);
- no other output of the same run;
- a regular file or nothing: never a symbolic link (whose target could be any
  file), a folder, a device or a pipe;
- nothing, or a file this output writes itself, recognised by its content (a
  results file by its records, a cache by its schema), so that a run resumes
  into its own results and a second run replaces its own report; a file
  that is not ours is replaced only when the caller says ``overwrite``.

:func:`look` reads what is at a path (the only I/O); :func:`refusals` decides
from what was seen, and is pure; :func:`check_outputs` does both and raises an
:class:`~localjudge.errors.OutputPathError` that names both paths of every
clash. Messages name options by keyword (:class:`~localjudge._wording.Message`),
so a command line shows its own flags.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional

from ._wording import Message
from .errors import OutputPathError

__all__ = ["Found", "Input", "Output", "check_outputs", "look", "refusals"]

Kind = Literal["missing", "regular", "symlink", "folder", "special"]


@dataclass(frozen=True)
class Input:
    """A file the run reads: ``said`` names it in a message (a template naming options, ``"{labels_file}"``)."""

    said: str
    path: Path


@dataclass(frozen=True)
class Output:
    """A file the run writes: how a message names it, what it holds, and how to tell a file it wrote itself.

    ``said`` is a template naming options (``"{summary_file}"``, ``"the CSV
    that {output_format} csv writes"``); ``holds`` says what is written
    (``"a run summary"``); ``ours`` reads a file and tells whether this
    output wrote it (an empty file is taken as it holds nothing to lose).
    """

    said: str
    path: Path
    holds: str
    ours: Callable[[Path], bool] = field(default=lambda path: False, compare=False)
    replaceable: bool = True  # False: a file not ours is refused even with overwrite (a cache never takes one's place)


@dataclass(frozen=True)
class Found:
    """What is at a path now: the file it leads to, its kind, and (for an output) whether it is ours."""

    path: Path
    place: str  # absolute, with the folders' symlinks resolved: two paths to one place are one file
    kind: Kind
    identity: Optional[tuple[int, int]] = None  # (device, inode) of the file it leads to
    target: str = ""  # a symlink's
    ours: bool = True


def look(path: Path, ours: Optional[Callable[[Path], bool]] = None) -> Found:
    """What is at ``path``; given ``ours``, whether a regular file there is one we wrote (empty counts as ours)."""
    path = Path(path)
    place = os.path.join(os.path.realpath(path.parent), path.name)
    try:
        link = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return Found(path, place, "missing")
    try:
        followed = os.stat(path)
        identity: Optional[tuple[int, int]] = (followed.st_dev, followed.st_ino)
    except OSError:
        followed, identity = None, None  # a dangling link
    if stat.S_ISLNK(link.st_mode):
        return Found(path, place, "symlink", identity, target=os.readlink(path))
    if stat.S_ISDIR(link.st_mode):
        return Found(path, place, "folder", identity)
    if not stat.S_ISREG(link.st_mode):
        return Found(path, place, "special", identity)
    mine = True
    if ours is not None and link.st_size > 0:
        try:
            mine = bool(ours(path))
        except (OSError, ValueError):
            mine = False  # what cannot be read cannot be told ours
    return Found(path, place, "regular", identity, ours=mine)


def _same(one: Found, other: Found) -> bool:
    return one.place == other.place or (one.identity is not None and one.identity == other.identity)


def _kind_refusal(output: Output, found: Found) -> Optional[Message]:
    said, path = output.said, str(output.path)
    if found.kind == "symlink":
        return Message(
            said + " {given_path} is a symbolic link (to {link_target}): give the file's own path, "
            "so that nothing is written into a file you did not name",
            given_path=path,
            link_target=found.target,
        )
    if found.kind == "folder":
        return Message(said + " {given_path} is a folder: give a file's path", given_path=path)
    if found.kind == "special":
        return Message(
            said + " {given_path} is not a regular file (a device, a pipe or a socket): give a file's path",
            given_path=path,
        )
    return None


def refusals(
    inputs: Sequence[tuple[Input, Found]], outputs: Sequence[tuple[Output, Found]], *, overwrite: bool = False
) -> list[Message]:
    """Why each planned output may not be written (empty: all may). Pure: it decides from what :func:`look` saw.

    ``overwrite`` lets an output replace an existing regular file that is not
    ours; it never lets one replace an input, another output, a symlink or a
    special file.
    """
    found: list[Message] = []
    for number, (output, seen) in enumerate(outputs):
        path = str(output.path)
        clash = next((given for given, other in inputs if _same(seen, other)), None)
        if clash is not None:
            found.append(
                Message(
                    output.said + " {given_path} is " + clash.said + " itself ({other_path}), which this run reads: "
                    "write " + output.holds + " to another path; nothing you gave is overwritten",
                    given_path=path,
                    other_path=str(clash.path),
                )
            )
            continue
        before = next((given for given, other in outputs[:number] if _same(seen, other)), None)
        if before is not None:
            found.append(
                Message(
                    output.said + " {given_path} and " + before.said + " {other_path} are the same file, "
                    "and each output needs its own: give them different paths",
                    given_path=path,
                    other_path=str(before.path),
                )
            )
            continue
        refused = _kind_refusal(output, seen)
        if refused is None and seen.kind == "regular" and not seen.ours and not (overwrite and output.replaceable):
            advice = (
                "choose another path, or add {overwrite} to replace it" if output.replaceable else "choose another path"
            )
            refused = Message(
                output.said + " {given_path} exists and is not " + output.holds + " localjudge wrote: " + advice,
                given_path=path,
            )
        if refused is not None:
            found.append(refused)
    return found


def check_outputs(inputs: Sequence[Input], outputs: Sequence[Output], *, overwrite: bool = False) -> None:
    """Refuse, before any work starts, every output that would overwrite what the user gave (see the module)."""
    seen_inputs = [(given, look(given.path)) for given in inputs]
    seen_outputs = [(output, look(output.path, output.ours)) for output in outputs]
    found = refusals(seen_inputs, seen_outputs, overwrite=overwrite)
    if found:
        raise OutputPathError(found)
