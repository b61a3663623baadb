"""``localjudge doctor``: what this machine has, and whether the judge runs on it.

The smoke decode runs in a child process: a native crash (the AMX repacking
segfault some llama.cpp builds hit) must be reported, not take the doctor down.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..._cpu import ThreadGovernor, cpu_features
from ..._specs import Spec, engine_named, parse_spec
from ..._specs.model_files import sweep_stale_parts
from ...errors import LocalJudgeError

__all__ = ["Check", "run_checks"]

SMOKE_TIMEOUT_S = 180
# hf: on a GGUF converts it on first load: minutes for a small model, more for a large one
CONVERSION_TIMEOUT_S = 1800

_SMOKE = """
import json, sys, time
from localjudge._clients.resolve import resolve_model
from localjudge.types import SupportsRuntimeInfo, SupportsSmokeDecode, offers
started = time.perf_counter()
client = resolve_model(sys.argv[1], base_url=sys.argv[2] or None)
loaded = time.perf_counter()
if offers(client, SupportsSmokeDecode):
    smoke = client.smoke_decode()
else:  # a server, or a chain: one short request
    response = client.chat.completions.create(messages=[{"role": "user", "content": "Say OK."}], max_tokens=1)
    smoke = {"text": response.choices[0].message.content, "seconds": time.perf_counter() - loaded}
info = client.runtime_info() if offers(client, SupportsRuntimeInfo) else {"client": repr(client)}
print(json.dumps({
    "runtime": info,
    "load_s": round(loaded - started, 2),
    "decode_s": round(smoke["seconds"], 2),
    "text": smoke["text"],
}))
"""


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn | fail | info
    detail: str


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def run_checks(model_spec: str = "default", base_url: str | None = None) -> Iterator[Check]:
    yield Check("python", "info", f"{platform.python_version()} on {platform.machine()} {platform.system()}")
    yield Check("localjudge", "info", _version("localjudge") or "not installed as a package")
    for package, needed in (
        ("llama-cpp-python", True),
        ("outlines-core", True),
        ("numpy", True),
        ("httpx", True),
        ("langchain-core", False),
        ("torch", False),
        ("transformers", False),
        ("outlines", False),
    ):
        version = _version(package)
        if version:
            yield Check(package, "ok", version)
        else:
            yield Check(package, "fail" if needed else "info", "not installed" + ("" if needed else " (optional)"))

    features = cpu_features()
    yield Check(
        "cpu", "info", f"{platform.processor() or platform.machine()}; features: {' '.join(features) or 'unknown'}"
    )
    threads = ThreadGovernor()
    yield Check("decode threads", "info", f"{threads.current} now; {threads.rule} (n_threads= fixes it)")

    yield from _model_checks(model_spec, base_url)


def _model_checks(model_spec: str, base_url: str | None = None) -> Iterator[Check]:
    from ..._clients.resolve import find_card, verify_file

    try:
        spec = parse_spec(model_spec)
    except LocalJudgeError as exc:
        yield Check("model spec", "fail", str(exc))
        return
    transformers = spec.engine == "transformers"
    card = find_card(spec.target) if spec.kind == "local" and not spec.names_a_path else None
    if card is not None:
        if card.is_present():
            good = verify_file(card.path, card.sha256, trust_stamp=False)  # hashed now, whatever the mtime says
            yield Check(
                "model file",
                "ok" if good else "fail",
                f"{card.path} sha256 {'matches' if good else 'DOES NOT match'} the card (hashed now)",
            )
        else:
            yield Check("model file", "info", f"{card.path} not present yet; it is assembled on first use")
        for stale, size in sweep_stale_parts(card.path.parent):
            yield Check(
                "stale download", "info", f"removed {stale}, left by a fetch that was stopped: {size} bytes freed"
            )
    if transformers:
        yield from _conversion_check(card.path if card is not None else Path(spec.target).expanduser())
    yield from _option_checks(spec)
    timeout = CONVERSION_TIMEOUT_S if transformers else SMOKE_TIMEOUT_S
    try:
        result = subprocess.run(
            [sys.executable, "-c", _SMOKE, model_spec, base_url or ""],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        yield Check("smoke decode", "fail", f"no answer within {timeout} s")
        return
    except (OSError, LocalJudgeError) as exc:
        yield Check("smoke decode", "fail", str(exc))
        return
    if result.returncode != 0:
        yield Check("smoke decode", "fail", _describe_failure(result.returncode, result.stderr))
        return
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for key, value in sorted(report.pop("runtime", {}).items()):
        yield Check(key.replace("_", " "), "info", str(value))
    yield Check(
        "smoke decode",
        "ok",
        f"loaded in {report['load_s']} s; one token ({report['text']!r}) in {report['decode_s']} s",
    )


def _option_checks(spec: Spec) -> Iterator[Check]:
    """For each engine the spec names: the options it takes, as flags and as keywords with their defaults."""
    for name in dict.fromkeys(spec.engines):
        engine = engine_named(name)
        flags = [option.flag for option in engine.options if option.flag]
        keywords = [f"{option.name}={option.default!r}" for option in engine.options if not option.flag]
        detail = "; ".join(
            part
            for part in (
                f"flags {' '.join(flags)}" if flags else "",
                f"library keywords {', '.join(keywords)}" if keywords else "",
            )
            if part
        )
        yield Check(f"{name} options", "info", detail or "none")


def _conversion_check(gguf: Path) -> Iterator[Check]:
    """For a GGUF run through transformers: its converted copy, hashed file by file against the manifest."""
    from ..._runtimes import gguf_conversion

    if not gguf.is_file():
        return
    try:
        where, verdict = gguf_conversion.verify(gguf)
    except LocalJudgeError as exc:
        yield Check("converted model", "fail", str(exc))
        return
    if verdict is None:
        yield Check("converted model", "info", "not converted yet; the smoke decode below converts it (minutes)")
    elif verdict:
        yield Check("converted model", "ok", f"{where}: every file matches its manifest (hashed now)")
    else:
        yield Check("converted model", "fail", f"{where} DOES NOT match its manifest; the next load converts again")


def _describe_failure(returncode: int, stderr: str) -> str:
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return f"the model process crashed with {name}; if it is SIGSEGV on a CPU with AMX, see docs/troubleshooting.md"
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"exit code {returncode}"
