"""``localjudge doctor``: exit 0 when the judge runs here, 1 with a reason when it does not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from localjudge import _cpu as cpu
from localjudge._cli.commands import doctor


def _doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "localjudge._cli", "doctor", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.model
@pytest.mark.usefixtures("tiny_gguf")
def test_doctor_reports_ready_with_versions_workaround_and_smoke_decode():
    process = _doctor()
    assert process.returncode == 0, process.stdout + process.stderr
    out = process.stdout
    assert "[ok  ] llama-cpp-python: 0.3.36" in out
    assert "sha256 matches the card" in out
    assert "amx workaround: on" in out
    assert "[ok  ] smoke decode: loaded in" in out
    assert out.rstrip().endswith("ready")


def test_doctor_fails_with_the_reason_for_a_broken_model(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file at all")
    process = _doctor("--model", str(broken))
    assert process.returncode == 1
    assert "[FAIL] smoke decode" in process.stdout and str(broken) in process.stdout
    assert process.stdout.rstrip().endswith("not ready")


def test_a_native_crash_is_named():
    assert "SIGSEGV" in doctor._describe_failure(-signal.SIGSEGV, "")
    assert doctor._describe_failure(1, "Traceback...\nModelLoadError: bad file\n") == "ModelLoadError: bad file"


def test_cpu_features_come_from_the_kernel():
    features = cpu.cpu_features()
    assert isinstance(features, list) and all(isinstance(f, str) for f in features)


def test_the_model_check_hashes_the_file_even_when_its_stamp_looks_current(tmp_path, monkeypatch):
    import dataclasses
    import hashlib
    import os

    from localjudge._clients import resolve as models

    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"\x00" * 4096)
    card = dataclasses.replace(
        models.find_card("default"), file="m.gguf", sha256=hashlib.sha256(model.read_bytes()).hexdigest()
    )
    monkeypatch.setattr(models.ModelCard, "path", property(lambda self: model))
    monkeypatch.setattr(models, "find_card", lambda name: card)
    assert models.verify_file(model, card.sha256)  # writes the stamp
    stat = model.stat()
    with model.open("r+b") as handle:  # change a byte, then put the mtime back
        handle.seek(100)
        handle.write(b"\x01")
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert models.verify_file(model, card.sha256)  # a load trusts the stamp...
    first = next(doctor._model_checks("default"))  # ...the doctor does not
    assert first.status == "fail" and "DOES NOT match" in first.detail


@pytest.mark.server
@pytest.mark.model
def test_doctor_checks_a_model_on_a_server_with_one_short_request(llama_server):
    process = _doctor("--model", "openai:gemma-3-270m", "--base-url", llama_server.base_url)
    assert process.returncode == 0, process.stdout + process.stderr
    assert "[ok  ] smoke decode: loaded in" in process.stdout
    assert "OpenAICompatibleClient" in process.stdout


def test_the_model_check_removes_the_part_a_killed_fetch_left(tmp_path, monkeypatch):
    import itertools

    from localjudge._clients import resolve as models

    stale = tmp_path / ".m.gguf.dead.part"
    stale.write_bytes(b"z" * 99)
    os.utime(stale, (1, 1))
    monkeypatch.setattr(models.ModelCard, "path", property(lambda self: tmp_path / "m.gguf"))
    checks = list(itertools.islice(doctor._model_checks("default"), 2))  # before the smoke decode
    assert [check.status for check in checks] == ["info", "info"] and not stale.exists()
    assert checks[1].detail == f"removed {stale}, left by a fetch that was stopped: 99 bytes freed"
