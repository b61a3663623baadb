"""`localjudge serve` started as a user starts it: a process on a free port of 127.0.0.1, with a key."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import httpx
import pytest

KEY = "test-key-0123"


def start_serve(folder, *options: str):
    """`localjudge serve` (the tiny model unless ``--model``), as a process on a free port: (process, base URL, log path)."""
    pytest.importorskip("uvicorn")
    from support.process_helpers import die_with_parent

    log = folder / "serve.log"
    env = {**os.environ, "LOCALJUDGE_SERVER_KEY": KEY}
    command = [sys.executable, "-m", "localjudge", "serve", "--port", "0", *options]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=die_with_parent)
    deadline, base = time.monotonic() + 120, None
    while time.monotonic() < deadline:  # --port 0: the server says which port it got
        assert process.poll() is None, log.read_text()
        found = re.search(r"serving \S+ on (http://127\.0\.0\.1:\d+)/v1", log.read_text())
        if found:
            base = found.group(1)
            break
        time.sleep(0.1)
    assert base is not None, log.read_text()
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.25)
    return process, base, log
