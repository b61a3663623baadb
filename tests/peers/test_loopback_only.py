"""loopback_only.cjs, which keeps promptfoo's test on this machine, refuses every way node has to reach out.

A connection is tried to TEST-NET-1 (192.0.2.1, never routed) by each of node's clients: the guard must
refuse it before any packet leaves, and name it in the file the test reads.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parent / "promptfoo" / "loopback_only.cjs"

TRIES = """
const net = require("net"), http = require("http"), https = require("https");
const seen = {};
const note = (name) => (error) => { seen[name] = error.message; };
net.connect({ host: "192.0.2.1", port: 81 }).on("error", note("net"));
http.get({ host: "192.0.2.1", port: 82, path: "/" }).on("error", note("http"));
https.get("https://192.0.2.1:83/").on("error", note("https"));
fetch("http://192.0.2.1:84/").catch((error) => note("fetch")(error.cause || error));
net.connect(85, "127.0.0.1.example").on("error", note("named like loopback"));
net.connect(1, "127.0.0.1").on("error", note("loopback"));
setTimeout(() => { console.log(JSON.stringify(seen)); process.exit(0); }, 2000);
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is missing")
def test_every_client_of_node_is_refused_beyond_loopback(tmp_path):
    refused = tmp_path / "refused.txt"
    script = tmp_path / "tries.js"
    script.write_text(TRIES)
    ran = subprocess.run(
        ["node", "--require", str(GUARD), str(script)],
        env={"PATH": "/usr/bin:/bin", "LOCALJUDGE_REFUSED": str(refused)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    for name in ("net", "http", "https", "fetch", "named like loopback"):
        assert seen.get(name, "").startswith("refused:"), (name, seen)
    assert not seen["loopback"].startswith("refused:")  # loopback is let through (nothing listens on port 1)
    ports = sorted(line.rpartition(":")[2] for line in refused.read_text().split())
    assert ports == ["81", "82", "83", "84", "85"]
