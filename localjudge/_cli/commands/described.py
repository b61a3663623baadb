"""A judge described for the file beside its results: model, checksum, way, prompt and schema, no secrets.

A results record names its judge by a fingerprint
(:meth:`~localjudge._cli.commands.settings.JudgeSettings.fingerprint`); what
:func:`describe_judge` returns is written once per fingerprint beside the
results (:mod:`localjudge._datasets.judge_file`), so that a results file can
say which model judged it and how, long after the run.

It holds what shapes a verdict and nothing that opens a door: a server is
named by its scheme, host, port and path, never by the user, password,
query or fragment its URL may carry, and no API key, header or other model
option is written. A model file's sha256 is its card's where the spec names
a card (checked when the file was fetched), else the file's own, computed
once per process (``sha256_from`` says which).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlsplit

from ..._specs import parse_spec
from ..._specs.parse import Spec
from .settings import JudgeSettings

__all__ = ["describe_asked", "describe_judge", "describe_model", "localjudge_version", "server_address"]

#: where a checksum comes from
FROM_CARD = "model card"
FROM_FILE = "computed from the file"


def localjudge_version() -> str:
    """The version of the localjudge that judges (the package is imported before any of its modules)."""
    return str(getattr(sys.modules.get(__name__.split(".")[0]), "__version__", "unknown"))


def server_address(url: str) -> str:
    """A server's URL without what may be a secret: no user, password, query or fragment."""
    unreadable = "(an address that could not be read)"
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return unreadable
    if parts.scheme not in ("http", "https") or not host or "@" in parts.path:  # credentials could sit anywhere
        return unreadable
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    where = host + (f":{port}" if port is not None else "")
    return f"{parts.scheme}://{where}{parts.path}" if parts.scheme else where + parts.path


def describe_model(spec_text: str, role: str, base_urls: Iterable[str] = ()) -> list[dict[str, Any]]:
    """What one model spec names, one entry per model (a fallback chain's members each)."""
    spec = parse_spec(spec_text)
    if spec.kind == "chain":
        return [entry for member in spec.members for entry in describe_model(member.text, role, base_urls)]
    entry: dict[str, Any] = {"role": role, "spec": spec.text, "kind": spec.kind}
    if spec.kind == "local":
        entry.update(_local_file(spec))
    elif spec.kind == "server":
        entry["servers"] = [server_address(url) for url in base_urls] or None  # None: the environment's
    return [entry]


def _local_file(spec: Spec) -> dict[str, Any]:
    """A local model's file and its sha256, and where the checksum comes from."""
    from ..._paths import model_identity
    from ..._specs.cards import find_card

    if not spec.names_a_path:
        card = find_card(spec.target)
        if card is not None:
            return {"card": card.name, "file": card.file, "sha256": card.sha256, "sha256_from": FROM_CARD}
    path = Path(spec.target).expanduser()
    found: dict[str, Any] = {"file": path.name, "sha256": None, "sha256_from": None}
    if path.is_file():  # hashed once per process, as the result cache names the model by it too
        found.update(sha256=model_identity(path), sha256_from=FROM_FILE)
    elif path.is_dir():
        found["sha256_from"] = "none: a directory of files"
    return found


def describe_asked(evaluator: Any, shape: tuple[bool, bool], *, pair: bool) -> dict[str, Any]:
    """How rows of one shape (inputs, a reference) were asked: the way, the prompt template as sent, the schema."""
    from ..._judges.ensemble import EnsembleEvaluator
    from ..._judges.likelihood import LikelihoodPair

    members = evaluator.members if isinstance(evaluator, EnsembleEvaluator) else [evaluator]
    first = members[0]
    way = getattr(first, "way", None)
    core = getattr(first, "core", None)
    given = " and ".join(("inputs",) * shape[0] + ("reference_outputs",) * shape[1]) or "no inputs"
    asked: dict[str, Any] = {
        "rows": f"with {given}",
        "way": None if way is None else {"label": way.label, "described": way.describe(pair=pair)},
        "prompt": None,
        "schema": None,
    }
    if core is None or isinstance(getattr(first, "pair", None), LikelihoodPair):
        asked["prompt_note"] = "no question is asked: the replies' likelihood decides"
        return asked
    trajectory = getattr(first, "trajectory", None)
    prompt = core.prompt
    if trajectory is not None and trajectory.own_prompt:
        from ..._judges.trajectory import trajectory_prompt

        prompt = trajectory_prompt(has_inputs=shape[0], has_reference=shape[1])
    if isinstance(prompt, str):
        asked["prompt"] = prompt
    else:
        asked["prompt_note"] = f"a {type(prompt).__name__} prompt, not a template text"
    asked["schema"] = core.schema.json_schema
    if core.system is not None:
        asked["system"] = core.system
    return asked


def describe_judge(settings: JudgeSettings, evaluators: Mapping[tuple[bool, bool], Any]) -> dict[str, Any]:
    """The judge ``settings`` describe, as ``evaluators`` (one per shape of row) ask it: JSON-ready, no secrets."""
    models = describe_model(settings.model_spec, "judge", settings.base_urls)
    for spec in settings.ensemble_specs:
        models += describe_model(spec, "ensemble member", settings.base_urls)
    for spec in settings.fallbacks:
        models += describe_model(spec, "fallback", settings.base_urls)
    asked = [describe_asked(evaluators[shape], shape, pair=settings.pairwise) for shape in sorted(evaluators)]
    options: dict[str, Optional[Any]] = settings.way_of_judging()
    if options.get("few_shot") is not None:
        options["few_shot"] = Path(str(options["few_shot"])).name  # the file's name; its content is in the fingerprint
    return {
        "localjudge": localjudge_version(),
        "models": models,
        "asked": asked,
        "options": options,
    }
