"""``localjudge serve``: any judge behind an OpenAI-compatible HTTP API, with the in-process guarantees.

Tools that speak OpenAI's API (the openai SDK, OpenEvals, promptfoo, DeepEval)
reach a local judge through it. Unlike servers that accept a schema and may
ignore it, every JSON answer is decoded under the schema's grammar and
checked here again: the reply is schema-valid JSON, or an error in OpenAI's
shape that says what went wrong (with the model's raw text when it wrote
some). Requests run in worker threads, so a local model with ``parallel``
sequences decodes concurrent requests side by side; beyond that they queue.

Hostile or careless clients are bounded: a client that hangs up cancels
its generation at the next decode step, a connection whose headers have not
arrived within ``Limits.header_seconds`` is closed (slow clients do not hold
slots, and ``/health`` keeps answering), requests past
``Limits.max_in_flight`` get a 503 at once, and a SIGTERM lets what is in
flight finish within the grace period and answers the rest with a 503, all in
OpenAI's shape.

One module per job: :mod:`.validation` (what a request may ask, what an
answer must be), :mod:`.api_errors` (what an error looks like),
:mod:`.limits` (the bounds and the requests in flight), :mod:`.app` (the
Starlette app and its routes) and :mod:`.running` (uvicorn, the header
deadline and the stop).
"""

from __future__ import annotations

from .api_errors import ApiError, error_body
from .app import create_app
from .limits import InFlight, Limits
from .running import run
from .validation import check_request

__all__ = ["ApiError", "InFlight", "Limits", "check_request", "create_app", "error_body", "run"]
