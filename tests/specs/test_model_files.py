"""Parts a killed fetch left behind: removed when no fetch holds them, kept while one does."""

from __future__ import annotations

import os
import subprocess
import sys

from localjudge._specs.model_files import sweep_stale_parts

HOLD = """
import fcntl, sys
with open(sys.argv[1], "rb") as handle:
    fcntl.flock(handle, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_a_part_no_fetch_holds_is_removed_with_its_size_and_nothing_else_is(tmp_path):
    stale = tmp_path / ".toy.gguf.abc123.part"
    stale.write_bytes(b"x" * 1234)
    os.utime(stale, (1, 1))  # untouched for long: no new fetch's
    kept = [tmp_path / "toy.gguf", tmp_path / "toy.gguf.verified", tmp_path / "notes.part"]
    for path in kept:
        path.write_bytes(b"keep")
    assert sweep_stale_parts(tmp_path) == [(stale, 1234)]
    assert not stale.exists() and all(path.exists() for path in kept)
    assert sweep_stale_parts(tmp_path / "absent") == []


def test_a_part_made_a_moment_ago_is_kept_though_no_lock_is_held_yet(tmp_path):
    young = tmp_path / ".toy.gguf.new.part"
    young.write_bytes(b"n")
    assert sweep_stale_parts(tmp_path) == [] and young.exists()


def test_a_part_another_process_holds_is_kept(tmp_path):
    live = tmp_path / ".toy.gguf.live.part"
    live.write_bytes(b"y" * 10)
    os.utime(live, (1, 1))  # old, so only its lock keeps it
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(live)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert sweep_stale_parts(tmp_path) == []
        assert live.read_bytes() == b"y" * 10
    finally:
        holder.communicate("", timeout=30)
    assert sweep_stale_parts(tmp_path) == [(live, 10)]  # its writer gone, it is stale
